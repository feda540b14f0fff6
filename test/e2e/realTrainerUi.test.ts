/**
 * The palette's training flow with the REAL trainer (trainer/.venv: the embedded tiny model on CPU, the
 * simulator as verifier, a few steps), as a user meets it: Start with the default picks → the phases named in
 * the progress notification → Stop → the toast's "Resume" → the run finishes → "Open Report" shows report.html
 * in a panel → the dashboard tells the run's figures → a window reload brings the dashboard tab back, filled.
 * The fast UI test (trainingUi.test.ts) keeps the scripted fake trainer. Skipped, with the reason, where the
 * tools or the trainer's environment are missing. Screenshots: test/e2e/artifacts/real-*.png.
 */
/// <reference lib="dom" />
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { copyExample, trainingSettings } from "./workspace";
import { ARTIFACTS, openWorkbench, runCommand, skipReason, trainerPython } from "./codeServer";
import { clickToastButton, dashboardFrame, frameText, frameWith, painted, stage, toast } from "./ui";
import { toolSkip } from "../toolSkip";

// Enough steps that Stop lands mid-run (a step takes about a second here), so Resume has steps left to train.
const STEPS = 20;
const tools = skipReason();
const trainer = trainerPython();
const skip = toolSkip(
  "VS Code real-trainer UI test",
  tools || (trainer.real ? false : "the real trainer is not built (trainer/.venv; npm run test:setup)"),
);

