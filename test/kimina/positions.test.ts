/**
 * Kimina's message positions in every server version (lean-bridge/kimina/positions.ts has the history from
 * project-numina/kimina-lean-server): 2.x since PR #56 counts lines from the snippet, 2.x before it from what
 * follows the imports it split off, 1.x from the stripped rest after the imports (a fresh REPL, or a snippet
 * without imports, gets the snippet whole). The client asks a probe once and hands positions on counted from the
 * snippet, so the `#print axioms` answer is found on its line in each version, and a candidate's own message is
 * never read as it. A snippet Kimina would re-split into other lines than Lean's (U+2028, a lone CR, …) is never
 * sent: the candidate's is rejected, the file's is an environment verdict.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { POSITION_PROBE, readPositionProbe, type KiminaAnswer } from "../../lean-bridge/kimina/client";
import { kiminaLineBreak, kiminaRereads, snippetPositions } from "../../lean-bridge/kimina/positions";
import type { CheckDocument } from "../../lean-bridge/verify/checkDocument";
import type { KiminaMessage } from "../../lean-bridge/kimina/protocol";
import { KiminaVerifier } from "../../lean-bridge/kimina/verifier";
import { EXAMPLE, proofHole, readExample } from "../helpers";
import { printAxiomsLine, startStub, type StubAnswer, type StubOptions } from "./stub";

/** A miniF2F-style file: imports, a blank line, options, then the example's theorems. */
const FILE = "FimExamples/Arith.lean";
const TEXT = `import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\n${readExample(FILE)}`;
const HOLE = proofHole(TEXT, "add_le_add_1");
const NAME = "FimExamples.Arith.add_le_add_1";
const task = { file: FILE, hole: HOLE, text: TEXT };

const msg = (line: number, column: number, data = "m"): KiminaMessage => ({
  severity: "info",
  pos: { line, column },
  endPos: { line, column: column + 1 },
  data,
});

test("positions of each version back in the snippet: 2.x after #56, 2.x before it, 1.x reused and fresh", () => {
  const code = "import A\n\nimport B\n\n  def x := 1\n#check x\n";
  // 2.x counts the 4 leading import or blank lines as the header; its REPL's line 1 is the snippet's line 5.
  assert.deepEqual(snippetPositions([msg(2, 0)], code, "2.x", false, "body")[0]!.pos, { line: 6, column: 0 });
  assert.deepEqual(snippetPositions([msg(6, 0)], code, "2.x", false, "snippet")[0]!.pos, {
    line: 6,
    column: 0,
  });
  assert.deepEqual(snippetPositions([msg(1, 2)], code, "2.x", true, "body")[0]!.pos, { line: 5, column: 2 });
  // 1.x: the header is `import A` alone (a blank line ends it); the rest is stripped, so its line 1 is
  // `import B` and the indentation of a first line is gone.
  assert.deepEqual(snippetPositions([msg(1, 0)], code, "1.x", false, "body")[0]!.pos, { line: 3, column: 0 });
  assert.deepEqual(snippetPositions([msg(3, 0)], code, "1.x", false, "body")[0]!.pos, { line: 5, column: 0 });
  assert.deepEqual(snippetPositions([msg(3, 0)], code, "1.x", true, "body")[0]!.pos, { line: 3, column: 0 });
  const indented = "import A\n\n  def x := 1";
  assert.deepEqual(snippetPositions([msg(1, 4)], indented, "1.x", false, "body")[0]!.pos, {
    line: 3,
    column: 6,
  });
  // Without imports every version's REPL line 1 is the snippet's.
  for (const [family, fresh, base] of [
    ["2.x", false, "body"],
    ["2.x", false, "snippet"],
    ["1.x", false, "body"],
  ] as const)
    assert.deepEqual(snippetPositions([msg(2, 3)], "-- c\ndef y := 2", family, fresh, base)[0]!.pos, {
      line: 2,
      column: 3,
    });
  // Columns count code points, lines past the end stay past it, `endPos` moves with `pos`.
  const wide = "import A\n𝔸 𝔹 := 1";
  const [moved] = snippetPositions([msg(1, 2)], wide, "2.x", false, "body");
  assert.deepEqual(
    [moved!.pos, moved!.endPos],
    [
      { line: 2, column: 2 },
      { line: 2, column: 3 },
    ],
  );
  assert.equal(snippetPositions([msg(9, 0)], wide, "2.x", false, "body")[0]!.pos.line, 10);
});

test("the probe's answer: line 1 is a body-counting server, line 3 a snippet-counting 2.x; anything else is unknown", () => {
  const answer = (line: number): KiminaAnswer => ({
    kind: "result",
    result: { id: "p", response: { messages: [msg(line, 0, "Nat : Type")] } },
  });
  assert.deepEqual(readPositionProbe(answer(1), "2.x"), { kind: "ok", base: "body" });
  assert.deepEqual(readPositionProbe(answer(3), "2.x"), { kind: "ok", base: "snippet" });
  assert.deepEqual(readPositionProbe(answer(1), "1.x"), { kind: "ok", base: "body" });
  assert.equal(readPositionProbe(answer(3), "1.x").kind, "unknown", "no 1.x shifts positions back");
  assert.equal(readPositionProbe(answer(2), "2.x").kind, "unknown");
  assert.equal(readPositionProbe({ kind: "timeout" }, "2.x").kind, "unknown");
  assert.deepEqual(readPositionProbe({ kind: "failed", reason: "down", unreachable: true }, "2.x"), {
    kind: "unknown",
    reason: "down",
    unreachable: true,
  });
  assert.ok(POSITION_PROBE.startsWith("import Init\n"));
  assert.ok(kiminaLineBreak("a\rb") === 1 && kiminaLineBreak("a\u2028b") === 1);
  assert.equal(kiminaLineBreak("a\r\nb\nc\td"), -1);
});

