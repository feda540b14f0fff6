/**
 * Runs training from VS Code: plans the run (state/startFlow.ts), starts the host's TrainingSession with a
 * cancellable progress notification, and fans its events out to the hole annotations, the dashboard, the
 * status bar and the output channel. Cancel and "Stop Training" stop cleanly: the trainer checkpoints first.
 */
import { existsSync } from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import * as vscode from "vscode";
import type {
  TrainingEvents,
  TrainingOptions,
  TrainingSession,
  TrainingStart,
} from "../lean-bridge/train/session";
import type { Dashboard } from "./dashboardPanel";
import type { ReportPanels } from "./reportPanel";
import { childProcessRunner } from "./exportProcess";
import { EXPORT_FOR_EDITOR, type EditorExport, type ExportableRun } from "./fill/editorExport";
import { log, outputChannel } from "./log";
import { declarationsOf, fileFs, runFiles } from "./runFolder";
import { verifierLabel, vscodeStartUi } from "./trainingUi";
import { latestCheckpoint } from "../lean-bridge/train/checkpoints";
import { pythonFromExtension } from "./python";
import { findLake, leanToolchainHere, pythonSetting, trainSettings } from "./settings";
import type { RunStatusBar } from "./statusBar";
import type { HoleStore } from "./state/holeStore";
import { restoredRunMessages, runHistory } from "./state/runHistory";
import {
  completedMessage,
  phaseAfterEval,
  phaseAfterInitialize,
  phaseAfterStep,
  phaseFromLog,
  phaseLabel,
  sftPlanned,
  stoppedMessage,
} from "./state/runNarration";
import { IDLE, enablement, reduceRun, type RunEvent, type RunState } from "./state/runState";
import {
  asPreset,
  choosePython,
  planResume,
  planStart,
  type LastRun,
  type StartEnv,
  type StartPlan,
} from "./state/startFlow";

export type StartTraining = (options: TrainingOptions, events: TrainingEvents) => Promise<TrainingStart>;

const LAST_RUN_KEY = "fimRlvr.lastRun";
const SHOW_LOG = "Show Log";
const OPEN_REPORT = "Open Report";
const RESUME = "Resume";

/** What the workspace remembers of its last run (a reload shows it on the dashboard; Resume continues it). */
interface RememberedRun extends LastRun {
  verifier?: "lean" | "simulator" | "kimina";
  algorithm?: string;
  reward?: "binary" | "partial";
  /** How it ended, when it did while this window watched. */
  outcome?: "completed" | "stopped" | "failed";
}

