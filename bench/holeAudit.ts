/**
 * Audits the miner on real Lean code: mines every .lean file under each PATH and flags the holes that end
 * (or start) in the middle of a tactic, by a line-continuation audit written apart from the miner's layout
 * rule (lean-bridge/holes/layout.ts), so that the two check each other:
 *   ends-open       the hole's last token needs what follows (`<;>`, `:=`, `=>`, `by`, `with`, `using` …);
 *   same-line       code other than a closing bracket follows the hole on its last line;
 *   indented-next   the next line starts right of the hole's column: it continues the hole's last tactic;
 *   continuing-next the next line starts at the hole's column with a token no tactic starts with (`|`,
 *                   `<;>`, `then`, `with`, `_` …), except the `|` of the next alternative after an
 *                   alternative's body and the `else` after a `then` branch;
 *   open-sequence   a line of the hole ends with a tactic-sequence opener (`=>`, `then`, `else`, `classical`,
 *                   `try` …) and its sequence continues at the hole's column, and the next line after the
 *                   hole is at that column too, so it still belongs to the hole's last tactic.
 * Usage: node --import tsx bench/holeAudit.ts PATH... [--examples N]
 * The repositories audited are fetched by the user; nothing of them is kept in this repository.
 */
import { relative } from "node:path";
import { mineText, type MinedHole } from "../lean-bridge/holes/mine";
import { parseFile } from "../lean-bridge/lean/commands";
import { TokenKind, isCommentKind, tokenText, type TokenStream } from "../lean-bridge/lean/tokens";
import { listLeanFiles, readSource } from "../lean-bridge/dataset/workspace";

const NEEDS_MORE = new Set(
  "<;> <|> := => ↦ <| |> $ , : ← | by with then else using at from fun λ calc do generalizing classical try all_goals any_goals repeat focus".split(
    " ",
  ),
);
const NEVER_STARTS = new Set("| <;> <|> then else with at using from := => ↦ _ , <| |> $ ) ] } ⟩".split(" "));
const CLOSERS = new Set([")", "]", "}", "⟩", "⦄", ","]);
const SEQUENCE_OPENERS = new Set([
  "=>",
  "then",
  "else",
  "classical",
  "try",
  "all_goals",
  "any_goals",
  "repeat",
  "focus",
]);

type Flag = "ends-open" | "same-line" | "indented-next" | "continuing-next" | "open-sequence";

function codeBefore(ts: TokenStream, i: number): number {
  let j = i;
  while (j >= 0 && isCommentKind(ts.kinds[j] ?? 0)) j--;
  return j;
}

function codeAfter(ts: TokenStream, i: number): number {
  let j = i;
  while (j < ts.count && isCommentKind(ts.kinds[j] ?? 0)) j++;
  return j;
}

function lineStartCol(line: string): number {
  return line.length - line.trimStart().length;
}

/** The hole's lines (after the first) that end with a sequence opener followed by a line at `indent`. */
function opensSequenceAtColumn(middle: string, indent: number): boolean {
  const lines = middle.split("\n").map((l) => l.replace(/--.*$/, "").trimEnd());
  let open = false;
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!;
    if (line.trim() === "") continue;
    if (k > 0 && lineStartCol(line) === indent) {
      const first = line.trim();
      if (first.startsWith("|") || first.startsWith("else")) open = false;
      const prev =
        lines
          .slice(0, k)
          .reverse()
          .find((l) => l.trim() !== "") ?? "";
      const word = prev.trim().split(/\s+/).pop() ?? "";
      if (SEQUENCE_OPENERS.has(word) && !(word === "=>" && /\b(fun|λ)\b/.test(prev))) open = true;
    }
  }
  return open;
}