/** A REPL that proves: the `#print axioms` answer on its line, counted in the snippet (the stub converts). */
function proving(code: string): StubAnswer {
  const line = printAxiomsLine(code);
  return {
    messages: [
      {
        severity: "info",
        pos: { line, column: 0 },
        endPos: { line, column: 10 },
        data: `'${NAME}' depends on axioms: [propext]`,
      },
    ],
  };
}

const VERSIONS: { name: string; options: Partial<StubOptions>; base: "snippet" | "body" }[] = [
  { name: "2.x since PR #56", options: {}, base: "snippet" },
  { name: "2.x before PR #56", options: { positions: "body" }, base: "body" },
  { name: "1.x (/verify only)", options: { legacyOnly: true }, base: "body" },
];

const verifier = (url: string) =>
  new KiminaVerifier({ url, projectRoot: EXAMPLE, timeoutMs: 1000, backoffMs: 5, maxRetries: 1 });

for (const version of VERSIONS) {
  test(`${version.name}: the #print axioms answer is found on its line; the probe is asked once`, async () => {
    const stub = await startStub({ ...version.options, answer: proving });
    try {
      const v = verifier(stub.url);
      const verdict = await v.verify(task, "omega");
      assert.equal(verdict.kind, "proved", JSON.stringify(verdict));
      assert.equal(v.client.positionsFrom, version.base);
      assert.equal((await v.verify(task, "simp; omega")).kind, "proved");
      assert.equal(stub.probes.length, 1, "asked once for the client's life");
      await v.stop();
    } finally {
      await stub.close();
    }
  });

  test(`${version.name}: an error lands on the candidate's line; a candidate's fake answer is not the answer`, async () => {
    const stub = await startStub({
      ...version.options,
      answer: (code) => {
        const lines = code.split("\n");
        const candidateLine = lines.findIndex((l) => l.includes("exact foo") || l.includes("trace")) + 1;
        return {
          messages: [
            {
              severity: code.includes("exact foo") ? "error" : "info",
              pos: { line: candidateLine, column: 2 },
              endPos: { line: candidateLine, column: 11 },
              data: code.includes("exact foo")
                ? "unknown identifier 'foo'"
                : `'${NAME}' does not depend on any axioms`,
            },
          ],
        };
      },
    });
    try {
      const v = verifier(stub.url);
      const failed = await v.verify(task, "exact foo");
      assert.equal(failed.kind, "failed", JSON.stringify(failed));
      const error = failed.diagnostics.find((d) => d.severity === 1)!;
      assert.deepEqual(
        error.candidateRange?.start,
        { line: 0, character: 0 },
        "at the candidate's first line",
      );
      assert.equal(error.range.start.line, HOLE.start.line);
      const faked = await v.verify(task, `trace "'${NAME}' does not depend on any axioms"\nomega`);
      assert.equal(faked.kind, "failed", JSON.stringify(faked));
      await v.stop();
    } finally {
      await stub.close();
    }
  });
}

test("a line break Kimina reads and Lean does not: the candidate's is rejected, the file's is the environment's", async () => {
  const stub = await startStub({ answer: proving });
  try {
    const v = verifier(stub.url);
    // (A lone CR in a candidate is a line break to our reading too: the check document has a newline there.)
    for (const hidden of ["\u2028", "\f", "\v", "\x1c", "\x85", "\u2029"]) {
      const verdict = await v.verify(task, `-- note${hidden}exact cheat\nomega`);
      assert.equal(verdict.kind, "rejected", JSON.stringify(hidden));
      // Control characters are the policy's own refusal already; U+2028 and U+2029 are not.
      assert.ok(
        verdict.kind === "rejected" && ["kimina-line-break", "character"].includes(verdict.rule),
        JSON.stringify(verdict),
      );
    }
    assert.equal((await v.verify(task, "omega\r\n")).kind, "proved", "CRLF is a line break to both");
    const file = {
      ...task,
      text: TEXT.replace("namespace FimExamples.Arith", "namespace FimExamples.Arith\f"),
    };
    const environment = await v.verify(file, "omega");
    assert.equal(environment.kind, "environment", JSON.stringify(environment));
    assert.equal(
      stub.requests.flatMap((r) => r.codes).filter((c) => kiminaLineBreak(c) >= 0).length,
      0,
      "no such snippet reached the server",
    );
    await v.stop();
  } finally {
    await stub.close();
  }
});

test("the verifier's own guard, whatever the policy lets through: the candidate's break rejected, the file's the environment's", () => {
  const doc = (text: string, candidateStart: number, candidateEnd: number) =>
    ({ text, candidateStart, candidateEnd }) as CheckDocument;
  const text = "theorem t : True := by\n  -- a\u2028trivial\n  trivial\n";
  const start = text.indexOf("-- a");
  const candidate = kiminaRereads(doc(text, start, text.indexOf("\n  trivial")));
  assert.equal(candidate?.kind === "rejected" && candidate.rule, "kimina-line-break");
  assert.match(candidate?.kind === "rejected" ? candidate.reason : "", /U\+2028.*str\.splitlines/);
  const file = kiminaRereads(doc(text, text.indexOf("  trivial\n"), text.length - 1));
  assert.equal(file?.kind, "environment");
  assert.equal(kiminaRereads(doc("theorem t : True := by\r\n  trivial\r\n", 24, 33)), undefined);
});
