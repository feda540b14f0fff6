/** README.md of an imported dataset: where the statements came from, what became of each row, how to use it. */
import { basename } from "node:path";
import { cardFrontMatter, importCardConfigs } from "../dataset/cardSchema";
import type { ImportReport } from "./report";

function table(entries: [string, number][]): string {
  return entries.length ? entries.map(([k, n]) => `| ${k} | ${n} |`).join("\n") : "| (none) | 0 |";
}

export function importCard(report: ImportReport): string {
  const r = report.rows;
  const check = report.verifier
    ? `Each statement was checked with \`sorry\` as its proof by **${report.verifier}**: ${r.kept} elaborate; ` +
      `${r.dropped.doesNotElaborate} do not (Lean's message for each in dropped.jsonl), ${r.dropped.environment} could not load their header, ` +
      `${r.dropped.inconclusive} got no usable answer. Dropped rows are not tasks, so they never count as model failures.`
    : "The statements were **not** checked (`--no-precheck`): some may not elaborate on this toolchain. Import again with a verifier to drop those.";
  const examples = report.droppedExamples
    .slice(0, 5)
    .map((d) => `- row ${d.row} (${d.label}): ${d.message.split("\n")[0]}`)
    .join("\n");
  // The front matter 🤗 datasets reads (one config per file, with its rows' fields), as an export's card has. The
  // card travels with the dataset (to the Hub, to another machine), so it names files and folders, never this
  // machine's paths: those are in report.json.
  return `${cardFrontMatter([], `FIM-RLVR: ${report.datasetId}`, importCardConfigs())}
# FIM-RLVR dataset: ${report.datasetId} (imported statements)

Tasks made by \`fim-rlvr import\` from the statement dataset \`${basename(report.source)}\` (${report.format}).
Each kept row is a Lean file under \`${report.generatedDir}/\` in the project \`${basename(report.project)}\` (where mining
of the project never looks: exporting or training on the project itself is unchanged by this import), whose theorem's
proof is the hole (\`proof\` kind); rows that came with a tactic proof also give the finer holes inside it
(\`steps\`, \`block\`, \`tactic\`). A row without a proof has \`sorry\` there: its task says \`"reference": false\`.

- Lean toolchain: ${report.toolchain ?? "not pinned (no lean-toolchain file)"}
- Rows: ${r.read} read, ${r.malformed} malformed, ${r.duplicates} duplicate statements dropped (kept once), ${r.kept} kept (${r.withProof} with their own proof)
- Headers: ${r.headers} distinct (files with the same header share it: a Lean worker loads it once)
- ${check}
- Split seed: ${report.seed} (by declaration)

| kind | tasks |
| --- | --- |
${table(Object.entries(report.tasks.byKind))}

| split | tasks |
| --- | --- |
${table(Object.entries(report.tasks.bySplit))}
${examples ? `\nFirst dropped rows:\n\n${examples}\n` : ""}
Train on it with \`fim-rlvr train <this folder>\` (the project is named in report.json), or re-verify its tasks with
\`fim-rlvr verify-batch --project <project> --input <this folder> --out verdicts.jsonl\`.
`;
}