test(
  "VS Code UI, real trainer: Start (default picks) → Stop → Resume → completed → Open Report → dashboard → reload",
  { skip, timeout: 1_500_000 },
  async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const workspace = copyExample({
      ...trainingSettings(trainer.python, STEPS),
      // The embedded model on CPU: a short SFT warm start (its phase shows), short candidates, a checkpoint per step.
      "fimRlvr.trainer.config": {
        sft_steps: 2,
        max_new_tokens: 16,
        batch_size: 1,
        eval_limit: 2,
        checkpoint_every: 1,
        // The validation curve samples every held-out hole several times: far too slow for a UI test on CPU.
        validation_every: 0,
      },
    });
    const workbench = await openWorkbench({ workspace });
    const { page } = workbench;
    try {
      await page.waitForSelector('.explorer-folders-view .monaco-list-row[aria-label^="FimExamples"]', {
        timeout: 60_000,
      });
      stage("workbench ready; Start");
      await runCommand(page, "FIM-RLVR: Start FIM-RLVR Training");
      // The default picks: the first algorithm (GRPO), the first model (the embedded tiny model).
      await page
        .locator('.quick-input-widget .monaco-list-row[aria-label*="GRPO"]')
        .first()
        .waitFor({ state: "visible", timeout: 30_000 });
      assert.doesNotMatch(await page.locator(".quick-input-widget").innerText(), /\(setting\)/);
      await page.keyboard.press("Enter");
      await page
        .locator('.quick-input-widget .monaco-list-row[aria-label*="Embedded tiny model"]')
        .first()
        .waitFor({ state: "visible", timeout: 30_000 });
      await page.keyboard.press("Enter");

      stage("picks made");
      // Before the first step the notification names the phase (evaluation, SFT), never the trainer's version.
      await toast(page, /evaluating held-out holes|SFT/).waitFor({ state: "visible", timeout: 300_000 });
      const statusBar = page.locator(".statusbar-item", { hasText: /FIM-RLVR/ }).first();
      assert.doesNotMatch(await statusBar.innerText(), /starting-trainer|step 0\b/);
      await page
        .locator(".statusbar-item", { hasText: /FIM-RLVR step [1-9]/ })
        .first()
        .waitFor({ timeout: 300_000 });

      stage("first step seen");
      // Stop: the trainer checkpoints; the toast offers Resume, which continues the same run to its end.
      await runCommand(page, "FIM-RLVR: Stop Training");
      const stopped = await clickToastButton(page, /training stopped; checkpoint kept/, "Resume", 180_000);
      const runDir = /checkpoint kept at (.+)[/\\]checkpoints[/\\]step-\d+\./.exec(stopped)?.[1];
      assert.ok(runDir && existsSync(runDir), `the toast names the checkpoint: ${stopped}`);
      const config = JSON.parse(readFileSync(join(runDir, "config.json"), "utf8")) as Record<string, unknown>;
      assert.ok(
        "prompt_style" in config,
        "config.json holds the trainer's own records, which Resume must not send back",
      );

      stage("resumed");
      const completed = await clickToastButton(page, /training completed/, "Open Report", 480_000);
      assert.match(completed, /rewards from the simulator \(not Lean\)/);
      assert.match(
        completed,
        /Held-out pass@1 [\d.]+% before → [\d.]+% after SFT → [\d.]+% after RL \(\d+ tasks?\)/,
      );
      assert.doesNotMatch(
        await page.locator(".notifications-toasts").innerText(),
        /could not start training|unknown TrainConfig key/,
      );
      const metrics = readFileSync(join(runDir, "metrics.jsonl"), "utf8").trim().split("\n");
      assert.equal(JSON.parse(metrics.at(-1)!).step, STEPS, "the resumed run reached its last step");

      stage("completed; report opening");
      // Open Report: report.html in a webview panel (works in a browser-hosted VS Code, unlike file://).
      const report = await frameWith(page, "FIM-RLVR training run", 120, true);
      assert.ok(report, "the report panel shows report.html");
      const reportText = await frameText(report);
      assert.match(reportText, /Verifier: simulator.*\(not Lean\)/, "the report names the verifier");
      assert.match(reportText, /Held-out pass@1/);
      await page.screenshot({ path: join(ARTIFACTS, "real-report.png") });

      stage("report shown");
      // The dashboard: the finished run's figures, the verifier named, held-out pass@1 at every stage.
      await runCommand(page, "FIM-RLVR: Show Training Dashboard");
      // The frame whose script drew the tiles (the report's title also says "FIM-RLVR training").
      const dashboard = await dashboardFrame(page);
      assert.ok(dashboard, "the dashboard webview rendered");
      const finished = async (frame: NonNullable<typeof dashboard>) =>
        frame.waitForFunction(
          (steps) => (document.getElementById("tiles")?.innerText ?? "").includes(`${steps}/${steps}`),
          STEPS,
          { timeout: 60_000 },
        );
      await finished(dashboard);
      const header = await dashboard.evaluate(() => document.getElementById("run")?.innerText ?? "");
      assert.match(header, /^completed · grpo · verifier: simulator \(not Lean\) · /);
      assert.match(await dashboard.evaluate(() => document.getElementById("tiles")!.innerText), /after RL/);
      await painted(dashboard);
      await page.screenshot({ path: join(ARTIFACTS, "real-dashboard.png") });

      stage("dashboard checked; reloading");
      // A window reload restores the dashboard tab (WebviewPanelSerializer), filled from the run's files.
      await runCommand(page, "Developer: Reload Window");
      await page.waitForSelector(".monaco-workbench", { timeout: 60_000 });
      const restored = await dashboardFrame(page, 480);
      assert.ok(restored, "the dashboard tab came back after the reload");
      // Filled from the run's files: the final step count, the verifier named, held-out pass@1 after RL.
      await finished(restored).catch(async (error: unknown) => {
        throw new Error(
          `the restored dashboard did not show ${STEPS}/${STEPS}: ${await frameText(restored)}`,
          {
            cause: error,
          },
        );
      });
      assert.match(
        await restored.evaluate(() => document.getElementById("run")?.innerText ?? ""),
        /^completed · grpo · verifier: simulator \(not Lean\) · /,
      );
      assert.match(await restored.evaluate(() => document.getElementById("tiles")!.innerText), /after RL/);
      // The report tab comes back too, filled (no empty editor group left behind).
      await page
        .locator(".tabs-container .tab", { hasText: "FIM-RLVR Report:" })
        .first()
        .waitFor({ timeout: 60_000 });
      assert.ok(
        await frameWith(page, "FIM-RLVR training run", 120, true),
        "the report tab shows the report again",
      );
      await painted(restored);
      await page.screenshot({ path: join(ARTIFACTS, "real-dashboard-after-reload.png") });
    } catch (error) {
      await page.screenshot({ path: join(ARTIFACTS, "real-failure.png") }).catch(() => undefined);
      throw error;
    } finally {
      await workbench.close();
    }
  },
);
