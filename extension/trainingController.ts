/**
 * Runs training from VS Code: plans the run (state/startFlow.ts), starts the host's TrainingSession with a
 * cancellable progress notification, and fans its events out to the hole annotations, the dashboard, the
 * status bar and the output channel. Cancel and "Stop Training" stop cleanly: the trainer checkpoints first.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import * as vscode from "vscode";
import type {
  TrainingEvents,
  TrainingOptions,
  TrainingSession,
  TrainingStart,
} from "../lean-bridge/train/session";
import type { Dashboard } from "./dashboardPanel";
import { childProcessRunner } from "./exportProcess";
import { log, outputChannel } from "./log";
import { latestCheckpoint } from "../lean-bridge/train/checkpoints";
import { pythonFromExtension } from "./python";
import { findLake, pythonSetting, trainSettings } from "./settings";
import type { RunStatusBar } from "./statusBar";
import type { HoleStore } from "./state/holeStore";
import { IDLE, enablement, reduceRun, type RunEvent, type RunState } from "./state/runState";
import {
  asPreset,
  choosePython,
  planResume,
  planStart,
  type LastRun,
  type StartEnv,
  type StartPlan,
  type StartUi,
} from "./state/startFlow";

export type StartTraining = (options: TrainingOptions, events: TrainingEvents) => Promise<TrainingStart>;

const LAST_RUN_KEY = "fimRlvr.lastRun";
const SHOW_LOG = "Show Log";
const OPEN_REPORT = "Open Report";

const fileFs = {
  exists: (path: string) => existsSync(path),
  readText: (path: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
  },
  subfolders: (dir: string) => {
    try {
      return readdirSync(dir).filter((name) => statSync(join(dir, name)).isDirectory());
    } catch {
      return [];
    }
  },
};

function vscodeStartUi(): StartUi {
  return {
    async pick(title, items) {
      const picked = await vscode.window.showQuickPick(items, {
        title,
        matchOnDescription: true,
        matchOnDetail: true,
      });
      return picked?.value;
    },
    async pickFolder(title) {
      const chosen = await vscode.window.showOpenDialog({
        canSelectFolders: true,
        canSelectFiles: false,
        openLabel: title,
      });
      return chosen?.[0]?.fsPath;
    },
    warn: async (message, ...actions) => vscode.window.showWarningMessage(message, ...actions),
    error: async (message, ...actions) => vscode.window.showErrorMessage(message, ...actions),
    openUrl: (url) => void vscode.env.openExternal(vscode.Uri.parse(url)),
    manageTrust: () => void vscode.commands.executeCommand("workbench.trust.manage"),
    log: (message) => log.info(message),
  };
}

export class TrainingController implements vscode.Disposable {
  private state: RunState = IDLE;
  private session: TrainingSession | undefined;
  /** Aborts the start in progress (mining, preparing Python, starting the verifier or the trainer). */
  private startCancel: AbortController | undefined;
  private hadAnnotations = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly store: HoleStore,
    private readonly dashboard: Dashboard,
    private readonly statusBar: RunStatusBar,
    private readonly startTraining: StartTraining,
  ) {
    this.disposables.push(
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.refresh()),
      // Samples arrive by the dozen: only a change between "no annotations" and "some" matters here.
      {
        dispose: store.onDidChange(() => {
          if (store.size > 0 !== this.hadAnnotations) this.refresh();
        }).dispose,
      },
    );
    this.refresh();
  }

  get runState(): RunState {
    return this.state;
  }

  private get lastRun(): LastRun | undefined {
    return this.context.workspaceState.get<LastRun>(LAST_RUN_KEY);
  }

  private apply(event: RunEvent): void {
    this.state = reduceRun(this.state, event);
    this.refresh();
  }

  /** Pushes the context keys of package.json's enablement clauses and the status bar text. */
  refresh(): void {
    this.hadAnnotations = this.store.size > 0;
    const last = this.lastRun;
    const keys = enablement({
      state: this.state,
      resumableRun: last && latestCheckpoint(last.runDir, fileFs) ? last.runDir : undefined,
      annotatedHoles: this.store.size,
    });
    for (const [key, value] of Object.entries(keys))
      void vscode.commands.executeCommand("setContext", key, value);
    this.statusBar.update(this.state, last !== undefined || this.store.size > 0);
  }

  private async env(): Promise<StartEnv> {
    const editor = vscode.window.activeTextEditor;
    const folder = editor
      ? vscode.workspace.getWorkspaceFolder(editor.document.uri)
      : vscode.workspace.workspaceFolders?.[0];
    return {
      activeFile: editor?.document.uri.scheme === "file" ? editor.document.uri.fsPath : undefined,
      workspaceFolders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
      trusted: vscode.workspace.isTrusted,
      fs: fileFs,
      lakeFound: findLake() !== undefined,
      python: choosePython(await pythonFromExtension(folder?.uri), pythonSetting()),
      lastRun: this.lastRun,
      now: new Date(),
      settings: trainSettings(),
    };
  }

  async start(preset?: unknown): Promise<void> {
    if (this.state.phase !== "idle") {
      void vscode.window.showInformationMessage(
        "FIM-RLVR is already training. Stop it first (FIM-RLVR: Stop Training).",
      );
      return;
    }
    await this.run(await planStart(await this.env(), vscodeStartUi(), asPreset(preset)));
  }

  async resume(): Promise<void> {
    if (this.state.phase !== "idle") return;
    await this.run(await planResume(await this.env(), vscodeStartUi()));
  }

  async stop(): Promise<void> {
    const session = this.session;
    if (!session) {
      this.startCancel?.abort();
      return;
    }
    if (this.state.phase === "stopping") return;
    log.info("Stopping: the trainer writes a checkpoint first.");
    this.apply({ type: "stop-requested" });
    this.dashboard.post({ type: "status", status: "stopping" });
    await session.stop();
  }

  private async run(plan: StartPlan): Promise<void> {
    if (plan.kind !== "ready") {
      log.info(`Training not started (${plan.kind === "refused" ? plan.reason : "cancelled"}).`);
      return;
    }
    const { project } = plan;
    // The trainer's Python sources ship inside the extension (trainer/ in the .vsix).
    const trainerRoot = vscode.Uri.joinPath(this.context.extensionUri, "trainer").fsPath;
    const startCancel = new AbortController();
    this.startCancel = startCancel;
    const options: TrainingOptions = {
      ...plan.options,
      // Mining a workspace runs in a child process (dist/exportWorker.js, next to this bundle), as the export
      // command does, so that a large workspace never stalls the extension host.
      exporter: childProcessRunner(join(__dirname, "exportWorker.js")),
      signal: startCancel.signal,
      advanced: { trainerRoot, ...plan.options.advanced },
    };
    log.info(plan.summary);
    this.apply({ type: "start-requested" });
    this.store.beginRun();
    const verifierLabel = options.verifier.kind === "simulator" ? "simulator (not Lean)" : "Lean";
    this.dashboard.post({
      type: "reset",
      runDir: options.runDir,
      verifier: verifierLabel,
      algorithm: options.config.algorithm ?? "grpo",
    });
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "FIM-RLVR", cancellable: true },
      async (progress, token) => {
        let reported = 0;
        const events: TrainingEvents = {
          onPhase: (phase, detail) => {
            log.info(`Phase: ${phase}${detail ? ` (${detail})` : ""}`);
            this.apply({ type: "phase", detail: phase });
            progress.report({ message: `${phase.replace(/-/g, " ")}${detail ? `: ${detail}` : ""}` });
          },
          onProgress: (p) => {
            const reward = p.metrics.reward_mean;
            const passRate = p.metrics.pass_rate;
            this.apply({ type: "progress", step: p.step, totalSteps: p.totalSteps, reward: reward ?? null });
            this.dashboard.post({
              type: "progress",
              step: p.step,
              totalSteps: p.totalSteps,
              metrics: p.metrics,
            });
            const fraction = p.totalSteps > 0 ? Math.min(1, p.step / p.totalSteps) : 0;
            const increment = Math.max(0, fraction * 100 - reported);
            reported += increment;
            progress.report({
              increment,
              message:
                `step ${p.step}/${p.totalSteps}` +
                (reward !== undefined ? ` · reward ${reward.toFixed(2)}` : "") +
                (passRate !== undefined ? ` · pass rate ${(passRate * 100).toFixed(0)}%` : ""),
            });
          },
          onSample: (s) => {
            this.store.record(s, isAbsolute(s.file) ? s.file : join(project, s.file));
            this.dashboard.post({
              type: "sample",
              step: s.step,
              kind: s.kind,
              verdict: s.verdict,
              ...(s.cause ? { cause: s.cause } : {}),
            });
          },
          onCheckpoint: (c) => {
            log.info(`Checkpoint at step ${c.step}: ${c.path}`);
            this.refresh();
          },
          onLog: (l) => log[l.level === "warning" ? "warn" : l.level](`[trainer] ${l.message}`),
          onEval: (e) =>
            log.info(
              `Held-out pass@1 (${e.stage}, ${e.split}, ${e.tasks} tasks): ${(e.passAt1 * 100).toFixed(1)}%`,
            ),
          onVerifierStats: (s) => this.dashboard.post({ type: "verifier", ...s }),
        };
        // Cancel before training starts (while mining, say) abandons the start; once training, it stops the run.
        token.onCancellationRequested(() => void this.stop());
        const started = await this.startTraining(options, events).finally(() => {
          this.startCancel = undefined;
        });
        if (started.kind === "error" && startCancel.signal.aborted) {
          this.apply({ type: "ended" });
          this.dashboard.post({ type: "status", status: "stopped" });
          log.info("Training start cancelled; nothing was trained.");
          return;
        }
        if (started.kind === "error") {
          this.apply({ type: "ended" });
          this.dashboard.post({ type: "status", status: "failed" });
          log.error(`${started.message} ${started.hint}`);
          void this.failure(`FIM-RLVR could not start training: ${started.message} ${started.hint}`);
          return;
        }
        this.session = started.session;
        await this.context.workspaceState.update(LAST_RUN_KEY, {
          runDir: started.session.runDir,
          project,
        } satisfies LastRun);
        this.apply({ type: "started", runDir: started.session.runDir });
        // A cancel that came as the start finished would otherwise be lost.
        if (token.isCancellationRequested) void this.stop();
        const outcome = await started.session.done;
        this.session = undefined;
        this.apply({ type: "ended" });
        this.dashboard.post({ type: "status", status: outcome.kind });
        switch (outcome.kind) {
          case "completed": {
            const before = outcome.evals.find((e) => e.stage === "before");
            const after = outcome.evals.find((e) => e.stage === "after");
            const pass =
              before && after
                ? ` Held-out pass@1 ${(before.passAt1 * 100).toFixed(1)}% → ${(after.passAt1 * 100).toFixed(1)}%.`
                : "";
            log.info(`Training completed in ${outcome.runDir}.${pass}`);
            void this.offerReport(`FIM-RLVR training completed.${pass}`, outcome.reportPath);
            break;
          }
          case "stopped":
            log.info(`Training stopped; checkpoint ${outcome.checkpoint ?? "(none)"}.`);
            void this.offerReport(
              outcome.checkpoint
                ? `FIM-RLVR training stopped; checkpoint kept at ${outcome.checkpoint}. Continue with “FIM-RLVR: Resume Training”.`
                : "FIM-RLVR training stopped before its first checkpoint; nothing to resume.",
              outcome.reportPath,
            );
            break;
          case "failed":
            log.error(`Training failed: ${outcome.message} ${outcome.hint}`);
            void this.failure(`FIM-RLVR training failed: ${outcome.message} ${outcome.hint}`);
            break;
        }
      },
    );
  }

  private async offerReport(message: string, reportPath: string): Promise<void> {
    const actions = existsSync(reportPath) ? [OPEN_REPORT] : [];
    if ((await vscode.window.showInformationMessage(message, ...actions)) === OPEN_REPORT)
      await vscode.env.openExternal(vscode.Uri.file(reportPath));
  }

  private async failure(message: string): Promise<void> {
    if ((await vscode.window.showErrorMessage(message, SHOW_LOG)) === SHOW_LOG) outputChannel().show(true);
  }

  dispose(): void {
    this.startCancel?.abort();
    if (this.session) void this.session.stop();
    for (const d of this.disposables) d.dispose();
  }
}