function audit(
  ts: TokenStream,
  text: string,
  hole: MinedHole,
  firstToken: number,
  lastToken: number,
): Flag | undefined {
  const last = tokenText(ts, lastToken);
  if (NEEDS_MORE.has(last) && !(last === "|" && ts.kinds[lastToken] !== TokenKind.Symbol)) return "ends-open";
  const next = codeAfter(ts, lastToken + 1);
  if (next >= ts.count) return undefined;
  const nextText = tokenText(ts, next);
  // The declaration's own clauses end its tactic block wherever they stand.
  if (nextText === "termination_by" || nextText === "decreasing_by" || nextText === "where") return undefined;
  // A closing bracket ends the term the hole sits in, on its line or below it.
  if (CLOSERS.has(nextText)) return undefined;
  if (ts.lines[next] === ts.lines[lastToken]) return "same-line";
  const col = ts.cols[next] ?? 0;
  if (col > hole.indent) return "indented-next";
  if (col < hole.indent) return undefined;
  const before = tokenText(ts, codeBefore(ts, firstToken - 1));
  const alternativeBody = (nextText === "|" && before === "=>") || (nextText === "else" && before === "then");
  if (NEVER_STARTS.has(nextText) && !alternativeBody) return "continuing-next";
  if (!alternativeBody && opensSequenceAtColumn(text.slice(hole.start, hole.end), hole.indent))
    return "open-sequence";
  return undefined;
}

const args = process.argv.slice(2);
const examplesAt = args.indexOf("--examples");
const showExamples = examplesAt >= 0 ? Number(args[examplesAt + 1]) : 5;
// Without --examples, examplesAt + 1 is 0: only skip a value that follows the flag.
const roots = args.filter((a, k) => a !== "--examples" && (examplesAt < 0 || k !== examplesAt + 1));
if (roots.length === 0) {
  process.stderr.write("usage: node --import tsx bench/holeAudit.ts PATH... [--examples N]\n");
  process.exit(2);
}
for (const root of roots) {
  const listed = listLeanFiles(root);
  let bytes = 0;
  let holes = 0;
  const byKind: Record<string, number> = {};
  const flags: Record<string, number> = {};
  const examples: string[] = [];
  let flagged = 0;
  let declarations = 0;
  const skipped: Record<string, number> = {};
  for (const path of listed.files) {
    const read = readSource(root, path, 64 * 1024 * 1024);
    if (read.kind !== "ok") continue;
    const text = read.source.text.replace(/\r\n/g, "\n");
    bytes += Buffer.byteLength(text, "utf8");
    const parsed = parseFile(text);
    const ts = parsed.tokens;
    const mined = mineText(text, parsed);
    declarations += mined.declarations;
    for (const [r, n] of Object.entries(mined.skipped)) skipped[r] = (skipped[r] ?? 0) + n;
    // Token index by start offset, for the holes' first and last tokens.
    const byStart = new Map<number, number>();
    const byEnd = new Map<number, number>();
    for (let i = 0; i < ts.count; i++) {
      byStart.set(ts.starts[i] ?? 0, i);
      byEnd.set(ts.ends[i] ?? 0, i);
    }
    for (const hole of mined.holes) {
      holes++;
      byKind[hole.kind] = (byKind[hole.kind] ?? 0) + 1;
      const flag = audit(ts, text, hole, byStart.get(hole.start) ?? 0, byEnd.get(hole.end) ?? 0);
      if (!flag) continue;
      flagged++;
      flags[flag] = (flags[flag] ?? 0) + 1;
      if (examples.length < showExamples) {
        const after = text
          .slice(hole.end, hole.end + 60)
          .split("\n")
          .slice(0, 2)
          .join("⏎");
        examples.push(
          `    ${flag} ${relative(root, read.source.file) || read.source.file}:${hole.range.start.line + 1} ${hole.kind} ` +
            `${JSON.stringify(hole.middle.length > 80 ? "…" + hole.middle.slice(-80) : hole.middle)} then ${JSON.stringify(after)}`,
        );
      }
    }
  }
  const rate = holes ? flagged / holes : 0;
  process.stdout.write(
    `${root}: ${listed.files.length} files, ${(bytes / 1e6).toFixed(1)} MB, ${declarations} declarations ` +
      `(skipped: ${Object.entries(skipped)
        .map(([r, n]) => `${r} ${n}`)
        .join(", ")})\n` +
      `  holes: ${holes} (${Object.entries(byKind)
        .map(([k, n]) => `${k} ${n}`)
        .join(", ")})\n` +
      `  flagged mid-tactic: ${flagged} = 1 in ${flagged ? Math.round(1 / rate) : "∞"} (${(rate * 100).toFixed(3)}%)` +
      `${
        flagged
          ? ` — ${Object.entries(flags)
              .map(([f, n]) => `${f} ${n}`)
              .join(", ")}`
          : ""
      }\n` +
      examples.join("\n") +
      (examples.length ? "\n" : ""),
  );
}
