/**
 * The policy against real Mathlib: every tactic block that the project's miner cuts out of a sample of
 * Mathlib's own proofs (test/fixtures/mathlib-sample/proofs.jsonl, short excerpts with their source path and
 * commit) must pass the default policy. A refusal here is a false rejection, a policy bug.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mineText } from "../../lean-bridge/holes/mine";
import { checkCandidate } from "../../lean-bridge/verify/policy";

interface Excerpt {
  repo: string;
  path: string;
  commit: string;
  excerpt: string;
}

const SAMPLE = join(__dirname, "..", "fixtures", "mathlib-sample", "proofs.jsonl");

function excerpts(): Excerpt[] {
  return readFileSync(SAMPLE, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Excerpt);
}

test("the sample is short excerpts of at least 50 Mathlib files, each with its source", () => {
  const all = excerpts();
  const files = new Set(all.map((e) => e.path));
  assert.ok(files.size >= 50, `${files.size} files`);
  for (const e of all) {
    assert.equal(e.repo, "leanprover-community/mathlib4");
    assert.match(e.commit, /^[0-9a-f]{40}$/, e.path);
    assert.match(e.path, /^(Mathlib|Archive)\/.+\.lean$/);
    const lines = e.excerpt.trimEnd().split("\n").length;
    assert.ok(lines <= 16, `${e.path}: ${lines} lines; an excerpt stays a few lines`);
  }
});

test("every tactic block the miner cuts from the sample passes the policy", () => {
  const refused: string[] = [];
  let holes = 0;
  for (const e of excerpts()) {
    const mined = mineText(e.excerpt);
    assert.ok(
      mined.holes.length > 0,
      `${e.path}: the miner cut no tactic block from ${e.excerpt.split("\n")[0]}`,
    );
    for (const hole of mined.holes) {
      holes++;
      const verdict = checkCandidate(hole.middle, undefined, { column: hole.indent });
      if (verdict.kind === "rejected")
        refused.push(
          `${e.path}@${e.commit.slice(0, 8)} ${hole.kind} ${JSON.stringify(hole.middle)}: ${verdict.reason}`,
        );
    }
  }
  assert.deepEqual(refused, [], `${refused.length} of ${holes} mined blocks refused`);
  assert.ok(holes >= 200, `${holes} mined blocks`);
});

test("the sample covers options, show, calc, conv, nested blocks, Mathlib's #, unicode and comments", () => {
  const text = excerpts()
    .map((e) => e.excerpt)
    .join("\n");
  const spellings = [
    "set_option",
    "show ",
    "calc",
    "conv",
    "#{",
    "#s",
    "(by ",
    "<;>",
    "· ",
    "{ ",
    "-- ",
    "ℕ",
    "⟨",
  ];
  for (const spelling of spellings)
    assert.ok(text.includes(spelling), `no excerpt uses ${JSON.stringify(spelling)}`);
});
