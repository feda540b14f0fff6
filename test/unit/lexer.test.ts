import { test } from "node:test";
import assert from "node:assert/strict";
import { lex } from "../../lean-bridge/lean/lexer";
import { TokenKind, tokenText } from "../../lean-bridge/lean/tokens";

function kinds(text: string): [string, TokenKind][] {
  const ts = lex(text);
  return Array.from({ length: ts.count }, (_, i) => [tokenText(ts, i), ts.kinds[i] as TokenKind]);
}

test("nested block comments end at the matching -/", () => {
  const toks = kinds("a /- x /- y -/ z -/ b");
  assert.deepEqual(
    toks.map((t) => t[0]),
    ["a", "/- x /- y -/ z -/", "b"],
  );
  assert.equal(toks[1]![1], TokenKind.BlockComment);
});

test("doc comments and module docs are comments; `/--/` opens a doc comment, as in Lean", () => {
  assert.equal(kinds("/-- doc -/")[0]![1], TokenKind.DocComment);
  assert.equal(kinds("/-! mod -/")[0]![1], TokenKind.DocComment);
  assert.deepEqual(kinds("/--/ x -/ y"), [
    ["/--/ x -/", TokenKind.DocComment],
    ["y", TokenKind.Ident],
  ]);
});

test("strings keep escapes and comment markers inside", () => {
  const toks = kinds('"a \\" -- /- b" c');
  assert.equal(toks[0]![0], '"a \\" -- /- b"');
  assert.equal(toks[1]![0], "c");
});

test("interpolated strings hold code, strings and braces inside their braces", () => {
  const toks = kinds('s!"x {f "}" {g {1}}} y" z');
  assert.equal(toks[0]![0], 's!"x {f "}" {g {1}}} y"');
  assert.equal(toks[0]![1], TokenKind.String);
  assert.equal(toks[1]![0], "z");
});

test("raw strings with hashes end only at the matching quote-hashes", () => {
  const toks = kinds('r#"a "quoted" -/ b"# c');
  assert.equal(toks[0]![0], 'r#"a "quoted" -/ b"#');
  assert.equal(toks[1]![0], "c");
});

test("char literals versus primes in names", () => {
  assert.deepEqual(
    kinds("h' 'a' '\\n' x'").map((t) => t[0]),
    ["h'", "'a'", "'\\n'", "x'"],
  );
  assert.equal(kinds("'a'")[0]![1], TokenKind.Char);
});

test("guillemets, dotted names, Greek and subscripts are identifiers", () => {
  const toks = kinds("«box zero 1» Nat.add_comm h₁ αβ x.1 𝔸x");
  assert.deepEqual(
    toks.map((t) => t[0]),
    ["«box zero 1»", "Nat.add_comm", "h₁", "αβ", "x", ".", "1", "𝔸x"],
  );
  assert.equal(toks[0]![1], TokenKind.Ident);
});

test("columns and line-first flags", () => {
  const ts = lex("theorem t : True := by\n  trivial -- c\n/- a\n b -/ x");
  const at = (s: string) =>
    Array.from({ length: ts.count }, (_, i) => i).find((i) => tokenText(ts, i) === s)!;
  assert.equal(ts.cols[at("trivial")], 2);
  assert.equal(ts.lineFirst[at("trivial")], 1);
  assert.equal(ts.lineFirst[at("x")], 0);
});

test("unterminated comments and strings run to the end and are flagged", () => {
  for (const text of ["/- open", '"open', 's!"{', 'r#"x"']) {
    const ts = lex(text);
    assert.equal(ts.unterminated, true, text);
    assert.equal(ts.ends[ts.count - 1], text.length);
  }
});

test("lines and columns stay right after tokens that span lines (comments, strings, «names»)", () => {
  const ts = lex('/- a\nb -/ x\n"s\nt" y\n«p\nq» z');
  const at = (s: string) =>
    Array.from({ length: ts.count }, (_, i) => i).find((i) => tokenText(ts, i) === s)!;
  for (const [word, line, col] of [
    ["x", 1, 5],
    ["y", 3, 3],
    ["z", 5, 3],
  ] as const) {
    assert.equal(ts.lines[at(word)], line, word);
    assert.equal(ts.cols[at(word)], col, word);
  }
});

test("multi-character symbols: every run of their characters lexes longest first, as MULTI_SYMBOLS lists them", () => {
  // The lexer matches `:= => <;> @[ .. :: <|> <| |> -> <-` by character codes: compare with the rule itself.
  const multi = [":=", "=>", "<;>", "@[", "..", "::", "<|>", "<|", "|>", "->", "<-"].sort(
    (a, b) => b.length - a.length,
  );
  const alphabet = [":", "=", ">", "<", ";", "|", "@", "[", ".", "-", "a"];
  const expected = (text: string): string[] => {
    const out: string[] = [];
    for (let i = 0; i < text.length;) {
      if (text[i] === "a") {
        let j = i;
        while (text[j] === "a") j++;
        out.push(text.slice(i, j));
        i = j;
        continue;
      }
      if (text.startsWith("--", i)) {
        out.push(text.slice(i));
        break;
      }
      const sym = multi.find((m) => text.startsWith(m, i)) ?? text[i]!;
      out.push(sym);
      i += sym.length;
    }
    return out;
  };
  const words = (n: number): string[] =>
    n === 0 ? [""] : words(n - 1).flatMap((w) => alphabet.map((c) => w + c));
  for (const text of words(3)) {
    if (text.includes("a.")) continue; // `a.a` is one dotted name
    const ts = lex(text);
    const got = Array.from({ length: ts.count }, (_, i) => tokenText(ts, i));
    assert.deepEqual(got, expected(text), JSON.stringify(text));
  }
});
