/**
 * The CLI's view of a run on stderr: on a terminal, one progress line redrawn in place (step, reward, pass
 * rate, verifier checks/s) with messages printed above it; elsewhere (CI logs, pipes) one plain line per step.
 */
import type { TrainLogParams, TrainProgressParams } from "../protocol/trainer";
import type { TrainingEvents, TrainingPhase, VerifierStats } from "./sessionTypes";

const BAR_WIDTH = 24;

export interface ProgressOptions {
  /** Where to write (default process.stderr). */
  stream?: NodeJS.WriteStream | { write(text: string): boolean; isTTY?: boolean; columns?: number };
  /** Show debug-level trainer logs too. */
  verbose?: boolean;
}

const PHASE_TEXT: Record<TrainingPhase, string> = {
  "preparing-python": "preparing Python",
  mining: "mining the workspace into a dataset",
  "starting-verifier": "starting the verifier",
  "starting-trainer": "starting the trainer",
  training: "training",
  stopping: "stopping: the trainer writes a checkpoint",
};

function fmt(value: number | undefined, digits: number): string {
  return value === undefined || !Number.isFinite(value) ? "–" : value.toFixed(digits);
}

/** One progress line: `step 3/50 [███░░░] reward 0.42 pass 38.0% 12.3 checks/s`. */
export function progressLine(
  p: TrainProgressParams,
  checksPerSecond: number | undefined,
  bar: boolean,
): string {
  const share = p.totalSteps > 0 ? Math.min(1, p.step / p.totalSteps) : 0;
  const filled = Math.round(share * BAR_WIDTH);
  const drawn = bar ? ` [${"█".repeat(filled)}${"░".repeat(BAR_WIDTH - filled)}]` : "";
  const pass = p.metrics.pass_rate;
  const cps = p.metrics.checks_per_second ?? checksPerSecond;
  return (
    `step ${p.step}/${p.totalSteps}${drawn} reward ${fmt(p.metrics.reward_mean, 3)}` +
    ` pass ${pass === undefined ? "–" : `${(100 * pass).toFixed(1)}%`} ${fmt(cps, 1)} checks/s`
  );
}

/** Events that draw the progress on a stream; `finish()` ends the bar's line. */
export function progressReporter(options: ProgressOptions = {}): TrainingEvents & { finish(): void } {
  const stream = options.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  let barShown = false;
  let verifier: VerifierStats | undefined;
  let lastPhaseDetail = "";
  const clear = () => {
    if (barShown) stream.write("\r\x1b[2K");
    barShown = false;
  };
  const say = (text: string) => {
    clear();
    stream.write(text + "\n");
  };
  return {
    onPhase(phase, detail) {
      if (phase === "preparing-python" && detail) {
        // pip's output: on a terminal, the latest line in place; in logs, every line.
        if (tty) {
          clear();
          const width = (stream as { columns?: number }).columns ?? 100;
          stream.write(`  ${detail}`.slice(0, width - 1));
          barShown = true;
        } else if (
          detail !== lastPhaseDetail &&
          /^(\$ |Collecting |Installing |Successfully |ERROR)/.test(detail.trim())
        )
          say(`  ${detail.trim()}`); // In logs, the commands and pip's milestones, not every line.
        lastPhaseDetail = detail;
        return;
      }
      say(`fim-rlvr train: ${PHASE_TEXT[phase]}${detail ? ` (${detail})` : ""}`);
    },
    onProgress(p) {
      const line = progressLine(p, verifier?.checksPerSecond, tty);
      if (tty) {
        clear();
        stream.write(line);
        barShown = true;
      } else stream.write(line + "\n");
    },
    onVerifierStats(s) {
      verifier = s;
    },
    onCheckpoint(c) {
      if (!tty) say(`checkpoint: step ${c.step} in ${c.path}`);
    },
    onLog(l: TrainLogParams) {
      if (l.level === "debug" && !options.verbose) return;
      say(`${l.level === "info" ? "" : `${l.level}: `}${l.message}`);
    },
    onEval(e) {
      const kinds = Object.entries(e.byKind)
        .map(([k, v]) => `${k} ${(100 * v).toFixed(1)}%`)
        .join(", ");
      const stage = `held-out pass@1 ${e.stage === "before" ? "before training" : e.stage === "sft" ? "after SFT" : e.stage === "baseline" ? `of the compute-matched ${e.arm === "rft" ? "expert-iteration" : e.arm === "sft_data" ? "data-matched SFT" : "SFT"} baseline` : "after RL"}`;
      // A percentage of no tasks is no figure: say that nothing was measured (the summary says what to do).
      if (e.tasks === 0) say(`${stage}: not measured, no tasks in the ${e.split} split`);
      else say(`${stage}: ${(100 * e.passAt1).toFixed(1)}% of ${e.tasks} tasks${kinds ? ` (${kinds})` : ""}`);
    },
    finish() {
      if (barShown) stream.write("\n");
      barShown = false;
    },
  };
}
