import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { lex } from "../../lean-bridge/lean/lexer";
import { indexTokens } from "../../lean-bridge/lean/tokenIndex";
import {
  TokenKind,
  bracketDelta,
  isCommentKind,
  tokenIs,
  type TokenStream,
} from "../../lean-bridge/lean/tokens";

// The index answers in one pass what the parser used to ask token by token; here each answer is checked
// against that token-by-token definition.
function startsLine(ts: TokenStream, i: number): boolean {
  if (ts.lineFirst[i] === 1) return ts.cols[i] === 0;
  for (let j = i - 1; j >= 0 && isCommentKind(ts.kinds[j] ?? 0); j--)
    if (ts.lineFirst[j] === 1) return ts.cols[j] === 0 && ts.kinds[j] !== TokenKind.LineComment;
  return false;
}

function assertIndexMatchesDefinitions(text: string, label: string): void {
  const ts = lex(text);
  const index = indexTokens(ts);
  const depthBefore: number[] = [];
  const lineFirsts: number[] = [];
  const lineStarts: number[] = [];
  const statementEnds: number[] = [];
  let depth = 0;
  for (let i = 0; i < ts.count; i++) {
    depthBefore.push(depth);
    depth += bracketDelta(ts, i);
    if (ts.lineFirst[i] === 1) lineFirsts.push(i);
    if (startsLine(ts, i)) lineStarts.push(i);
    const kind = ts.kinds[i];
    if (
      (kind === TokenKind.Symbol && tokenIs(ts, i, ":=")) ||
      (kind === TokenKind.Symbol && ts.lineFirst[i] === 1 && tokenIs(ts, i, "|")) ||
      (kind === TokenKind.Ident && tokenIs(ts, i, "where"))
    )
      statementEnds.push(i);
  }
  depthBefore.push(depth);
  assert.deepEqual(Array.from(index.depthBefore), depthBefore, `${label}: depthBefore`);
  assert.deepEqual(index.lineFirsts, lineFirsts, `${label}: lineFirsts`);
  assert.deepEqual(index.lineStarts, lineStarts, `${label}: lineStarts`);
  assert.deepEqual(index.statementEnds, statementEnds, `${label}: statementEnds`);
}

test("the token index agrees with the token-by-token definitions on tricky text", () => {
  const cases = [
    "",
    "theorem t : (a ∧ ⟨b, c⟩) := by\n  simp [x] <;> exact ⦃y⦄\n",
    "/- c -/ theorem x := 1\n  /- d -/ def y := 2\n-- line\ndef z := 3",
    "@[simp] lemma a : b := c\n@ x\n| zero => 1\n  | succ n => 2\nstructure S where\n  x : Nat",
    "def f : Nat → Nat\n| 0 => 1\n| n+1 => f n\ntermination_by n => n\n",
    'instance (priority := low) : Foo := ⟨"{"⟩ -- ( unbalanced\n)]}\n',
    "/-- doc -/\n/- a -/ /- b -/ example : 1 = 1 := rfl\n«where» := 1 wherever := 2",
  ];
  cases.forEach((text, n) => assertIndexMatchesDefinitions(text, `case ${n}`));
});

test("the token index agrees with the token-by-token definitions on the mining fixtures, whole and cut anywhere", () => {
  const dirs = ["test/fixtures/mining"];
  let files = 0;
  for (const dir of dirs)
    for (const name of readdirSync(dir))
      if (name.endsWith(".lean")) {
        const text = readFileSync(join(dir, name), "utf8");
        assertIndexMatchesDefinitions(text, name);
        // Cut anywhere: mid-token, inside a comment or string.
        for (let cut = 0; cut < text.length; cut += 37)
          assertIndexMatchesDefinitions(text.slice(0, cut), `${name}@${cut}`);
        files++;
      }
  assert.ok(files > 0, "fixtures found");
});
