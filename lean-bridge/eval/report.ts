/**
 * EVAL_DIR/report.html, and the side-by-side page of `fim-rlvr eval --compare`: one self-contained page (inline
 * CSS and SVG, no script, nothing fetched) from one or more summaries, one column per evaluation. The verifier is
 * named at the top; an evaluation checked by the simulator says "simulator (not Lean)" there.
 */
import { PALETTE, escapeXml as esc, lineChart, stackedBar } from "../charts/svgCharts";
import { OUTCOMES } from "./outcomes";
import type { EvalSummary, GroupFigures, ResultLine } from "./records";

export interface NamedSummary {
  /** The column's name (the evaluation folder's name). */
  name: string;
  summary: EvalSummary;
}

const OUTCOME_COLOURS: Record<string, string> = {
  proved: "#54a24b",
  sorry: "#eeca3b",
  "lean-error": "#e45756",
  timeout: "#9d755d",
  infrastructure: "#bab0ac",
};

const pct = (x: number | null | undefined) => (typeof x === "number" ? `${(100 * x).toFixed(1)}%` : "–");
const ms = (x: number | null) =>
  x === null ? "–" : `${x >= 1000 ? (x / 1000).toFixed(2) + " s" : Math.round(x) + " ms"}`;

function table(head: string[], rows: string[][]): string {
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`)
    .join("")}</tbody></table>`;
}

function passCell(group: GroupFigures | undefined, k: number): string {
  const figure = group?.passAtK[String(k)];
  if (!figure) return "–";
  const left = figure.excluded
    ? ` <span class="note" title="tasks left out: infrastructure left them fewer than ${k} counted samples">(${figure.excluded} out)</span>`
    : "";
  return `${pct(figure.value)}${left}`;
}

function verifierBanner(runs: readonly NamedSummary[]): string {
  const labels = [...new Set(runs.map((r) => r.summary.run.verifier.label))];
  const simulator = runs.some((r) => r.summary.run.verifier.kind !== "lean");
  const text = labels.map((l) => esc(l)).join(", ");
  return simulator
    ? `<div class="banner sim">Verifier: <b>${text}</b>. Checked by the Lean server simulator, a test double that accepts only the workspace's own proofs and listed alternatives: these figures are not evidence about Lean.</div>`
    : `<div class="banner lean">Verifier: <b>${text}</b></div>`;
}

/**
 * What differs between evaluations set side by side, so their figures are not like for like (empty when they are):
 * the HTML page's banner and the terminal's warning say the same.
 */
export function comparabilityNotes(runs: readonly NamedSummary[]): string[] {
  if (runs.length < 2) return [];
  const notes: string[] = [];
  const distinct = (f: (s: EvalSummary) => string) => new Set(runs.map((r) => f(r.summary))).size > 1;
  if (distinct((s) => s.run.dataset.sha256)) notes.push("different datasets (dataset SHA-256 differs)");
  if (distinct((s) => JSON.stringify(s.run.selection))) notes.push("different splits or hole kinds");
  if (distinct((s) => `${s.run.verifier.kind} ${s.run.verifier.version}`)) notes.push("different verifiers");
  if (distinct((s) => String(s.run.sampling.n))) notes.push("different numbers of samples per task");
  if (distinct((s) => String(s.tasks.selected)))
    notes.push(
      `different numbers of tasks (${runs.map((r) => r.summary.tasks.selected).join(", ")}: --limit)`,
    );
  if (runs.some((r) => r.summary.partial)) notes.push("at least one evaluation is partial");
  return notes;
}

/** Warnings when the columns were not measured on the same thing. */
function comparability(runs: readonly NamedSummary[]): string {
  const notes = comparabilityNotes(runs);
  return notes.length ? `<div class="banner warn">Not like for like: ${esc(notes.join("; "))}.</div>` : "";
}

function identityTable(runs: readonly NamedSummary[]): string {
  const row = (label: string, f: (s: EvalSummary) => string) => [
    esc(label),
    ...runs.map((r) => f(r.summary)),
  ];
  const code = (t: string) => `<code>${esc(t)}</code>`;
  return table(
    ["", ...runs.map((r) => r.name)],
    [
      row("model", (s) => code(s.run.model.spec)),
      row("prompt style", (s) => esc(`${s.run.prompt.style} (asked: ${s.run.prompt.asked})`)),
      row("sampling", (s) =>
        esc(
          `n ${s.run.sampling.n}, temperature ${s.run.sampling.temperature}, top-p ${s.run.sampling.topP}, ≤ ${s.run.sampling.maxNewTokens} tokens`,
        ),
      ),
      row("seed", (s) => String(s.run.seed)),
      row("repair turns", (s) => String(s.run.repair)),
      row("verifier", (s) => esc(s.run.verifier.label)),
      row("dataset", (s) => `${esc(s.run.dataset.id)} ${code(s.run.dataset.sha256.slice(0, 12))}`),
      row("split, kinds", (s) => esc(`${s.run.selection.split}; ${s.run.selection.kinds.join(", ")}`)),
      row(
        "tasks done",
        (s) => `${s.tasks.done} of ${s.tasks.selected}${s.partial ? " <b>(partial)</b>" : ""}`,
      ),
      row("wall time", (s) => `${s.wallSeconds} s`),
    ],
  );
}

