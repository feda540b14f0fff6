/** The dataset card (README.md of an exported dataset). */
import type { ExportReport } from "./exporter";

export function datasetCard(report: ExportReport): string {
  const kinds = Object.entries(report.holes.kept.byKind);
  const splits = Object.entries(report.holes.kept.bySplit);
  const verification = report.verification
    ? `Every task's own middle was checked by **${report.verification.verifier}**: ${report.verification.kept} kept, ${report.verification.dropped} dropped (reasons in report.json).`
    : "The tasks were not verified at export time (run `fim-rlvr export … --verify` to keep only holes whose own middle verifies).";
  return `# FIM-RLVR dataset: ${report.workspaceName}

Fill-in-the-middle tasks cut out of the tactic proofs of a Lean 4 workspace by \`fim-rlvr export\`.

- Source workspace: \`${report.workspace}\`
- Lean toolchain: ${report.toolchain ?? "not pinned (no lean-toolchain file)"}
- Files: ${report.files.mined} mined, ${report.files.skipped.length} skipped
- Declarations with tactic proofs: ${report.declarations.withTacticProofs}; skipped: ${Object.entries(
    report.declarations.skipped,
  )
    .map(([r, n]) => `${r} ${n}`)
    .join(", ")}
- Split seed: ${report.seed} (splits are by declaration: all holes of one theorem share a split)
- ${verification}

## Tasks per kind and split

![Tasks per kind, by split](summary.svg)

| kind | tasks |
| --- | --- |
${kinds.map(([k, n]) => `| ${k} | ${n} |`).join("\n")}

| split | tasks |
| --- | --- |
${splits.map(([s, n]) => `| ${s} | ${n} |`).join("\n")}

Kinds: \`proof\` (the whole tactic proof), \`steps\` (2–4 consecutive top-level steps), \`block\` (a nested
block: bullet, case, \`have … := by\`, calc step), \`tactic\` (one step).

## Files

- \`tasks.jsonl\`: one hole per line: \`id\`, \`file\`, \`decl\`, \`declKind\`, \`kind\`, \`range\` (LSP range in
  the file: 0-based lines, UTF-16 characters), \`middle\`, \`indent\`, \`imports\`, \`split\`, \`statement\`,
  \`prefix\`/\`suffix\` (the declaration's text around the hole), \`declStart\`, \`variables\`, \`offsets\`.
- \`files.jsonl\`: \`{file, sha256, text}\` per source file (the file text before \`declStart\` is a task's context).
- \`report.json\`: counts, skipped files and declarations with reasons, time taken; \`summary.svg\`: the chart above.
${report.views.length ? report.views.map((v) => `- \`${v}\``).join("\n") + "\n" : ""}
## Loading

\`\`\`python
from datasets import load_dataset

tasks = load_dataset("json", data_files="tasks.jsonl", split="train")
train = tasks.filter(lambda t: t["split"] == "train")
validation = tasks.filter(lambda t: t["split"] == "validation")
\`\`\`

A candidate for a task replaces \`range\` in \`file\`; \`fim-rlvr verify --project <workspace> --file <file>
--hole L:C-L:C --candidate TEXT\` checks it with Lean.
`;
}
