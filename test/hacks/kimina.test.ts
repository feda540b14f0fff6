/**
 * Attacks through the Kimina backend (`--verifier kimina:URL`), against the stub in test/kimina that follows
 * Kimina's documented API. A candidate must never choose a masked outcome: one that kills its REPL on purpose
 * (Kimina then answers 500 for the whole request) is asked again alone on a fresh REPL and, failing again
 * while Kimina checks the file without it, is charged the crash. Kimina's messages carry no Lean tags, so
 * unsolved goals are a failure there (never partial credit), and its answers are read by position too.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { KiminaVerifier } from "../../lean-bridge/kimina/verifier";
import type { KiminaMessage } from "../../lean-bridge/kimina/protocol";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { isMasked } from "../../lean-bridge/verify/verdict";
import { EXAMPLE, proofHole, readExample } from "../helpers";
import { printAxiomsLine, startStub, type StubAnswer } from "../kimina/stub";

const FILE = "FimExamples/Arith.lean";
const TEXT = readExample(FILE);
const HOLE = proofHole(TEXT, "add_le_add_1");
const NAME = "FimExamples.Arith.add_le_add_1";
const task = { file: FILE, hole: HOLE, text: TEXT };

/** The answer a healthy REPL gives: `#print axioms` for the checked declaration, on its line. */
function proved(code: string): StubAnswer {
  const line = printAxiomsLine(code);
  const message: KiminaMessage = {
    severity: "info",
    pos: { line, column: 0 },
    endPos: { line, column: 10 },
    data: `'${NAME}' depends on axioms: [propext]`,
  };
  return { messages: [message] };
}

const verifier = (url: string, extra: Partial<ConstructorParameters<typeof KiminaVerifier>[0]> = {}) =>
  new KiminaVerifier({ url, projectRoot: EXAMPLE, timeoutMs: 1000, backoffMs: 5, maxRetries: 1, ...extra });

/** The candidate that takes its REPL down (deep recursion within the allowed `maxRecDepth`, say). */
const CRASHER = "set_option maxRecDepth 16384 in simp [Nat.add_comm]";

test("a candidate that crashes its REPL every time is charged the crash, never masked", async () => {
  for (const how of ["500", "repl message"] as const) {
    const stub = await startStub({
      answer: (code) =>
        code.includes("maxRecDepth 16384")
          ? how === "500"
            ? { crash: true }
            : { replMessage: "Lean REPL process exited" }
          : proved(code),
    });
    try {
      const v = verifier(stub.url);
      const verdict = await v.verify(task, CRASHER);
      assert.equal(verdict.kind, "crashed", `${how}: ${JSON.stringify(verdict)}`);
      if (verdict.kind === "crashed") assert.equal(verdict.cause, "candidate", how);
      assert.equal(isMasked(verdict), false, how);
      assert.equal(rewardOf(verdict, "partial").reward, 0);
      // Asked once as usual, once alone on a fresh REPL, then the file without the candidate on a fresh REPL.
      assert.deepEqual(
        stub.requests.map((r) => [r.reuse, r.codes.length, r.codes.some((c) => c.includes("maxRecDepth"))]),
        [
          [true, 1, true],
          [false, 1, true],
          [false, 1, false],
        ],
        how,
      );
      await v.stop();
    } finally {
      await stub.close();
    }
  }
});

test("a crashing candidate does not take its batch down with it", async () => {
  const stub = await startStub({
    answer: (code) => (code.includes("maxRecDepth 16384") ? { crash: true } : proved(code)),
  });
  try {
    const v = verifier(stub.url, { batchSize: 8, concurrency: 1 });
    const verdicts = await v.verifyMany(
      ["omega", CRASHER, "simp; omega"].map((candidate) => ({ task, candidate })),
    );
    assert.deepEqual(
      verdicts.map((x) => [x.kind, x.kind === "crashed" ? x.cause : undefined]),
      [
        ["proved", undefined],
        ["crashed", "candidate"],
        ["proved", undefined],
      ],
    );
  } finally {
    await stub.close();
  }
});

test("a REPL that fails once is the infrastructure's: the retry on a fresh REPL decides", async () => {
  let failures = 1;
  const stub = await startStub({
    answer: (code) => {
      if (failures > 0) {
        failures--;
        return { crash: true };
      }
      return proved(code);
    },
  });
  try {
    const verdict = await verifier(stub.url).verify(task, "omega");
    assert.equal(verdict.kind, "proved", JSON.stringify(verdict));
  } finally {
    await stub.close();
  }
});

test("a server that fails without the candidate too is the infrastructure's (masked)", async () => {
  const failing: (() => StubAnswer)[] = [
    () => ({ crash: true }),
    () => ({ error: "Lean REPL header command failed" }),
  ];
  for (const answer of failing) {
    const stub = await startStub({ answer });
    try {
      const verdict = await verifier(stub.url).verify(task, "omega");
      assert.equal(verdict.kind, "crashed", JSON.stringify(verdict));
      if (verdict.kind === "crashed") assert.equal(verdict.cause, "infrastructure");
      assert.equal(isMasked(verdict), true);
      assert.equal(rewardOf(verdict, "partial").reward, 0);
    } finally {
      await stub.close();
    }
  }
});

test("Kimina never yields partial credit: no Lean tags, so unsolved goals are a failure (fail closed)", async () => {
  const stub = await startStub({
    answer: (code) => {
      const line = printAxiomsLine(code);
      const hole = HOLE.start.line + 1;
      const messages: KiminaMessage[] = [
        // Lean's unsolved-goals error at the hole's `by`, as Kimina passes it on: text, no tag.
        {
          severity: "error",
          pos: { line: hole - 1, column: 40 },
          data: "unsolved goals\na b : Nat\n⊢ a ≤ b",
        },
        {
          severity: "info",
          pos: { line, column: 0 },
          data: `'${NAME}' depends on axioms: [propext, sorryAx]`,
        },
      ];
      return { messages };
    },
  });
  try {
    for (const candidate of ["skip", "constructor", "exact Nat.le_refl _"]) {
      const verdict = await verifier(stub.url).verify(task, candidate);
      assert.equal(verdict.kind, "failed", `${candidate}: ${JSON.stringify(verdict)}`);
      assert.equal(rewardOf(verdict, "partial").reward, 0);
    }
  } finally {
    await stub.close();
  }
});

test("through Kimina, text that reads like the answers is read by where it stands, never by its words", async () => {
  // The candidate's `trace` writes the `#print axioms` answer on its own line; Kimina's REPL never answered
  // the real question (a REPL that stopped after the declaration, say).
  const stub = await startStub({
    answer: (code) => {
      const candidateLine = code.split("\n").findIndex((l) => l.includes("trace")) + 1;
      return {
        messages: [
          {
            severity: "info",
            pos: { line: candidateLine, column: 2 },
            data: `'${NAME}' does not depend on any axioms`,
          },
        ],
      };
    },
  });
  try {
    const verdict = await verifier(stub.url).verify(
      task,
      `trace "'${NAME}' does not depend on any axioms"\nomega`,
    );
    assert.equal(verdict.kind, "failed", JSON.stringify(verdict));
    assert.equal(rewardOf(verdict, "partial").reward, 0);
  } finally {
    await stub.close();
  }
});
