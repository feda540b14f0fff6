/**
 * A run's report.html (self-contained: inline styles and SVG charts, no script, no external resource) made fit
 * for a webview panel, which shows it alike in desktop VS Code, remote windows and VS Code in a browser (where a
 * `file://` link opens nothing). The content security policy allows no script, no resource from anywhere, and
 * only the report's own styles, each by its SHA-256 (style attributes through 'unsafe-hashes'): a report is
 * rendered from run files, which hold text the model wrote.
 */
import { createHash } from "node:crypto";

/** The page is always drawn light (the report's own colours assume a white page), whatever the theme. */
const PAGE_STYLE = "html,body{background:#fff;color:#222}";

function sha256(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

function decodeAttribute(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

export function reportContentSecurityPolicy(html: string): string {
  const blocks = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
  const attributes = [...html.matchAll(/\sstyle="([^"]*)"/g)].map((m) => decodeAttribute(m[1]!));
  const hashes = [...new Set([PAGE_STYLE, ...blocks, ...attributes].map(sha256))];
  return [
    "default-src 'none'",
    "img-src data:",
    `style-src 'unsafe-hashes' ${hashes.join(" ")}`,
    "script-src 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** The report with its policy first in <head> and the light page style; undefined when it has no <head>. */
export function reportWebviewHtml(html: string): string | undefined {
  const head = /<head[^>]*>/i.exec(html);
  if (!head) return undefined;
  const at = head.index + head[0].length;
  const meta = `<meta http-equiv="Content-Security-Policy" content="${reportContentSecurityPolicy(html)}"><style>${PAGE_STYLE}</style>`;
  return html.slice(0, at) + meta + html.slice(at);
}