function passTable(runs: readonly NamedSummary[]): string {
  const ks = [...new Set(runs.flatMap((r) => r.summary.ks))].sort((a, b) => a - b);
  const groups: [string, (s: EvalSummary) => GroupFigures | undefined][] = [
    ["all tasks", (s) => s.overall],
    ["novel", (s) => s.byNovelty.novel],
    ["memorised", (s) => s.byNovelty.memorised],
    ...[...new Set(runs.flatMap((r) => Object.keys(r.summary.byKind)))]
      .sort()
      .map((kind): [string, (s: EvalSummary) => GroupFigures | undefined] => [
        `kind: ${kind}`,
        (s) => s.byKind[kind],
      ]),
  ];
  const head = [
    "",
    ...runs.flatMap((r) => ks.map((k) => (runs.length > 1 ? `${r.name} pass@${k}` : `pass@${k}`))),
    "tasks",
  ];
  const rows = groups
    .filter(([, f]) => runs.some((r) => f(r.summary)))
    .map(([label, f]) => [
      esc(label),
      ...runs.flatMap((r) => ks.map((k) => (r.summary.ks.includes(k) ? passCell(f(r.summary), k) : "–"))),
      runs.map((r) => String(f(r.summary)?.tasks ?? "–")).join(" / "),
    ]);
  return table(head, rows);
}

function passChart(runs: readonly NamedSummary[]): string {
  const series =
    runs.length > 1
      ? runs.map((r) => ({ name: r.name, group: r.summary.overall, ks: r.summary.ks }))
      : [
          { name: "all", group: runs[0]!.summary.overall, ks: runs[0]!.summary.ks },
          ...Object.entries(runs[0]!.summary.byKind).map(([kind, group]) => ({
            name: kind,
            group,
            ks: runs[0]!.summary.ks,
          })),
        ];
  return lineChart(
    series.map((s) => ({
      name: s.name,
      points: s.ks.flatMap((k) => {
        const v = s.group.passAtK[String(k)]?.value;
        return typeof v === "number" ? [{ x: k, y: v }] : [];
      }),
    })),
    { title: "pass@k", xLabel: "k", yMax: 1 },
  );
}

function outcomeBars(runs: readonly NamedSummary[]): string {
  return runs
    .map((r, k) =>
      stackedBar(
        OUTCOMES.map((o, j) => ({
          // "error", not "Lean error": the verifier may be the simulator.
          name: o === "lean-error" ? "error" : o,
          value: r.summary.overall.outcomes[o],
          colour: OUTCOME_COLOURS[o] ?? PALETTE[(k + j) % PALETTE.length]!,
        })),
        `${r.name}: outcomes of ${r.summary.overall.samples} samples (final turns)`,
      ),
    )
    .join("\n");
}

function costTable(runs: readonly NamedSummary[]): string {
  const row = (label: string, f: (s: EvalSummary) => string) => [
    esc(label),
    ...runs.map((r) => f(r.summary)),
  ];
  return table(
    ["", ...runs.map((r) => r.name)],
    [
      row("model latency p50 / p95", (s) => `${ms(s.latencyMs.p50)} / ${ms(s.latencyMs.p95)}`),
      row("verification p50 / p95", (s) => `${ms(s.verifyMs.p50)} / ${ms(s.verifyMs.p95)}`),
      row("prompt tokens", (s) => (s.tokens.known ? String(s.tokens.prompt) : "not reported")),
      row("completion tokens", (s) => (s.tokens.known ? String(s.tokens.completion) : "not reported")),
      row("verdicts (final turns)", (s) =>
        esc(
          Object.entries(s.verdicts)
            .map(([k, n]) => `${k} ${n}`)
            .join(", "),
        ),
      ),
      row("backend failures (left out)", (s) =>
        esc(
          Object.entries(s.backendErrors)
            .map(([k, n]) => `${k} ${n}`)
            .join(", ") || "none",
        ),
      ),
    ],
  );
}

function repairTable(runs: readonly NamedSummary[]): string {
  const repaired = runs.filter((r) => r.summary.run.repair > 0);
  if (!repaired.length) return "";
  const turns = [...new Set(repaired.flatMap((r) => Object.keys(r.summary.provedAtTurn)))].sort(
    (a, b) => Number(a) - Number(b),
  );
  return `<h2>Turns each proof took</h2>${table(
    ["", ...turns.map((t) => (t === "0" ? "first attempt" : `repair turn ${t}`))],
    repaired.map((r) => [esc(r.name), ...turns.map((t) => String(r.summary.provedAtTurn[t] ?? 0))]),
  )}`;
}