export class TrainingController implements vscode.Disposable {
  private state: RunState = IDLE;
  private session: TrainingSession | undefined;
  /** Aborts the start in progress (mining, preparing Python, starting the verifier or the trainer). */
  private startCancel: AbortController | undefined;
  private hadAnnotations = false;
  private readonly disposables: vscode.Disposable[] = [];
  /** Shows the notification a run's end brings and answers the action chosen (extension-host tests answer it). */
  runEndNotice = (message: string, ...actions: string[]): Thenable<string | undefined> =>
    vscode.window.showInformationMessage(message, ...actions);

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly store: HoleStore,
    private readonly dashboard: Dashboard,
    private readonly statusBar: RunStatusBar,
    private readonly reports: ReportPanels,
    private readonly startTraining: StartTraining,
    private readonly editorExport: EditorExport,
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
    this.showRemembered();
  }

  /** After a window reload the dashboard shows the last run as its files recorded it. */
  private showRemembered(): void {
    const last = this.lastRun;
    if (!last?.verifier || this.dashboard.current.runDir) return;
    const remembered = {
      runDir: last.runDir,
      verifier: verifierLabel(last.verifier),
      algorithm: last.algorithm ?? "",
      reward: last.reward ?? "binary",
      outcome: last.outcome,
    };
    for (const message of restoredRunMessages(remembered, runFiles(last.runDir)))
      this.dashboard.post(message);
  }

  private history(runDir: string) {
    return runHistory(runFiles(runDir));
  }

  private remember(run: RememberedRun): Thenable<void> {
    return this.context.workspaceState.update(LAST_RUN_KEY, run);
  }

  get runState(): RunState {
    return this.state;
  }

  private get lastRun(): RememberedRun | undefined {
    return this.context.workspaceState.get<RememberedRun>(LAST_RUN_KEY);
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
      exporter: childProcessRunner(
        join(__dirname, "exportWorker.js"),
        undefined,
        () => leanToolchainHere().env,
      ),
      signal: startCancel.signal,
      advanced: { trainerRoot, ...plan.options.advanced },
    };
    log.info(plan.summary);
    this.apply({ type: "start-requested" });
    this.store.beginRun();
    const verifier = options.verifier.kind;
    const remembered: RememberedRun = {
      runDir: options.runDir,
      project,
      verifier,
      algorithm: options.config.algorithm ?? "grpo",
      reward: options.reward,
    };
    this.dashboard.post({
      type: "reset",
      runDir: options.runDir,
      verifier: verifierLabel(verifier),
      algorithm: remembered.algorithm!,
      reward: options.reward,
      // A resumed run's recorded steps stay on screen, also when the resumed trainer fails to start.
      ...(options.resume ? { history: this.history(options.runDir) } : {}),
    });
    const withSft = sftPlanned(options.config);
    const sampleContext = { run: basename(options.runDir), verifier: verifierLabel(verifier) };
    let decls = new Map<string, string>();
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "FIM-RLVR", cancellable: true },
      async (progress, token) => {
        let reported = 0;
        let stepText = "";
        /** The phase in words, everywhere at once: notification, status bar, dashboard header. */
        const say = (phase: string) => {
          this.apply({ type: "phase", detail: phase });
          this.dashboard.post({ type: "phase", phase });
          progress.report({ message: stepText ? `${phase} · ${stepText}` : phase });
        };
        const events: TrainingEvents = {
          onPhase: (phase, detail) => {
            log.info(`Phase: ${phase}${detail ? ` (${detail})` : ""}`);
            say(phase === "training" ? phaseAfterInitialize(options.resume) : phaseLabel(phase, detail));
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
            stepText =
              `step ${p.step}/${p.totalSteps}` +
              (reward !== undefined ? ` · reward ${reward.toFixed(2)}` : "") +
              (passRate !== undefined ? ` · pass rate ${(passRate * 100).toFixed(0)}%` : "");
            const phase = phaseAfterStep(p.step, p.totalSteps);
            this.apply({ type: "phase", detail: phase });
            this.dashboard.post({ type: "phase", phase });
            progress.report({ increment, message: phase === "RL" ? stepText : `${phase} · ${stepText}` });
          },
          onSample: (s) => {
            const decl = decls.get(s.taskId);
            this.store.record(s, isAbsolute(s.file) ? s.file : join(project, s.file), {
              ...sampleContext,
              ...(decl !== undefined ? { decl } : {}),
            });
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
          onLog: (l) => {
            log[l.level === "warning" ? "warn" : l.level](`[trainer] ${l.message}`);
            const phase = phaseFromLog(l.message);
            if (phase) say(phase);
          },
          onEval: (e) => {
            log.info(
              `Held-out pass@1 (${e.stage}, ${e.split}, ${e.tasks} tasks): ${(e.passAt1 * 100).toFixed(1)}%`,
            );
            // The dashboard charts the run's own stages; a compute-matched baseline arm is in the log and the report.
            if (e.stage !== "baseline")
              this.dashboard.post({ type: "eval", stage: e.stage, passAt1: e.passAt1, tasks: e.tasks });
            const phase = phaseAfterEval(e.stage, withSft);
            if (phase) say(phase);
          },
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
        decls = declarationsOf(started.session.runDir);
        await this.remember({ ...remembered, runDir: started.session.runDir });
        this.apply({ type: "started", runDir: started.session.runDir });
        // A cancel that came as the start finished would otherwise be lost.
        if (token.isCancellationRequested) void this.stop();
        const outcome = await started.session.done;
        this.session = undefined;
        this.apply({ type: "ended" });
        this.dashboard.post({ type: "status", status: outcome.kind });
        await this.remember({ ...remembered, runDir: outcome.runDir, outcome: outcome.kind });
        const exportable: ExportableRun = { runDir: outcome.runDir, python: options.python, trainerRoot };
        switch (outcome.kind) {
          case "completed": {
            const message = completedMessage(outcome.evals, verifier);
            log.info(`${message} Run folder: ${outcome.runDir}.`);
            void this.offerReport(message, outcome.reportPath, false, exportable);
            break;
          }
          case "stopped":
            log.info(`Training stopped; checkpoint ${outcome.checkpoint ?? "(none)"}.`);
            void this.offerReport(
              stoppedMessage(outcome.checkpoint),
              outcome.reportPath,
              !!outcome.checkpoint,
              outcome.checkpoint ? exportable : undefined,
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

  /** The end-of-run notification; `exportable`: a run with a checkpoint, offered "Export for the editor". */
  private async offerReport(
    message: string,
    reportPath: string,
    resumable = false,
    exportable?: ExportableRun,
  ): Promise<void> {
    const canExport = exportable !== undefined && latestCheckpoint(exportable.runDir, fileFs) !== null;
    const actions = [
      ...(resumable ? [RESUME] : []),
      ...(existsSync(reportPath) ? [OPEN_REPORT] : []),
      ...(canExport ? [EXPORT_FOR_EDITOR] : []),
    ];
    const choice = await this.runEndNotice(message, ...actions);
    if (choice === OPEN_REPORT) this.reports.show(reportPath);
    if (choice === RESUME) await this.resume();
    if (choice === EXPORT_FOR_EDITOR && exportable) await this.editorExport.run(exportable);
  }

  /**
   * The report.html of a run named `run` (a report tab restored after a reload knows only its title): the
   * last run, or a run folder beside it.
   */
  reportOf(run: string): string | undefined {
    const last = this.lastRun;
    if (!last) return undefined;
    const path = join(
      basename(last.runDir) === run ? last.runDir : join(dirname(last.runDir), run),
      "report.html",
    );
    return existsSync(path) ? path : undefined;
  }

  /** "FIM-RLVR: Open Training Report": the last run's report.html in a panel. */
  openReport(): void {
    const last = this.lastRun;
    if (!last) {
      void vscode.window.showInformationMessage(
        "FIM-RLVR has no run in this workspace yet. Start one with “FIM-RLVR: Start FIM-RLVR Training”.",
      );
      return;
    }
    this.reports.show(join(last.runDir, "report.html"));
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
