/**
 * Fill Hole with Model through the browser, as a user meets it: a `sorry` typed into the example workspace (its
 * model an OpenAI-compatible stub on 127.0.0.1, the simulator as verifier) → the palette's "Fill Hole with Model"
 * → the quick pick with the proved candidate first and the diff beside the document (screenshot
 * test/e2e/artifacts/fill-quick-pick.png) → Enter inserts it (fill-inserted.png). Skipped, with the reason, where
 * the tools are not installed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { EXAMPLE } from "../helpers";
import { startStub } from "../models/openaiStub";
import { toolSkip } from "../toolSkip";
import { ARTIFACTS, openWorkbench, runCommand, skipReason } from "./codeServer";
import { copyExample } from "./workspace";

const skip = toolSkip("VS Code Fill Hole UI test", skipReason());
const THEOREM = "theorem add_le_add_1 ";

test(
  "VS Code UI: Fill Hole with Model shows proved candidates first with a diff, and inserts the chosen one",
  { skip, timeout: 420_000 },
  async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const line =
      readFileSync(join(EXAMPLE, "FimExamples", "Arith.lean"), "utf8")
        .split("\n")
        .findIndex((l) => l.startsWith(THEOREM)) + 2;
    const stub = await startStub({
      model: "tiny-coder",
      answer: (_prompt, index) => (index === 0 ? "omega" : "exact fim_rlvr_wrong"),
    });
    const workbench = await openWorkbench({
      workspace: copyExample({
        // The simulator takes the workspace's own proofs from disk: the typed `sorry` must stay unsaved.
        "files.autoSave": "off",
        "fimRlvr.verifier.mode": "simulator",
        "fimRlvr.fill.model": "endpoint",
        "fimRlvr.fill.endpoint.baseUrl": stub.baseUrl,
        "fimRlvr.fill.endpoint.model": "tiny-coder",
        "fimRlvr.fill.promptStyle": "fim",
        "fimRlvr.fill.fimFamily": "qwen",
        "fimRlvr.fill.samples": 2,
      }),
    });
    const { page } = workbench;
    try {
      await page.waitForSelector('.explorer-folders-view .monaco-list-row[aria-label^="FimExamples"]', {
        timeout: 60_000,
      });
      await runCommand(page, "Go to File");
      await page.keyboard.type("Arith.lean");
      await page
        .locator('.quick-input-widget .monaco-list-row[aria-label*="Arith.lean"]')
        .first()
        .waitFor({ timeout: 30_000 });
      await page.keyboard.press("Enter");
      await page
        .locator(".monaco-editor .view-lines", { hasText: "add_le_add_1" })
        .first()
        .waitFor({ timeout: 30_000 });
      await runCommand(page, "Go to Line/Column");
      await page.keyboard.type(String(line));
      await page.keyboard.press("Enter");
      // Replace the line's `omega` with `sorry` (End, then Shift+Home selects the text after the indentation).
      await page.keyboard.press("End");
      await page.keyboard.press("Shift+Home");
      await page.keyboard.type("sorry");
      await page
        .locator(".monaco-editor .view-line", { hasText: /^\s*sorry\s*$/ })
        .first()
        .waitFor({ timeout: 10_000 });

      await runCommand(page, "FIM-RLVR: Fill Hole with Model");
      const widget = page.locator(".quick-input-widget");
      await widget
        .locator(".quick-input-title", { hasText: /1 of 2 candidate\(s\) proved/ })
        .waitFor({ timeout: 180_000 });
      assert.match(await widget.innerText(), /simulator[^\n]*\(not Lean\)/);
      const rows = widget.locator(".monaco-list-row");
      assert.match((await rows.first().innerText()) + (await rows.nth(1).innerText()), /proved[\s\S]*omega/);
      await page.locator(".monaco-diff-editor").first().waitFor({ state: "visible", timeout: 30_000 });
      // The diff has painted once its changed line is marked.
      await page
        .locator(".monaco-diff-editor .line-insert, .monaco-diff-editor .char-insert")
        .first()
        .waitFor({ timeout: 30_000 });
      await page.screenshot({ path: join(ARTIFACTS, "fill-quick-pick.png") });
      await page.keyboard.press("Enter");
      // The diff's own editors show the candidate too, so the document is read only once the preview is gone.
      await page
        .locator(".monaco-diff-editor")
        .first()
        .waitFor({ state: "detached", timeout: 30_000 })
        .catch(() => assert.fail("the preview did not close after the candidate was chosen"));
      await page
        .locator(".monaco-editor .view-line", { hasText: /^\s*sorry\s*$/ })
        .first()
        .waitFor({ state: "detached", timeout: 30_000 })
        .catch(() => assert.fail("the typed sorry is still in the document"));
      await page
        .locator(".monaco-editor .view-line", { hasText: /^\s*omega\s*$/ })
        .first()
        .waitFor({ timeout: 30_000 });
      await page.screenshot({ path: join(ARTIFACTS, "fill-inserted.png") });
    } catch (error) {
      await page.screenshot({ path: join(ARTIFACTS, "fill-failure.png") }).catch(() => undefined);
      throw error;
    } finally {
      await workbench.close();
      await stub.close();
    }
  },
);
