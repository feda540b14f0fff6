/**
 * A candidate that takes the whole Kimina Lean Server down (not only its REPL) must not buy a masked outcome:
 * the connection breaking after the check was sent is nobody's fault yet; once the server answers again the
 * check is asked alone, with nothing else in flight, and bringing the server down a second time, while the
 * file without the candidate checks, is the candidate's failure. A server that stays down is the
 * infrastructure's, with what to do. Against the stub in test/kimina, which drops every open connection
 * when told to (as a crashed server does) and is back at once or stays down.
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
const NAME = "FimExamples.Arith.add_le_add_1";
const task = { file: FILE, hole: proofHole(TEXT, "add_le_add_1"), text: TEXT };

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

const verifier = (url: string) =>
  new KiminaVerifier({
    url,
    projectRoot: EXAMPLE,
    timeoutMs: 1000,
    backoffMs: 5,
    maxRetries: 1,
    batchSize: 8,
  });

/** The candidate that brings the whole server down (its memory, say). */
const KILLER = "set_option maxRecDepth 16384 in simp [Nat.add_comm]";
const isKiller = (code: string) => code.includes("maxRecDepth 16384");

test("a candidate that brings the whole server down every time is charged, never masked; its batch-mate is proved", async () => {
  const stub = await startStub({ answer: (code) => (isKiller(code) ? { kill: true } : proved(code)) });
  try {
    const v = verifier(stub.url);
    const [killer, honest] = await v.verifyMany([
      { task, candidate: KILLER },
      { task, candidate: "omega" },
    ]);
    assert.equal(killer!.kind, "crashed", JSON.stringify(killer));
    assert.equal(killer!.kind === "crashed" && killer!.cause, "candidate");
    assert.match(
      killer!.kind === "crashed" ? killer!.reason : "",
      /dropped the connection.*only check on the server/s,
    );
    assert.equal(isMasked(killer!), false);
    assert.equal(rewardOf(killer!, "partial").reward, 0);
    assert.equal(
      honest!.kind,
      "proved",
      `the server going down is not the honest candidate's fault: ${JSON.stringify(honest)}`,
    );
    // Both went out in one batch; the killer's retry went alone, with no other request on the server.
    assert.equal(stub.requests[0]!.codes.length, 2);
    const killerRetries = stub.requests.slice(1).filter((r) => r.codes.some(isKiller));
    assert.equal(killerRetries.length, 1, "retried once");
    assert.deepEqual(
      killerRetries.map((r) => [r.codes.length, r.othersOpen, r.reuse]),
      [[1, 0, false]],
    );
    await v.stop();
  } finally {
    await stub.close();
  }
});

test("a server that went down once (not the candidate's doing) costs the candidate nothing", async () => {
  let killed = false;
  const stub = await startStub({
    answer: (code) => {
      if (!killed && code.includes("omega")) {
        killed = true;
        return { kill: true };
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

test("a server that stays down is the infrastructure's, with what to do", async () => {
  const stub = await startStub({ answer: () => ({ kill: true, staysDown: true }) });
  try {
    const verdict = await verifier(stub.url).verify(task, "omega");
    assert.equal(verdict.kind, "crashed", JSON.stringify(verdict));
    assert.equal(verdict.kind === "crashed" && verdict.cause, "infrastructure");
    assert.equal(isMasked(verdict), true);
    assert.match(verdict.kind === "crashed" ? verdict.reason : "", /did not come back: restart it/);
  } finally {
    await stub.close();
  }
});
