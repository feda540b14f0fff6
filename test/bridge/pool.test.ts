import { test } from "node:test";
import assert from "node:assert/strict";
import { proofHole, readExample } from "../helpers";
import { inMemory } from "../harness";

const ARITH = "FimExamples/Arith.lean";
const text = readExample(ARITH);

test("verdicts through the bridge: proved, failed, incomplete, rejected — each naming the simulator", async () => {
  const h = await inMemory();
  try {
    const hole = proofHole(text, "add_le_add_3");
    const proved = await h.pool.verify({ file: ARITH, hole }, "omega");
    assert.equal(proved.kind, "proved");
    assert.equal(proved.verifier.kind, "simulator");
    assert.match(proved.verifier.label, /simulator/);
    assert.doesNotMatch(proved.verifier.label, /^Lean/);
    const failed = await h.pool.verify({ file: ARITH, hole }, "simp");
    assert.equal(failed.kind, "failed");
    assert.deepEqual(failed.diagnostics.find((d) => d.severity === 1)?.candidateRange?.start, {
      line: 0,
      character: 0,
    });
    const lt = proofHole(text, "lt_of_add_2");
    const partial = await h.pool.verify({ file: ARITH, hole: lt }, "have h' : a < b := by omega");
    assert.equal(partial.kind, "incomplete");
    const sorry = await h.pool.verify({ file: ARITH, hole }, "exact sorry");
    assert.equal(sorry.kind, "rejected");
  } finally {
    await h.close();
  }
});

test("a second candidate for the same declaration re-elaborates only that declaration", async () => {
  const h = await inMemory({}, { slots: 1 });
  try {
    const hole = proofHole(text, "sub_add_cancel_9");
    await h.pool.verify({ file: ARITH, hole }, "omega");
    const afterFirst = h.simulator.stats.elaborated;
    assert.ok(afterFirst > 20, "the first check elaborates the whole prefix");
    await h.pool.verify({ file: ARITH, hole }, "simp");
    assert.equal(
      h.simulator.stats.elaborated - afterFirst,
      1,
      "only the edited declaration is elaborated again",
    );
    assert.equal(h.simulator.stats.headerLoads, 1, "the worker (and its imports) is reused");
  } finally {
    await h.close();
  }
});

test("duplicates cost nothing: the cache and the check under way answer them", async () => {
  const h = await inMemory({ declMs: 20 });
  try {
    const hole = proofHole(text, "add_le_add_5");
    const group = Array.from({ length: 8 }, (_, k) => ({
      task: { file: ARITH, hole },
      candidate: k % 2 ? "omega" : "simp",
    }));
    const verdicts = await h.pool.verifyMany(group);
    assert.deepEqual(
      verdicts.map((v) => v.kind),
      group.map((g) => (g.candidate === "omega" ? "proved" : "failed")),
    );
    // Two candidates, and one no-op check of the hole for the proved one (noopProbe.ts), asked once: the
    // other three proofs find it cached, as their own verdicts are.
    assert.equal(h.pool.stats.checks, 3);
    assert.equal(h.pool.stats.cacheHits, 9);
  } finally {
    await h.close();
  }
});

test("a candidate full of unicode and astral characters keeps UTF-16 positions right", async () => {
  const h = await inMemory();
  try {
    const hole = proofHole(readExample("FimExamples/Notation.lean"), "box_comm_4");
    const proved = await h.pool.verify(
      { file: "FimExamples/Notation.lean", hole },
      "show α + β + 4 = β + α + 4 -- 𝔸𝔹 ✓\n  omega",
    );
    assert.equal(proved.kind, "proved");
    const bad = await h.pool.verify(
      { file: "FimExamples/Notation.lean", hole },
      "show α + β + 4 = β + α + 4\n  /- 𝔸𝔸 -/ simp",
    );
    assert.equal(bad.kind, "failed");
    // `simp` follows two astral characters (4 UTF-16 units) and the comment delimiters.
    assert.deepEqual(bad.diagnostics.find((d) => d.severity === 1)?.candidateRange?.start, {
      line: 1,
      character: 2 + "/- 𝔸𝔸 -/ ".length,
    });
  } finally {
    await h.close();
  }
});

test("CRLF files verify like LF files", async () => {
  const h = await inMemory();
  try {
    const crlf = text.replace(/\n/g, "\r\n");
    const hole = proofHole(text, "add_le_add_2");
    const v = await h.pool.verify({ file: ARITH, hole, text: crlf }, "omega");
    assert.equal(v.kind, "proved");
  } finally {
    await h.close();
  }
});
