/**
 * The training run's state machine, which decides what the status bar says and which commands are enabled
 * (through context keys in package.json's `enablement` clauses): no Stop without a run, no Start while one
 * runs, Resume only with a run that has a checkpoint.
 */
export type RunState =
  | { phase: "idle" }
  | { phase: "starting"; detail: string }
  | {
      phase: "running";
      runDir: string;
      step: number;
      totalSteps: number;
      lastReward: number | null;
      /** What the trainer is doing, in words (runNarration.ts): "SFT step 50/60", "RL", ... */
      detail: string;
    }
  | { phase: "stopping"; runDir: string };

export type RunEvent =
  | { type: "start-requested" }
  | { type: "phase"; detail: string }
  | { type: "started"; runDir: string; totalSteps?: number }
  | { type: "progress"; step: number; totalSteps: number; reward: number | null }
  | { type: "stop-requested" }
  | { type: "ended" };

export const IDLE: RunState = { phase: "idle" };

export function reduceRun(state: RunState, event: RunEvent): RunState {
  switch (event.type) {
    case "start-requested":
      return state.phase === "idle" ? { phase: "starting", detail: "preparing" } : state;
    case "phase":
      if (state.phase === "starting") return { phase: "starting", detail: event.detail };
      return state.phase === "running" ? { ...state, detail: event.detail } : state;
    case "started":
      return state.phase === "starting"
        ? {
            phase: "running",
            runDir: event.runDir,
            step: 0,
            totalSteps: event.totalSteps ?? 0,
            lastReward: null,
            detail: state.detail,
          }
        : state;
    case "progress":
      return state.phase === "running"
        ? {
            ...state,
            step: event.step,
            totalSteps: event.totalSteps,
            lastReward: event.reward ?? state.lastReward,
          }
        : state;
    case "stop-requested":
      return state.phase === "running" ? { phase: "stopping", runDir: state.runDir } : state;
    case "ended":
      return IDLE;
  }
}

/**
 * The context keys the commands' `enablement` clauses read (package.json). Start stays enabled in an
 * untrusted workspace so that it can say why it cannot run and offer to manage trust.
 */
export interface Enablement {
  "fimRlvr.busy": boolean;
  "fimRlvr.canStop": boolean;
  "fimRlvr.canResume": boolean;
  "fimRlvr.hasAnnotations": boolean;
}

export interface EnablementInputs {
  state: RunState;
  /** A run folder with a checkpoint to resume from. */
  resumableRun: string | undefined;
  annotatedHoles: number;
}

export function enablement({ state, resumableRun, annotatedHoles }: EnablementInputs): Enablement {
  const idle = state.phase === "idle";
  return {
    "fimRlvr.busy": !idle,
    "fimRlvr.canStop": state.phase === "running" || state.phase === "starting",
    "fimRlvr.canResume": idle && resumableRun !== undefined,
    "fimRlvr.hasAnnotations": annotatedHoles > 0,
  };
}

/** The status bar's text (with codicons) and tooltip. */
export function statusText(state: RunState): { text: string; tooltip: string } {
  switch (state.phase) {
    case "idle":
      return {
        text: "$(beaker) FIM-RLVR",
        tooltip: "No training run. Click to open the training dashboard.",
      };
    case "starting":
      return {
        text: `$(sync~spin) FIM-RLVR: ${state.detail}`,
        tooltip: "Starting training. Click for the dashboard.",
      };
    case "running": {
      const total = state.totalSteps > 0 ? `/${state.totalSteps}` : "";
      const reward = state.lastReward === null ? "" : ` · reward ${state.lastReward.toFixed(2)}`;
      const steps = `step ${state.step}${total}${reward}`;
      const tooltip = `Training in ${state.runDir}. Click for the dashboard.`;
      // Before the first RL step (evaluation, the SFT warm start) and during the final evaluation, "step 0"
      // would say nothing: name what runs.
      if (state.detail && state.detail !== "RL")
        return {
          text: `$(sync~spin) FIM-RLVR: ${state.detail}${state.step > 0 ? ` · ${steps}` : ""}`,
          tooltip,
        };
      return { text: `$(pulse) FIM-RLVR ${steps}`, tooltip };
    }
    case "stopping":
      return { text: "$(debug-stop) FIM-RLVR: stopping", tooltip: "Writing a checkpoint, then stopping." };
  }
}
