import { test } from "node:test";
import assert from "node:assert/strict";
import { lex } from "../../lean-bridge/lean/lexer";
import { stringCode } from "../../lean-bridge/lean/stringCode";
import { TokenKind } from "../../lean-bridge/lean/tokens";

/** The code regions of the first string token of `text`, or "unreadable". */
function regions(text: string): string[] | "unreadable" {
  const ts = lex(text);
  const k = Array.from({ length: ts.count }, (_, i) => i).find((i) => ts.kinds[i] === TokenKind.String);
  assert.ok(k !== undefined, `no string in ${text}`);
  const read = stringCode(text, ts.starts[k] ?? 0, ts.ends[k] ?? 0);
  return read.kind === "unreadable" ? "unreadable" : read.regions.map((r) => text.slice(r.start, r.end));
}

test("a string's braces hold code under the interpolated reading, whatever stands before it", () => {
  assert.deepEqual(regions('"no braces"'), []);
  assert.deepEqual(regions('exact "{x}".length'), ["x"]);
  assert.deepEqual(regions('show s!"{x} := by" = y'), ["x"]);
  assert.deepEqual(regions('trace[x] "a {f x} b {g}"'), ["f x", "g"]);
  assert.deepEqual(regions('throwErrorAt (stx) m!"{by simp}"'), ["by simp"]);
  // Braces nested in the code, a `}` outside any code, a char literal holding a brace.
  assert.deepEqual(regions('"{{a}} }"'), ["{a}"]);
  assert.deepEqual(regions("\"{'}'}\""), ["'}'"]);
  // A comment ended by a line break inside the code is code's comment.
  assert.deepEqual(regions('"{x -- c\n}"'), ["x -- c\n"]);
});

test("escaped braces are text in both readings; raw strings are never interpolated", () => {
  assert.deepEqual(regions('"\\{x}"'), []);
  assert.deepEqual(regions('"a\\\\{x}"'), ["x"]);
  assert.deepEqual(regions('r"{by sorry}"'), []);
  assert.deepEqual(regions('r#"{by sorry}"#'), []);
});

test("a string the two readings end in different places is unreadable", () => {
  // A `{` whose code does not end inside the string: the interpolated reading runs past the quote.
  assert.equal(regions('exact "{".length'), "unreadable");
  assert.equal(regions('exact "{x".length'), "unreadable");
  assert.equal(regions('exact "}{".length'), "unreadable");
  assert.equal(regions('"{x -- }"'), "unreadable");
  assert.equal(regions('"{x /- }"'), "unreadable");
  // A quote inside the braces: the plain reading ends there, the interpolated one does not.
  assert.equal(regions('s!"{"a"}"'), "unreadable");
  assert.equal(regions('"{\\"a\\"}"'), "unreadable");
  assert.equal(regions('"{"a"}"'), "unreadable");
});
