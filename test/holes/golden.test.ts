/**
 * Golden tests: each fixture's holes are compared with its .expected.json. On a difference, the miner's
 * output is written beside it as .produced.json (like leanprover-community/repl's golden tests) to diff and,
 * once reviewed, to copy over the expectation.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mineText } from "../../lean-bridge/holes/mine";
import { REPO } from "../helpers";

const DIR = join(REPO, "test", "fixtures", "mining");

function goldenOf(text: string) {
  const mined = mineText(text);
  return {
    declarations: mined.declarations,
    skipped: mined.skipped,
    holes: mined.holes.map((h) => ({
      decl: h.decl,
      kind: h.kind,
      range: `${h.range.start.line}:${h.range.start.character}-${h.range.end.line}:${h.range.end.character}`,
      indent: h.indent,
      middle: h.middle,
    })),
  };
}

for (const name of readdirSync(DIR).filter((f) => f.endsWith(".lean"))) {
  test(`golden holes: ${name}`, () => {
    const produced = goldenOf(readFileSync(join(DIR, name), "utf8"));
    const expectedPath = join(DIR, name.replace(/\.lean$/, ".expected.json"));
    assert.ok(existsSync(expectedPath), `${expectedPath} is missing`);
    const expected: unknown = JSON.parse(readFileSync(expectedPath, "utf8"));
    try {
      assert.deepEqual(produced, expected);
    } catch (error) {
      writeFileSync(
        join(DIR, name.replace(/\.lean$/, ".produced.json")),
        JSON.stringify(produced, null, 1) + "\n",
      );
      throw error;
    }
  });
}
