/** The terminal's summary of a training run's held-out pass@1: the stages, the compute-matched arms beside RL, the
 * held-out sets and what the verifier and the algorithm each add (`fim-rlvr train`'s last lines). */
import type { TrainEvalParams } from "../protocol/trainer";
import { effects } from "./reportArms";

/** How the terminal names each compute-matched arm. */
const ARM_NAMES = { sft: "SFT", sft_data: "SFT+portfolio (data-matched)", rft: "RFT" } as const;

function percent(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}

/**
 * "held-out pass@1 (test split, 40 tasks, greedy): before 10.0% -> after SFT 45.0% -> after RL 52.5%", with the
 * compute-matched baselines run after RL beside it ("; compute-matched baselines: SFT 47.5%, RFT 50.0%"); then, when the
 * dataset says which held-out task is which, a line per held-out set ("  held-out instances (30 tasks): 0.0% ->
 * 40.0% -> 50.0%; SFT 43.3%"), and when it marks its test tasks novel or memorised, a line per group: only held-out
 * statements and novel holes measure what the model learned. A baseline run names its baseline for its last stage.
 */
export function passAtOneSummary(
  evals: readonly TrainEvalParams[],
  baseline: boolean | string = false,
): string {
  const at = (stage: TrainEvalParams["stage"]) => [...evals].reverse().find((e) => e.stage === stage);
  const arm = (name: string) => [...evals].reverse().find((e) => e.stage === "baseline" && e.arm === name);
  const last =
    baseline === "rft"
      ? "after the expert-iteration baseline"
      : baseline === "sft_data"
        ? "after the data-matched SFT baseline"
        : baseline
          ? "after the SFT baseline"
          : "after RL";
  const stages: [string, TrainEvalParams | undefined][] = [
    ["before", at("before")],
    ["after SFT", at("sft")],
    [last, at("after")],
  ];
  const present = stages.filter((s): s is [string, TrainEvalParams] => s[1] !== undefined);
  const arms = (["sft", "sft_data", "rft"] as const).flatMap((name) => {
    const e = arm(name);
    return e ? [[ARM_NAMES[name], e] as [string, TrainEvalParams]] : [];
  });
  const ref = present[present.length - 1]?.[1] ?? arms[0]?.[1];
  if (!ref) return "held-out pass@1: not measured";
  // Percentages of nothing say nothing: a split with no task is named as such, with how to get one.
  if (ref.tasks === 0)
    return `held-out pass@1: no held-out tasks (the dataset's ${ref.split} split is empty), so nothing was measured; export a workspace with more declarations, or train on a dataset whose ${ref.split} split has tasks`;
  const figure = (x: number | undefined) => (x === undefined ? "–" : percent(x));
  const beside = (score: (e: TrainEvalParams) => number | undefined) =>
    arms.length
      ? `; compute-matched baseline${arms.length > 1 ? "s" : ""}: ${arms.map(([name, e]) => `${name} ${figure(score(e))}`).join(", ")}`
      : "";
  const lines = [
    `held-out pass@1 (${ref.split} split, ${ref.tasks} tasks, greedy): ${present.map(([label, e]) => `${label} ${percent(e.passAt1)}`).join(" -> ")}` +
      beside((e) => e.passAt1),
  ];
  const all = [...present.map(([, e]) => e), ...arms.map(([, e]) => e)];
  for (const [set, name] of [
    ["instance", "held-out instances"],
    ["family", "held-out families"],
    ["unknown", "held-out, not marked"],
  ] as const) {
    const tasks = all.map((e) => e.byHeldOut?.[set]?.tasks).find((n) => n !== undefined);
    if (tasks === undefined) continue;
    const figures = present.map(([, e]) => figure(e.byHeldOut?.[set]?.passAt1)).join(" -> ");
    lines.push(`  ${name} (${tasks} tasks): ${figures}${beside((e) => e.byHeldOut?.[set]?.passAt1)}`);
  }
  for (const group of ["novel", "memorised", "unknown"] as const) {
    const scores = present.map(([, e]) => e.byNovelty?.[group]);
    const last = scores[scores.length - 1];
    if (!last) continue;
    const figures = scores.map((s) => (s ? percent(s.passAt1) : "–")).join(" -> ");
    lines.push(`  ${group} (${last.tasks} tasks): ${figures}`);
  }
  // With arms beside RL (not a baseline run), the two effects apart (lean-bridge/train/reportArms.ts).
  const rl = baseline ? undefined : at("after");
  if (rl && arms.length) {
    const score = Object.fromEntries(
      (["sft", "sft_data", "rft"] as const).flatMap((name) => {
        const e = arm(name);
        return e ? [[name, e.passAt1]] : [];
      }),
    );
    const { verifier, algorithm } = effects({ ...score, rl: rl.passAt1 });
    if (verifier.length) lines.push(`  what the verifier adds: ${verifier.join("; ")}`);
    if (algorithm.length) lines.push(`  what the algorithm adds: ${algorithm.join("; ")}`);
  }
  return lines.join("\n");
}