function fileTable(summary: EvalSummary): string {
  const k = summary.ks[0]!;
  const rows = Object.entries(summary.byFile).map(([file, g]) => [
    `<code>${esc(file)}</code>`,
    String(g.tasks),
    String(g.outcomes.proved),
    pct(g.passAtK[String(k)]?.value ?? null),
  ]);
  return table(["file", "tasks", "proved samples", `pass@${k}`], rows);
}

function examples(lines: readonly ResultLine[]): string {
  const pick = (f: (l: ResultLine) => boolean) => lines.filter((l) => l.final && f(l)).slice(0, 3);
  const shown = [
    ...pick((l) => l.outcome === "proved"),
    ...pick((l) => l.outcome !== "proved" && l.outcome !== "infrastructure"),
  ];
  return shown
    .map(
      (l) =>
        `<div class="sample"><div class="meta"><span class="v" style="background:${OUTCOME_COLOURS[l.outcome] ?? "#999"}">${esc(l.outcome)}</span> ${esc(l.kind)} · <code>${esc(l.file)}</code> · sample ${l.sample}${l.turn ? ` · repair turn ${l.turn}` : ""}</div><pre>${esc(l.candidate || "(empty)")}</pre>${
          l.verdict?.diagnostics.length
            ? `<pre class="diag">${esc(
                l.verdict.diagnostics
                  .filter((d) => d.severity === 1)
                  .map((d) => d.message)
                  .join("\n")
                  .slice(0, 600),
              )}</pre>`
            : ""
        }</div>`,
    )
    .join("");
}

/** The page: one evaluation (with per-file figures and examples when `lines` are given) or several side by side. */
export function evalReportHtml(runs: readonly NamedSummary[], lines?: readonly ResultLine[]): string {
  const single = runs.length === 1 ? runs[0]!.summary : undefined;
  const title = single
    ? `FIM-RLVR evaluation ${runs[0]!.name}`
    : `FIM-RLVR evaluations: ${runs.map((r) => r.name).join(" vs ")}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1180px;padding:0 16px;color:#222}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}
.banner{padding:12px 16px;border-radius:6px;font-size:15px;margin:12px 0}.sim{background:#fff3cd;border:2px solid #e0a800}
.lean{background:#e6f4ea;border:2px solid #54a24b}.warn{background:#fde2e1;border:2px solid #e45756}.charts{display:flex;flex-wrap:wrap;gap:12px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 10px;text-align:right}
th{background:#f5f5f5}td:first-child,th:first-child{text-align:left}.note{color:#777;font-size:12px}
.sample{border:1px solid #ddd;border-radius:6px;margin:8px 0}.sample .meta{padding:6px 10px;background:#fafafa;font-size:13px}
.sample pre{margin:0;padding:8px 10px;overflow-x:auto;font-size:13px}.sample pre.diag{color:#a00;border-top:1px dashed #ddd}.v{color:#fff;border-radius:4px;padding:1px 6px}
</style></head><body>
<h1>${esc(title)}</h1>
${verifierBanner(runs)}
${comparability(runs)}
${single?.partial ? `<div class="banner warn">Partial: ${single.tasks.done} of ${single.tasks.selected} tasks were evaluated (run again with <code>--resume</code> to finish).</div>` : ""}
<h2>What was evaluated</h2>${identityTable(runs)}
<h2>Unbiased pass@k</h2>
<p>pass@k = 1 − C(n−c, k)/C(n, k) per task, averaged; n counts the samples Lean (or the simulator) judged, c the proved ones. Infrastructure failures are left out of n, never counted as misses; a task left with fewer than k judged samples is left out of pass@k (shown as "out").</p>
${passTable(runs)}
<div class="charts">${passChart(runs)}</div>
<h2>Outcomes</h2><p>As provers count them: proved, sorry, error (the verifier's errors, unsolved goals, refused by the policy, a crash the candidate caused; <code>lean-error</code> in the files), timeout (the candidate's own), infrastructure (not the model's doing, or a hole whose proof is complete without it: left out).</p>
<div class="charts">${outcomeBars(runs)}</div>
${repairTable(runs)}
<h2>Cost</h2>${costTable(runs)}
${single ? `<h2>Per file</h2>${fileTable(single)}` : ""}
${lines?.length ? `<h2>Examples (final turns)</h2>${examples(lines)}` : ""}
<p style="color:#777;font-size:12px">Rendered ${esc(new Date().toISOString())} from summary.json${runs.length > 1 ? " files" : ""}.</p>
</body></html>
`;
}
