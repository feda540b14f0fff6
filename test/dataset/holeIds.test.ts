/**
 * Task ids hashed from a file's UTF-8 bytes (lean-bridge/dataset/holeIds.ts) are `holeId`'s (split.ts, the
 * contract): on ASCII text, on text with two- and three-byte characters, astral pairs, lone surrogates and CRLF,
 * for every hole a mined file has and for spans whose bounds split a surrogate pair.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mineText } from "../../lean-bridge/holes/mine";
import { FileHoleIds } from "../../lean-bridge/dataset/holeIds";
import { JsonText } from "../../lean-bridge/dataset/jsonText";
import { holeId } from "../../lean-bridge/dataset/split";
import { idOfHalves } from "../../lean-bridge/dataset/taskSketches";

const LEAN = [
  "theorem «weird name» (𝔸 : Type) (x : 𝔸) : x = x := by",
  "  -- é, ⟨⟩, 😀 and a lone \ud800 surrogate",
  "  have h : (1 : Nat) = 1 := by",
  "    rfl",
  "  exact ⟨rfl, 😀😀⟩",
  "",
  "theorem plain (n : Nat) : n + 0 = n := by",
  "  induction n with",
  "  | zero => rfl",
  "  | succ k ih => simp",
  "",
].join("\n");

const TEXTS: Record<string, string> = {
  ascii: "theorem t : 1 = 1 := by\n  have : 2 = 2 := by\n    rfl\n  rfl\n",
  unicode: LEAN,
  crlf: LEAN.replace(/\n/g, "\r\n"),
};

for (const [name, text] of Object.entries(TEXTS))
  test(`task ids from UTF-8 bytes are holeId's (${name})`, () => {
    const holes = mineText(text).holes;
    assert.ok(holes.length > 3, "the text has holes");
    for (const file of ["A/B.lean", "Ünï/𝔸.lean"]) {
      const ids = new FileHoleIds(text, file);
      for (const hole of holes) {
        const declKey = `${hole.decl}@${hole.declStart.line}`;
        const expected = holeId(file, declKey, hole.kind, hole.start, hole.end, hole.middle);
        assert.equal(idOfHalves(...ids.halves(declKey, hole.kind, hole.start, hole.end)), expected);
      }
    }
  });

test("task ids of any span, bounds inside surrogate pairs and lone surrogates included", () => {
  const text = "a😀é\ud800b⟨😀😀⟩\udc00c\n";
  // The UTF-8 offsets found here, and those JsonText finds as it escapes the text (what the exporter passes).
  for (const ids of [
    new FileHoleIds(text, "F.lean"),
    new FileHoleIds(text, "F.lean", new JsonText(text)),
    new FileHoleIds(text, "F.lean", new JsonText(text), Buffer.from(text, "utf8")),
    // A buffer another file's ids used first (longer, with its bytes still in it).
    new FileHoleIds(text, "F.lean", undefined, undefined, { buffer: Buffer.alloc(1 << 16, 0x41) }),
  ])
    for (let start = 0; start <= text.length; start++)
      for (let end = start; end <= text.length; end++)
        for (const declKey of ["d@0", "e@1"])
          assert.equal(
            idOfHalves(...ids.halves(declKey, "tactic", start, end)),
            holeId("F.lean", declKey, "tactic", start, end, text.slice(start, end)),
            `span ${start}..${end}`,
          );
});

test("task ids of a middle longer than the scratch buffer", () => {
  const text = `x${"⟨a⟩".repeat(40_000)}y`;
  const ids = new FileHoleIds(text, "Long.lean");
  assert.equal(
    idOfHalves(...ids.halves("d@0", "proof", 1, text.length - 1)),
    holeId("Long.lean", "d@0", "proof", 1, text.length - 1, text.slice(1, -1)),
  );
  assert.equal(
    idOfHalves(...ids.halves("d@0", "tactic", 0, 4)),
    holeId("Long.lean", "d@0", "tactic", 0, 4, text.slice(0, 4)),
  );
});
