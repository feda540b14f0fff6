/**
 * The extension in a real VS Code: code-server (VS Code 1.100 on npm) driven by Debian's Chromium through
 * playwright-core, as a user would: command palette → "FIM-RLVR: Export Workspace as Dataset" → default
 * output → the progress notification → the summary toast → "Open Dataset Card". Screenshots land in
 * test/e2e/artifacts/. Skipped, with the reason, where test/e2e/setup.sh has not installed its tools.
 */
/// <reference lib="dom" />
// DOM types: the functions passed to addInitScript, waitForFunction and evaluate run in the browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";
import { EXAMPLE, REPO } from "../helpers";
import { toolSkip } from "../toolSkip";
import { tempDir } from "../tempDirs";

const CODE_SERVER =
  process.env.FIM_CODE_SERVER ??
  join(
    process.env.FIM_E2E_CACHE ?? join(homedir(), ".cache", "fim-rlvr-e2e"),
    "node_modules",
    ".bin",
    "code-server",
  );
const CHROMIUM = "/usr/bin/chromium";
const missing = [CODE_SERVER, CHROMIUM].filter((p) => !existsSync(p));
const skip = missing.length
  ? `not installed: ${missing.join(", ")} (run test/e2e/setup.sh)`
  : existsSync(join(REPO, "dist", "extension.js"))
    ? false
    : "dist/extension.js is missing (npm run build)";
toolSkip("VS Code e2e test", skip);

const ARTIFACTS = join(REPO, "test", "e2e", "artifacts");

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

/** Runs a command from the palette; retries while the extension host is still registering commands. */
async function runCommand(page: Page, title: string): Promise<void> {
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

test(
  "VS Code: Export Workspace as Dataset, from the command palette to the dataset card",
  { skip, timeout: 240_000 },
  async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const work = tempDir("fim-e2e-");
    const ws = join(work, "lean-workspace");
    cpSync(EXAMPLE, ws, { recursive: true });
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
      }),
    );
    const port = await freePort();
    writeFileSync(join(work, "config.yaml"), `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
    const server = spawn(
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
        join(work, "extensions"),
        ws,
      ],
      { detached: true, stdio: "ignore" },
    );
    const udd = mkdtempSync(join(work, "chrome-"));
    const context = await chromium.launchPersistentContext(udd, {
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
    try {
      assert.ok(await waitForHealth(port), "code-server answered /healthz");
      // Load this repository as an extension under development (what @vscode/test-web does).
      // Load this repository as an extension under development (what @vscode/test-web does): the workbench
      // reads its configuration from a <meta> tag, patched here as soon as the parser inserts it.
      await page.addInitScript(
        (dev) => {
          new MutationObserver((_records, observer) => {
            const el = document.getElementById("vscode-workbench-web-configuration");
            const raw = el?.getAttribute("data-settings");
            if (!el || !raw) return;
            const settings = JSON.parse(raw) as { developmentOptions?: object };
            settings.developmentOptions = { ...(settings.developmentOptions ?? {}), extensions: [dev] };
            el.setAttribute("data-settings", JSON.stringify(settings));
            observer.disconnect();
          }).observe(document, { childList: true, subtree: true });
        },
        { scheme: "vscode-remote", authority: `127.0.0.1:${port}`, path: REPO },
      );
      await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
      await page.waitForSelector(".monaco-workbench", { timeout: 60_000 });
      assert.match(await page.title(), /Extension Development Host/, "the extension under test is loaded");
      await page.waitForSelector('.explorer-folders-view .monaco-list-row[aria-label^="FimExamples"]', {
        timeout: 60_000,
      });

      await runCommand(page, "FIM-RLVR: Export Workspace as Dataset");
      await page.waitForSelector(
        '.quick-input-widget .monaco-list-row[aria-label*="Default output folder"]',
        { state: "visible", timeout: 30_000 },
      );
      await page.keyboard.press("Enter");
      // Then whether to verify: without `lake` here, "Do not verify" is the first (default) choice.
      await page.waitForSelector('.quick-input-widget .monaco-list-row[aria-label*="Do not verify"]', {
        state: "visible",
        timeout: 30_000,
      });
      await page.keyboard.press("Enter");
      const toast = page.locator(".notifications-toasts .notification-list-item-message", {
        hasText: /Exported \d+ tasks/,
      });
      await toast.first().waitFor({ timeout: 90_000 });
      const message = await toast.first().innerText();
      // Let the toast finish fading in, and the progress notification close, before taking the picture.
      await page.waitForFunction(
        () => {
          const toasts = [...document.querySelectorAll(".notifications-toasts .notification-toast")];
          return toasts.length === 1 && getComputedStyle(toasts[0]!).opacity === "1";
        },
        null,
        { timeout: 15_000 },
      );
      assert.match(message, /Exported \d+ tasks \(proof \d+, .*\) from 10 files to .*\.fim-rlvr\/dataset/);
      await page.screenshot({ path: join(ARTIFACTS, "export-summary.png") });

      const tasks = readFileSync(join(ws, ".fim-rlvr", "dataset", "tasks.jsonl"), "utf8")
        .trim()
        .split("\n");
      assert.equal(
        String(tasks.length),
        /Exported (\d+) tasks/.exec(message)?.[1],
        "the toast counts what was written",
      );

      await page
        .locator(".notifications-toasts .monaco-button", { hasText: "Open Dataset Card" })
        .first()
        .click();
      await page.waitForSelector('.tab[aria-label*="README.md"]', { timeout: 30_000 });
      // The Markdown preview renders inside nested webview frames: wait until one of them shows the card.
      const rendered = async () => {
        for (const frame of page.frames()) {
          const text = await frame.evaluate(() => document.body?.innerText ?? "").catch(() => "");
          if (text.includes("Tasks per kind and split")) return true;
        }
        return false;
      };
      let shown = false;
      for (let k = 0; k < 60 && !shown; k++) {
        shown = await rendered();
        if (!shown) await page.waitForTimeout(250);
      }
      assert.ok(shown, "the dataset card is rendered in the preview");
      await page.screenshot({ path: join(ARTIFACTS, "dataset-card.png") });
    } catch (error) {
      await page.screenshot({ path: join(ARTIFACTS, "failure.png") }).catch(() => undefined);
      throw error;
    } finally {
      await context.close();
      if (server.pid) {
        try {
          process.kill(-server.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    }
  },
);
