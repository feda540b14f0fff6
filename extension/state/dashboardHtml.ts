/**
 * The dashboard webview's document. Pure, so the content security policy is unit-tested: scripts only by
 * nonce, styles, images and fonts only from the extension (`cspSource`), nothing inline, no CDN.
 */
export interface DashboardHtmlInputs {
  /** `webview.cspSource`. */
  cspSource: string;
  nonce: string;
  /** Webview URIs of the bundled files. */
  uplotCss: string;
  dashboardCss: string;
  script: string;
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join("; ");
}

export function dashboardHtml({
  cspSource,
  nonce,
  uplotCss,
  dashboardCss,
  script,
}: DashboardHtmlInputs): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(cspSource, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${uplotCss}">
<link rel="stylesheet" href="${dashboardCss}">
<title>FIM-RLVR Training</title>
</head>
<body>
<header>
  <h1>FIM-RLVR training</h1>
  <p id="run" class="muted">No run yet. Start one with “FIM-RLVR: Start FIM-RLVR Training”.</p>
</header>
<section id="tiles" class="tiles" aria-label="Latest figures"></section>
<section class="charts">
  <figure><figcaption>Reward and pass rate</figcaption><div id="chart-reward" class="chart"></div></figure>
  <figure><figcaption>Pass rate by hole kind</figcaption><div id="chart-kinds" class="chart"></div></figure>
  <figure><figcaption>Loss</figcaption><div id="chart-loss" class="chart"></div></figure>
  <figure><figcaption>KL to the reference</figcaption><div id="chart-kl" class="chart"></div></figure>
  <figure><figcaption>Clip fraction</figcaption><div id="chart-clip" class="chart"></div></figure>
  <figure><figcaption>Throughput: tokens/s and verifier checks/s</figcaption><div id="chart-speed" class="chart"></div></figure>
</section>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
}
