/**
 * The dataset card (README.md of an exported dataset): YAML front matter that 🤗 `datasets` and the Hub read
 * (cardSchema.ts), then the card. It names no path of the machine that wrote it: the folder may be shared.
 */
import { cardFrontMatter } from "./cardSchema";
import type { ExportReport } from "./exporter";

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

export function datasetCard(report: ExportReport): string {
  const splits = Object.entries(report.holes.kept.bySplit);
  const verification = report.verification
    ? `Every task's own middle was checked by **${report.verification.verifier}**, then the hole with \`skip\` (nothing) in its place (a hole whose proof is complete without its middle is no task), and then with \`sorry\` in its place (a hole that is not a whole tactic sequence leaves an error there): ${report.verification.kept} kept, ${report.verification.dropped} dropped, of which ${report.verification.completeWithoutHole} complete without their middle, ${report.verification.shape.notWhole} not whole tactic sequences and ${report.verification.shape.inconclusive} with no usable answer to the \`sorry\` check (reasons in report.json).${report.verification.statements.checked ? ` Statements without proofs were checked to elaborate with \`sorry\` as their proof instead: ${report.verification.statements.elaborate} of ${report.verification.statements.checked} do.` : ""}`
    : "The tasks were not verified at export time (run `fim-rlvr export … --verify` to keep only holes whose own middle verifies).";
  const o = report.overlap;
  const sp = report.split;
  const h = sp.heldOut;
  const heldOutSets = `Held-out tasks say which set they are in (\`heldOut\`): **${h.instance.validation} validation and ${h.instance.test} test tasks are held-out instances** (declarations never trained on, of families training has) and **${h.family.validation} validation and ${h.family.test} test tasks are held-out families** (families training never sees; ${sp.families.heldOut.validation + sp.families.heldOut.test} of ${sp.families.total} families${sp.families.heldOutNames.length ? `: ${sp.families.heldOutNames.map((n) => `\`${n}\``).join(", ")}` : ""}). A family is known by its file and the named \`namespace\`s and \`section\`s around its declarations (\`file#Namespace.Section\`).`;
  const novelty = `**${o.test.inTraining} of ${o.test.tasks} test middles** (and ${o.validation.inTraining} of ${o.validation.tasks} validation middles) also occur in training (compared normalised: tokens without comments or layout); each held-out task says \`novel: true|false\`.`;
  const withoutReference = report.holes.kept.withoutReference;
  const overlap =
    o.splitMode === "dedup"
      ? `Split \`dedup\`: by declaration, and no training task has the middle of a validation or test task (compared normalised); ${o.trainingDropped} training tasks were dropped for that. ${heldOutSets}`
      : o.splitMode === "family"
        ? `Split \`family\` (the default): whole families and single declarations held out, as LeanDojo's novel-premises and random splits. ${heldOutSets} ${novelty}`
        : `Split \`declaration\`: by declaration. ${heldOutSets} ${novelty} Export with \`--split dedup\` to keep held-out middles out of training.`;
  const oracle = /with oracle /.test(report.verification?.verifier ?? "")
    ? "\n- The simulator judged with the workspace's oracle file as well as its own proofs: the proofs listed there for each declaration (for lean-env, written by its generator and checked with Lean by the hosted real-Lean tests) are what it accepts beyond the workspace's proofs. That is the simulator's model of those statements, not new mathematics."
    : "";
  // Every kind asked for, zeros included: a kind with no training task is seen at once.
  const kindRows = Object.entries(report.holes.kept.byKindAndSplit)
    .map(([k, row]) => {
      const [train, validation, test] = [row.train ?? 0, row.validation ?? 0, row.test ?? 0];
      return `| ${k} | ${train + validation + test} | ${train} | ${validation} | ${test} |`;
    })
    .join("\n");
  const warnings = report.warnings.length
    ? `\n**Warnings:**\n\n${report.warnings.map((w) => `- ${w}`).join("\n")}\n`
    : "";
  return `${cardFrontMatter(report.views, `FIM-RLVR: ${report.workspaceName}`)}
# FIM-RLVR dataset: ${report.workspaceName}

Fill-in-the-middle tasks cut out of the tactic proofs of a Lean 4 workspace by \`fim-rlvr export\`.

- Source workspace: \`${report.workspaceName}\`
- Lean toolchain: ${report.toolchain ?? "not pinned (no lean-toolchain file)"}
- Files: ${report.files.mined} mined, ${report.files.skipped.length} skipped
- Declarations with tactic proofs: ${report.declarations.withTacticProofs}; statements without proofs (\`sorry\`): ${report.declarations.withoutProofs}; skipped: ${Object.entries(
    report.declarations.skipped,
  )
    .map(([r, n]) => `${r} ${n}`)
    .join(", ")}
${report.holes.uncheckableDropped ? `- Holes not offered (their verifier could only reject them): ${report.holes.uncheckableDropped}; ${report.holes.uncheckableReason ?? ""}\n` : ""}- Split seed: ${report.seed} (splits are by declaration: all holes of one theorem share a split)
- ${overlap}${oracle}
- Tasks without a reference (statements whose proof is \`sorry\`, \`"reference": false\`: rewarded by the verifier in RL, never SFT targets): ${withoutReference.total} (${Object.entries(
    withoutReference.bySplit,
  )
    .map(([s, n]) => `${s} ${n}`)
    .join(", ")})
- Context window: ${report.contextChars} characters before each hole, ${Math.ceil(report.contextChars / 4)} after (\`--context-chars\`)
- Holes whose middle is longer than ${report.maxMiddleChars} characters: ${report.holes.tooLongDropped} dropped (\`--max-middle-chars\`)
- ${verification}

## Tasks per kind and split

![Tasks per kind, by split](summary.svg)

| kind | tasks | train | validation | test |
| --- | --- | --- | --- | --- |
${kindRows}
${warnings}
| split | tasks | share | target |
| --- | --- | --- | --- |
${splits.map(([s, n]) => `| ${s} | ${n} | ${percent(report.holes.kept.shares[s] ?? 0)} | ${percent(report.splitFractions[s as keyof typeof report.splitFractions] ?? 0)} |`).join("\n")}

Splits are by declaration (all holes of one theorem share a split, so nothing leaks between them) and
balanced to be as close to the targets as whole declarations allow, overall and per hole kind (so training
keeps every kind the workspace has); the shares above are the achieved ones.

Kinds: \`proof\` (the whole tactic proof), \`steps\` (2–4 consecutive top-level steps), \`block\` (a nested
block: bullet, case, \`have … := by\`, calc step), \`tactic\` (one step).

## Files

- \`tasks.jsonl\`: one hole per line, every line with every field below, in this order (null where a task has no
  value): \`id\`, \`file\`, \`kind\`, \`split\`, \`novel\` (validation and test tasks: whether no training task has
  the same normalised middle; null on training tasks), \`heldOut\` (validation and test tasks: \`"instance"\` when
  training has their family, \`"family"\` when it has none; null on training tasks), \`decl\`, \`context\` (the line of
  \`contexts.jsonl\` holding the declaration's context), \`range\` (LSP range in the file: 0-based lines,
  characters in UTF-16 code units), \`middle\`, \`indent\`, \`prefix\`/\`suffix\` (the declaration's text just
  before and after the hole, bounded: at most ${report.contextChars} and ${Math.ceil(report.contextChars / 4)} characters, cut at
  line breaks; the file text before the hole ends with \`prefix\`, the text after it starts with \`suffix\`),
  \`offsets\` (the hole in the file text, in **UTF-16 code units**, as JavaScript and LSP count) and
  \`offsetsCodePoints\` (the same in **code points**, as Python and Rust count). They differ in files with
  characters outside the Basic Multilingual Plane (e.g. \`𝔸\`): slice Python strings with \`offsetsCodePoints\`.
  \`goal\`: with \`--verify\`, the goal state at the hole as Lean prints it (null where it showed none, and without
  \`--verify\`). \`reference\`: \`false\` on a statement without a proof (its \`middle\` is the workspace's
  \`sorry\`): no answer to imitate; null on every other task.
- \`contexts.jsonl\`: one line per declaration with holes, shared by its tasks: \`context\`, \`file\`, \`decl\`,
  \`declKind\`, \`declStart\`, \`offsets\`/\`offsetsCodePoints\` (the declaration in its file), \`imports\`, \`scope\`
  (the \`namespace\`/\`section\`/\`open\`/\`universe\` commands in effect), \`variables\`, \`statement\` and \`text\`
  (the whole declaration).
- \`files.jsonl\`: \`{file, sha256, text}\` per source file: the full text around every hole, by its offsets.
- \`report.json\`: counts, skipped files and declarations with reasons, the split's overlap counts, time taken;
  \`summary.svg\`: the chart above.
${report.views.length ? report.views.map((v) => `- \`${v}\``).join("\n") + "\n" : ""}
## Loading

