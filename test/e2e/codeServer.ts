/**
 * A real VS Code for tests: code-server (VS Code 1.100 on npm) with this repository loaded as an extension
 * under development, opened by Debian's Chromium through playwright-core. Optionally runs mocha suites in
 * the extension host (developmentOptions.extensionTestsPath, what @vscode/test-web does). See
 * ../shared/VSCODE_TESTING.md. Skips (with the reason) where test/e2e/setup.sh has not installed the tools.
 */
/// <reference lib="dom" />
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { REPO } from "../helpers";
import { tempDir } from "../tempDirs";

export const CODE_SERVER =
  process.env.FIM_CODE_SERVER ??
  join(
    process.env.FIM_E2E_CACHE ?? join(homedir(), ".cache", "fim-rlvr-e2e"),
    "node_modules",
    ".bin",
    "code-server",
  );
const CHROMIUM = "/usr/bin/chromium";
export const ARTIFACTS = join(REPO, "test", "e2e", "artifacts");

/** Why the real-VS-Code tests cannot run here, or false. */
export function skipReason(): string | false {
  const missing = [CODE_SERVER, CHROMIUM].filter((p) => !existsSync(p));
  if (missing.length) return `not installed: ${missing.join(", ")} (run test/e2e/setup.sh)`;
  if (!existsSync(join(REPO, "dist", "extension.js"))) return "dist/extension.js is missing (npm run build)";
  return false;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** Readiness: polls the health endpoint a bounded number of times (waiting for a server, not timing a result). */
async function waitForHealth(port: number): Promise<boolean> {
  for (let k = 0; k < 240; k++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return true;
    } catch {
      // Not up yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

export interface Workbench {
  page: Page;
  /** Extension-host console lines (mocha's reporter writes there). */
  hostLog: string[];
  /** Resolves with the exit code the extension tests report (only with `extensionTests`). */
  testsExited: Promise<number>;
  close(): Promise<void>;
}

export interface WorkbenchOptions {
  workspace: string;
  /** User settings.json additions. */
  settings?: Record<string, unknown>;
  /** A bundled mocha entry (exports `run`) to run in the extension host. */
  extensionTests?: string;
  /** Extensions folder (default: a fresh one); for installing a .vsix instead of the development path. */
  extensionsDir?: string;
  /** Load this repository as the extension under development (default true). */
  development?: boolean;
  /** Extra environment for code-server (and so its extension host). */
  env?: Record<string, string>;
}

export async function openWorkbench(options: WorkbenchOptions): Promise<Workbench> {
  const work = tempDir("fim-cs-");
  mkdirSync(join(work, "data", "User"), { recursive: true });
  writeFileSync(
    join(work, "data", "User", "settings.json"),
    JSON.stringify({
      "workbench.startupEditor": "none",
      "workbench.tips.enabled": false,
      "security.workspace.trust.enabled": false,
      "telemetry.telemetryLevel": "off",
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
      "update.mode": "none",
      ...options.settings,
    }),
  );
  const port = await freePort();
  writeFileSync(join(work, "config.yaml"), `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const server: ChildProcess = spawn(
    CODE_SERVER,
    [
      "--config",
      join(work, "config.yaml"),
      "--auth",
      "none",
      "--bind-addr",
      `127.0.0.1:${port}`,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      "--user-data-dir",
      join(work, "data"),
      "--extensions-dir",
      options.extensionsDir ?? join(work, "extensions"),
      options.workspace,
    ],
    { detached: true, stdio: "ignore", env: { ...process.env, ...options.env } },
  );
  const killServer = () => {
    if (server.pid)
      try {
        process.kill(-server.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
  };
  let context: BrowserContext | undefined;
  try {
    if (!(await waitForHealth(port))) throw new Error("code-server did not answer /healthz");
    context = await chromium.launchPersistentContext(mkdtempSync(join(work, "chrome-")), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 860 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    const page = context.pages()[0] ?? (await context.newPage());
    const hostLog: string[] = [];
    let exit: (code: number) => void = () => undefined;
    const testsExited = new Promise<number>((resolve) => (exit = resolve));
    await page.exposeFunction("codeAutomationLog", (_type: string, args: unknown[]) => {
      hostLog.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
    });
    await page.exposeFunction("codeAutomationExit", (code: number) => exit(code));
    const uri = (path: string) => ({ scheme: "vscode-remote", authority: `127.0.0.1:${port}`, path });
    const development = {
      ...(options.development === false ? {} : { extensions: [uri(REPO)] }),
      ...(options.extensionTests ? { extensionTestsPath: uri(options.extensionTests) } : {}),
    };
    // The workbench reads its configuration from a <meta> tag: patch it as soon as the parser inserts it.
    await page.addInitScript((dev) => {
      new MutationObserver((_records, observer) => {
        const el = document.getElementById("vscode-workbench-web-configuration");
        const raw = el?.getAttribute("data-settings");
        if (!el || !raw) return;
        const settings = JSON.parse(raw) as { developmentOptions?: object };
        settings.developmentOptions = { ...(settings.developmentOptions ?? {}), ...dev };
        el.setAttribute("data-settings", JSON.stringify(settings));
        observer.disconnect();
      }).observe(document, { childList: true, subtree: true });
    }, development);
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(options.workspace)}`);
    await page.waitForSelector(".monaco-workbench", { timeout: 60_000 });
    const ctx = context;
    return {
      page,
      hostLog,
      testsExited,
      close: async () => {
        await ctx.close();
        killServer();
      },
    };
  } catch (error) {
    await context?.close();
    killServer();
    throw error;
  }
}

/** Runs a command from the palette; retries while the extension host is still registering commands. */
export async function runCommand(page: Page, title: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press("F1");
    await page.waitForSelector(".quick-input-widget input", { state: "visible", timeout: 15_000 });
    await page.keyboard.type(title);
    const row = page.locator(`.quick-input-widget .monaco-list-row[aria-label*="${title}"]`).first();
    try {
      await row.waitFor({ state: "visible", timeout: 5_000 });
      await page.keyboard.press("Enter");
      return;
    } catch (error) {
      if (attempt >= 12) throw error;
      await page.keyboard.press("Escape");
    }
  }
}

/**
 * The trainer the e2e runs use: the real one when trainer/.venv has it, else the scripted fake (said).
 * `fake`: always the scripted fake (the fast UI test; the real trainer has a UI test of its own).
 */
export function trainerPython(options: { fake?: boolean } = {}): { python: string; real: boolean } {
  const real = join(REPO, "trainer", ".venv", "bin", "python");
  if (
    !options.fake &&
    existsSync(real) &&
    existsSync(join(REPO, "trainer", "fim_rlvr", "__main__.py")) &&
    !process.env.FIM_E2E_FAKE_TRAINER
  )
    return { python: real, real: true };
  if (!options.fake)
    process.stderr.write(
      "VS Code e2e: training runs use the scripted fake trainer (test/fixtures/fake-trainer); the real one is not built\n",
    );
  return { python: join(REPO, "test", "fixtures", "fake-trainer", "python"), real: false };
}
