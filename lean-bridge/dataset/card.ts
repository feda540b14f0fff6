/** The dataset card (README.md of an exported dataset). */
import type { ExportReport } from "./exporter";

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

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
${report.holes.uncheckableDropped ? `- Holes not offered (their verifier could only reject them): ${report.holes.uncheckableDropped}; ${report.holes.uncheckableReason ?? ""}\n` : ""}- Split seed: ${report.seed} (splits are by declaration: all holes of one theorem share a split)
- ${verification}

## Tasks per kind and split

![Tasks per kind, by split](summary.svg)

| kind | tasks |
| --- | --- |
${kinds.map(([k, n]) => `| ${k} | ${n} |`).join("\n")}

| split | tasks | share | target |
| --- | --- | --- | --- |
${splits.map(([s, n]) => `| ${s} | ${n} | ${percent(report.holes.kept.shares[s] ?? 0)} | ${percent(report.splitFractions[s as keyof typeof report.splitFractions] ?? 0)} |`).join("\n")}

Splits are by declaration (all holes of one theorem share a split, so nothing leaks between them) and
balanced to be as close to the targets as whole declarations allow; the shares above are the achieved ones.

Kinds: \`proof\` (the whole tactic proof), \`steps\` (2–4 consecutive top-level steps), \`block\` (a nested
block: bullet, case, \`have … := by\`, calc step), \`tactic\` (one step).

## Files

- \`tasks.jsonl\`: one hole per line: \`id\`, \`file\`, \`decl\`, \`declKind\`, \`kind\`, \`range\` (LSP range in
  the file: 0-based lines, characters in UTF-16 code units), \`middle\`, \`indent\`, \`imports\`, \`split\`,
  \`statement\`, \`prefix\`/\`suffix\` (the declaration's text around the hole), \`declStart\`, \`variables\`,
  \`offsets\` (the hole in the file text, in **UTF-16 code units**, as JavaScript and LSP count) and
  \`offsetsCodePoints\` (the same in **code points**, as Python and Rust count). They differ in files with
  characters outside the Basic Multilingual Plane (e.g. \`𝔸\`): slice Python strings with \`offsetsCodePoints\`.
- \`files.jsonl\`: \`{file, sha256, text}\` per source file (the file text before \`declStart\` is a task's context).
- \`report.json\`: counts, skipped files and declarations with reasons, time taken; \`summary.svg\`: the chart above.
${report.views.length ? report.views.map((v) => `- \`${v}\``).join("\n") + "\n" : ""}
## Loading

With 🤗 \`datasets\`:

\`\`\`python
from datasets import load_dataset

tasks = load_dataset("json", data_files="tasks.jsonl", split="train")
train = tasks.filter(lambda t: t["split"] == "train")
validation = tasks.filter(lambda t: t["split"] == "validation")
\`\`\`

With the standard library only, cutting each hole out of its file's text (run in this folder):

\`\`\`python
import json

with open("files.jsonl", encoding="utf-8") as f:
    texts = {r["file"]: r["text"] for r in map(json.loads, f)}
with open("tasks.jsonl", encoding="utf-8") as f:
    tasks = [json.loads(line) for line in f]


def code_points(text, utf16_offset):
    """A UTF-16 offset (\`offsets\`) as a code-point offset (what Python indexes strings by)."""
    return len(text.encode("utf-16-le")[: 2 * utf16_offset].decode("utf-16-le"))


for task in tasks:
    text = texts[task["file"]]
    start, end = task["offsetsCodePoints"]["start"], task["offsetsCodePoints"]["end"]
    assert (start, end) == tuple(code_points(text, task["offsets"][k]) for k in ("start", "end"))
    prefix, middle, suffix = text[:start], text[start:end], text[end:]
    assert middle == task["middle"] and prefix + middle + suffix == text
print(f"all {len(tasks)} middles reconstructed")
\`\`\`

A candidate for a task replaces \`range\` in \`file\`; \`fim-rlvr verify --project <workspace> --file <file>
--hole L:C-L:C --candidate TEXT\` checks it with Lean.
`;
}