With 🤗 \`datasets\`:

\`\`\`python
import os

from datasets import load_dataset

here = os.getcwd()  # this folder; once pushed to the Hub, its id ("you/lean-fim") works the same
tasks = load_dataset(here)["tasks"]  # the card's configs say which file is which
train = tasks.filter(lambda t: t["split"] == "train")
validation = tasks.filter(lambda t: t["split"] == "validation")
contexts = load_dataset(here, "contexts")["contexts"]  # also "files", and each view written with --format
\`\`\`

With the standard library only (run in this folder): a bounded prompt per task from its row and its
declaration's context row, and the full text around each hole from files.jsonl by its offsets. tasks.jsonl
is read line by line; contexts.jsonl holds one line per declaration.

\`\`\`python
import json


def prompt(context, task):
    """The text before the hole: imports, scope, variables, the statement, then the prefix window."""
    header = [f"import {m}" for m in context["imports"]] + context["scope"] + context["variables"]
    statement = "" if context["statement"] in task["prefix"] else context["statement"] + " := by\\n"
    return ("\\n".join(header) + "\\n\\n" if header else "") + statement + task["prefix"]


def code_points(text, utf16_offset):
    """A UTF-16 offset (\`offsets\`) as a code-point offset (what Python indexes strings by)."""
    return len(text.encode("utf-16-le")[: 2 * utf16_offset].decode("utf-16-le"))


with open("contexts.jsonl", encoding="utf-8") as f:
    contexts = [json.loads(line) for line in f]
with open("files.jsonl", encoding="utf-8") as f:
    texts = {r["file"]: r["text"] for r in map(json.loads, f)}
count = 0
with open("tasks.jsonl", encoding="utf-8") as f:
    for task in map(json.loads, f):
        context = contexts[task["context"]]
        bounded = prompt(context, task)  # what a model is shown before the hole
        text = texts[task["file"]]
        start, end = task["offsetsCodePoints"]["start"], task["offsetsCodePoints"]["end"]
        assert (start, end) == tuple(code_points(text, task["offsets"][k]) for k in ("start", "end"))
        before, middle, after = text[:start], text[start:end], text[end:]  # the full file around the hole
        assert middle == task["middle"] and before.endswith(task["prefix"]) and after.startswith(task["suffix"])
        declaration = context["text"][: start - context["offsetsCodePoints"]["start"]]  # all of it before the hole
        assert before.endswith(declaration) and declaration.endswith(task["prefix"])
        assert bounded.endswith(task["prefix"]) and context["statement"] in bounded
        count += 1
print(f"all {count} middles reconstructed")
\`\`\`

A candidate for a task replaces \`range\` in \`file\`; \`fim-rlvr verify --project <workspace> --file <file>
--hole L:C-L:C --candidate TEXT\` checks it with Lean.
`;
}
