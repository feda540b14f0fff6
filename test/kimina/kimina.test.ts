/**
 * The Kimina backend against a stub on 127.0.0.1 that follows Kimina's documented API: our policy and check
 * document stand in front (a `sorry` candidate never reaches the server), `#print axioms` is appended and
 * parsed (an axiom outside the allow-list fails, an answer for another name fails), 429 is retried, an `error`
 * that says "timed out" and a request past its deadline are timeouts, a REPL error is a crash, the bearer key
 * is sent, an older server is asked on /verify, and every verdict names Kimina.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { KiminaVerifier } from "../../lean-bridge/kimina/verifier";
import type { KiminaMessage } from "../../lean-bridge/kimina/protocol";
import { EXAMPLE, proofHole, readExample } from "../helpers";
import { COMPLETE_WITHOUT_HOLE } from "../../lean-bridge/verify/noopProbe";
import { isNoopProbe, printAxiomsLine, startStub, type StubAnswer } from "./stub";

const FILE = "FimExamples/Arith.lean";
const TEXT = readExample(FILE);
const HOLE = proofHole(TEXT, "add_le_add_1");
const NAME = "FimExamples.Arith.add_le_add_1";

function axioms(code: string, name: string, list: string[]): KiminaMessage {
  const line = printAxiomsLine(code);
  return {
    severity: "info",
    pos: { line, column: 0 },
    endPos: { line, column: 10 },
    data: list.length
      ? `'${name}' depends on axioms: [${list.join(", ")}]`
      : `'${name}' does not depend on any axioms`,
  };
}

function verifier(url: string, extra: Partial<ConstructorParameters<typeof KiminaVerifier>[0]> = {}) {
  return new KiminaVerifier({ url, projectRoot: EXAMPLE, timeoutMs: 1000, backoffMs: 5, ...extra });
}

const check = (v: KiminaVerifier, candidate: string) =>
  v.verify({ file: FILE, hole: HOLE, text: TEXT }, candidate);

test("a proof Kimina accepts is proved only with its #print axioms answer for exactly the declaration", async () => {
  const fullName = (code: string) => /#print axioms _root_\.(\S+)/.exec(code)?.[1] ?? "?";
  let mode: "ok" | "foreign" | "other-name" | "none" = "ok";
  const stub = await startStub({
    apiKey: "secret",
    answer: (code): StubAnswer => ({
      messages:
        mode === "none"
          ? []
          : [
              axioms(
                code,
                mode === "other-name" ? "other" : fullName(code),
                mode === "foreign" ? ["propext", "myAxiom"] : ["propext"],
              ),
            ],
    }),
  });
  try {
    const v = verifier(stub.url, { apiKey: "secret" });
    const proved = await check(v, "omega");
    assert.equal(proved.kind, "proved", JSON.stringify(proved));
    assert.equal(proved.verifier.kind, "kimina");
    assert.deepEqual(proved.kind === "proved" ? proved.axioms : [], ["propext"]);
    assert.match(proved.verifier.label, /^Kimina Lean Server \(/);
    assert.equal(stub.requests[0]!.authorization, "Bearer secret");
    mode = "foreign";
    const foreign = await check(v, "exact Nat.succ_le_succ h");
    assert.equal(foreign.kind, "failed");
    assert.match(foreign.kind === "failed" ? foreign.reason : "", /myAxiom/);
    mode = "other-name";
    assert.equal((await check(v, "simp; omega")).kind, "failed");
    mode = "none";
    assert.equal((await check(v, "simp_all; omega")).kind, "failed");
    await v.stop();
  } finally {
    await stub.close();
  }
});

test("the policy and the check document stand in front of Kimina", async () => {
  const stub = await startStub({ answer: () => ({ messages: [] }) });
  try {
    const v = verifier(stub.url);
    const sorry = await check(v, "sorry");
    assert.equal(sorry.kind, "rejected");
    const escape = await check(v, "omega\ntheorem x : True := trivial");
    assert.equal(escape.kind, "rejected");
    assert.equal(stub.requests.length, 0, "nothing reached the server");
  } finally {
    await stub.close();
  }
});

test("errors, sorry and Lean's messages map into the verdict union", async () => {
  const answers: Record<string, (code: string) => StubAnswer> = {
    bad: (code) => ({
      messages: [
        {
          severity: "error",
          pos: { line: printAxiomsLine(code) - 3, column: 2 },
          data: "unknown identifier 'foo'",
        },
      ],
    }),
    repl: () => ({ replMessage: "Lean error: out of memory" }),
    slow: () => ({ error: "Lean REPL command timed out in 1 seconds" }),
    other: () => ({ error: "Lean REPL header command failed" }),
  };
  let which = "bad";
  const stub = await startStub({ answer: (code) => answers[which]!(code) });
  try {
    const v = verifier(stub.url);
    const failed = await check(v, "exact foo");
    assert.equal(failed.kind, "failed");
    which = "repl";
    const repl = await check(v, "exact foo1");
    assert.equal(repl.kind, "crashed");
    which = "slow";
    assert.equal((await check(v, "exact foo2")).kind, "timeout");
    which = "other";
    const other = await check(v, "exact foo3");
    assert.equal(other.kind, "crashed");
    assert.match(other.kind === "crashed" ? other.reason : "", /header command failed/);
  } finally {
    await stub.close();
  }
});

test("429 is retried with backoff; a request past its deadline is a timeout; an older server is asked on /verify", async () => {
  const ok = (code: string): StubAnswer => ({ messages: [axioms(code, NAME, [])] });
  const busy = await startStub({ busyFor: 2, answer: ok });
  try {
    const v = verifier(busy.url);
    assert.equal((await check(v, "omega")).kind, "proved");
    assert.equal(v.client.stats.retried429, 2);
  } finally {
    await busy.close();
  }
  const always = await startStub({ busyFor: 1000, answer: ok });
  try {
    const v = verifier(always.url, { maxRetries: 2 });
    const r = await check(v, "omega");
    assert.equal(r.kind, "crashed");
    assert.match(r.kind === "crashed" ? r.reason : "", /busy \(429/);
  } finally {
    await always.close();
  }
  const hang = await startStub({ answer: () => ({ hang: true }) });
  try {
    const v = verifier(hang.url, { timeoutMs: 100 });
    assert.equal((await check(v, "omega")).kind, "timeout");
  } finally {
    await hang.close();
  }
  const legacy = await startStub({ legacyOnly: true, answer: ok });
  try {
    const v = verifier(legacy.url);
    assert.equal((await check(v, "omega")).kind, "proved");
    // The candidate, then the hole with the no-op in it (noopProbe.ts), both on the older endpoint.
    assert.deepEqual(
      legacy.requests.map((r) => r.path),
      ["/verify", "/verify"],
    );
  } finally {
    await legacy.close();
  }
});

test("checks of one tick go out as one batch", async () => {
  const stub = await startStub({ answer: (code) => ({ messages: [axioms(code, NAME, [])] }) });
  try {
    const v = verifier(stub.url, { batchSize: 8, concurrency: 1 });
    const verdicts = await v.verifyMany(
      ["omega", "simp; omega", "omega ", "exact Nat.succ_le_succ h"].map((candidate) => ({
        task: { file: FILE, hole: HOLE, text: TEXT },
        candidate,
      })),
    );
    assert.ok(verdicts.every((x) => x.kind === "proved"));
    // The candidates in one batch; then the hole's no-op, asked once for the four proofs (noopProbe.ts).
    assert.equal(stub.requests.length, 2);
    assert.equal(stub.requests[0]!.ids.length, 3, "the two identical check documents were checked once");
    assert.equal(stub.requests[1]!.ids.length, 1);
    assert.ok(isNoopProbe(stub.requests[1]!.codes[0]!));
  } finally {
    await stub.close();
  }
});

test("a hole Kimina proves with `skip` in it is no task: its proofs are rejected, asked once per hole", async () => {
  const stub = await startStub({
    answersNoop: true,
    answer: (code) => ({ messages: [axioms(code, NAME, [])] }),
  });
  try {
    const v = verifier(stub.url);
    for (const candidate of ["omega", "simp; omega"]) {
      const r = await check(v, candidate);
      assert.equal(r.kind === "rejected" && r.rule, COMPLETE_WITHOUT_HOLE, JSON.stringify(r));
      assert.equal(r.verifier.kind, "kimina");
    }
    const noops = stub.requests.flatMap((r) => r.codes).filter(isNoopProbe);
    assert.equal(noops.length, 1, "the no-op is asked once for the hole");
    // A candidate that is not proved never pays for the question.
    const before = stub.requests.length;
    assert.equal((await check(v, "sorry")).kind, "rejected");
    assert.equal(stub.requests.length, before);
    await v.stop();
  } finally {
    await stub.close();
  }
});
