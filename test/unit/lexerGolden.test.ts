import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { lex } from "../../lean-bridge/lean/lexer";
import { TokenKind, tokenText } from "../../lean-bridge/lean/tokens";

interface GoldenCase {
  name: string;
  source: string;
  text: string;
  tokens: [string, keyof typeof KIND_NAMES][];
  unterminated?: boolean;
}

const KIND_NAMES = {
  Ident: TokenKind.Ident,
  Number: TokenKind.Number,
  String: TokenKind.String,
  Char: TokenKind.Char,
  LineComment: TokenKind.LineComment,
  BlockComment: TokenKind.BlockComment,
  DocComment: TokenKind.DocComment,
  Symbol: TokenKind.Symbol,
} as const;

const cases = JSON.parse(
  readFileSync(join(__dirname, "..", "fixtures", "lexer-golden", "cases.json"), "utf8"),
) as GoldenCase[];

for (const c of cases) {
  test(`golden lexer case: ${c.name} (${c.source})`, () => {
    const ts = lex(c.text);
    const got = Array.from({ length: ts.count }, (_, i) => [tokenText(ts, i), ts.kinds[i]]);
    assert.deepEqual(
      got,
      c.tokens.map(([text, kind]) => [text, KIND_NAMES[kind]]),
    );
    assert.equal(ts.unterminated, c.unterminated ?? false);
  });
}
