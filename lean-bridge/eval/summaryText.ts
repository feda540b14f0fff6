/** The evaluation's figures as a few lines of text (stdout of `fim-rlvr eval`, and `--compare`). */
import type { EvalSummary, GroupFigures } from "./records";

const pct = (x: number | null | undefined) => (typeof x === "number" ? `${(100 * x).toFixed(1)}%` : "–");

function passLine(group: GroupFigures, ks: readonly number[]): string {
  return ks
    .map((k) => {
      const f = group.passAtK[String(k)];
      return `pass@${k} ${pct(f?.value)}${f?.excluded ? ` (${f.excluded} task(s) left out)` : ""}`;
    })
    .join(", ");
}

export function summaryText(summary: EvalSummary, dir: string): string {
  const { run } = summary;
  const lines = [
    `${run.model.spec} on ${run.dataset.id} (${run.selection.split}; ${summary.tasks.done}/${summary.tasks.selected} tasks, n=${run.sampling.n}` +
      `${run.repair ? `, repair ${run.repair}` : ""}), verified by ${run.verifier.label}${summary.partial ? " — PARTIAL" : ""}`,
    `  all: ${passLine(summary.overall, summary.ks)}`,
  ];
  for (const [name, group] of Object.entries(summary.byNovelty))
    if (name !== "unknown")
      lines.push(`  ${name}: ${passLine(group, summary.ks)} over ${group.tasks} task(s)`);
  // As the quick start's summary names them, so an outside model's figures line up with a training run's.
  for (const [set, name] of [
    ["instance", "held-out instances"],
    ["family", "held-out families"],
    ["unknown", "held-out, not marked"],
  ] as const) {
    const group = summary.byHeldOut?.[set];
    if (group) lines.push(`  ${name}: ${passLine(group, summary.ks)} over ${group.tasks} task(s)`);
  }
  for (const [kind, group] of Object.entries(summary.byKind))
    lines.push(`  ${kind}: ${passLine(group, summary.ks)}`);
  const o = summary.overall.outcomes;
  lines.push(
    `  outcomes: proved ${o.proved}, sorry ${o.sorry}, error ${o["lean-error"]}, timeout ${o.timeout}, infrastructure ${o.infrastructure} (left out)`,
  );
  if (Object.keys(summary.provedAtTurn).length)
    lines.push(
      `  proved at turn: ${Object.entries(summary.provedAtTurn)
        .map(([t, n]) => `${t}: ${n}`)
        .join(", ")}`,
    );
  const failures = Object.entries(summary.backendErrors);
  if (failures.length)
    lines.push(`  backend failures: ${failures.map(([cause, count]) => `${cause} ${count}`).join(", ")}`);
  if (summary.backendErrors["context-length"])
    lines.push(
      "  context-length: prompts the model's context could not hold (a repair turn's counts as the miss it was); lower --max-prompt-tokens or --max-new-tokens, or serve the model with a longer context",
    );
  lines.push(`  ${dir}/summary.json, ${dir}/report.html`);
  return lines.join("\n");
}
