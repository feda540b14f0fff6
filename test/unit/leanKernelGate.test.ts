/**
 * The kernel gate's real-Lean backend (lean-bridge/verify/leanKernelGate.ts) without Lean: its processes,
 * deadlines, self-test and the reading of Lean's answers, against a scripted `lake` (test/fixtures/fake-lake,
 * never Lean). What Lean itself answers is test/real-lean/kernelGate.test.ts's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { blankFailingCommands } from "../../lean-bridge/verify/gateDocument";
import { judgeWithGate, type GateRequest } from "../../lean-bridge/verify/kernelGate";
import { isMasked, type VerdictOutcome } from "../../lean-bridge/verify/verdict";
import {
  LeanKernelGate,
  compileErrors,
  gateDir,
  parseReplayAnswer,
} from "../../lean-bridge/verify/leanKernelGate";
import { KERNEL_REPLAY_PROGRAM } from "../../lean-bridge/verify/kernelReplayProgram";
import { kernelGateReferencePath } from "../../lean-bridge/util/projectLayout";
import { REPO } from "../helpers";
import { tempDir } from "../tempDirs";

const FAKE_LAKE = join(REPO, "test", "fixtures", "fake-lake");

const PROVED: VerdictOutcome = {
  kind: "proved",
  axioms: [],
  axiomsChecked: true,
  confirmedBy: "server",
  diagnostics: [],
};
const RULES = {
  checkedName: "N.t",
  isPrivate: false,
  mayBePrivate: false,
  allowNative: false,
  legacyNativeExists: true,
};

test("Lean's --json errors are read with their lines; other output is not Lean's", () => {
  const out = [
    "not json",
    JSON.stringify({ severity: "information", pos: { line: 3, column: 0 }, data: "info" }),
    JSON.stringify({ severity: "error", pos: { line: 7, column: 2 }, data: "unknown identifier 'x'\nmore" }),
    "{broken",
  ].join("\n");
  assert.deepEqual(compileErrors(out), [{ line: 6, text: "unknown identifier 'x'" }]);
});

test("the replay's answer: the last marked line, read strictly", () => {
  const ok = `noise\nFIMRLVR-GATE {"kind":"missing","message":"old"}\nFIMRLVR-GATE {"kind":"replayed","declaration":"N.t","replayed":2,"axioms":[{"name":"propext","declaredInDocument":false,"nativeShape":false}]}\n`;
  const r = parseReplayAnswer(ok, 5);
  assert.equal(r?.kind, "replayed");
  if (r?.kind === "replayed")
    assert.deepEqual(r.axioms, [{ name: "propext", declaredInDocument: false, nativeShape: false }]);
  for (const bad of [
    "",
    "FIMRLVR-GATE {not json",
    'FIMRLVR-GATE {"kind":"replayed","declaration":"N.t","replayed":2,"axioms":[{"name":"propext"}]}',
    'FIMRLVR-GATE {"kind":"replayed","declaration":3,"replayed":2,"axioms":[]}',
    'FIMRLVR-GATE {"kind":"confirmed"}',
    'FIMRLVR-GATE {"kind":"kernel-rejected","declaration":"N.t"}',
  ])
    assert.equal(parseReplayAnswer(bad, 1), undefined, bad);
});

test("failing commands above the declaration are blanked, lines kept; anything else is not the workspace's alone", () => {
  const text = 'import Lean\n\ndef broken : Nat := "no"\n\ntheorem t : True := by\n  trivial\n';
  const blanked = blankFailingCommands(text, [2], 0, 4);
  assert.ok(blanked !== undefined);
  assert.equal(blanked.split("\n").length, text.split("\n").length, "every line kept");
  assert.doesNotMatch(blanked, /broken/);
  assert.match(blanked, /theorem t : True/);
  assert.equal(blankFailingCommands(text, [0], 0, 4), undefined, "in the header");
  assert.equal(blankFailingCommands(text, [5], 0, 4), undefined, "in the checked declaration");
  assert.equal(blankFailingCommands(text, [], 0, 4), undefined);
});

test("the replay program is one text for every release, its answer marked, with Lean's replay in each known form", () => {
  assert.match(KERNEL_REPLAY_PROGRAM, /^import Lean\nimport Lean\.Replay\n/);
  assert.match(KERNEL_REPLAY_PROGRAM, /Lean\.Kernel\.Environment\.replay consts base\.toKernelEnv/);
  assert.match(KERNEL_REPLAY_PROGRAM, /Lean\.Environment\.replay consts base\)/);
  assert.match(KERNEL_REPLAY_PROGRAM, /IO\.println \("FIMRLVR-GATE " \+\+/);
  assert.doesNotMatch(KERNEL_REPLAY_PROGRAM, /\$\{/, "no template placeholder left");
});

interface Setup {
  root: string;
  log: string;
  gate: LeanKernelGate;
  calls(): string[][];
}

function setup(extra: NodeJS.ProcessEnv = {}, withLake = true): Setup {
  const root = tempDir("fim-gate-");
  const log = join(root, "lake-calls.jsonl");
  const path = withLake ? `${FAKE_LAKE}${delimiter}${dirname(process.execPath)}` : dirname(process.execPath);
  const env = { ...process.env, PATH: path, FAKE_LAKE_LOG: log, ...extra };
  const gate = new LeanKernelGate({
    projectRoot: root,
    limits: { memoryMb: 1024, cpuSeconds: 0, sandbox: false },
    env,
  });
  const calls = () =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as string[])
      : [];
  return { root, log, gate, calls };
}

const request = (documentText: string, declarationLine: number, headerEndLine = -1): GateRequest => ({
  documentText,
  declaration: ["N", "t"],
  mayBePrivate: false,
  headerEndLine,
  declarationLine,
});

const DOC = "namespace N\ntheorem t : True := by\n  trivial\nend N\n";
const withMarker = (marker: string) => `namespace N\ntheorem t : True := by\n  trivial -- ${marker}\nend N\n`;

test("a proof: the self-test once, then compile and replay, in the project's gate folder, cleaned up after", async () => {
  const s = setup();
  try {
    const first = await s.gate.run(request(DOC, 1), 20_000);
    assert.equal(first.kind, "replayed", JSON.stringify(first));
    if (first.kind === "replayed") assert.equal(first.declaration, "N.t");
    const second = await s.gate.run(request(DOC, 1), 20_000);
    assert.equal(second.kind, "replayed");
    const calls = s.calls();
    assert.equal(calls.length, 6, "self-test (compile, replay), then two documents (compile, replay) each");
    const [compile, replay] = [calls[2]!, calls[3]!];
    assert.deepEqual(compile.slice(0, 4), ["env", "lean", "--json", "-M1024"]);
    assert.equal(compile[4], "-o");
    assert.deepEqual(replay.slice(0, 3), ["env", "lean", "--run"]);
    assert.deepEqual(
      replay.slice(-4),
      ["exact", "-", "N", "t"],
      "no reference for a document without a hole",
    );
    assert.ok(
      readFileSync(replay[3]!, "utf8").includes("FIMRLVR-GATE"),
      "the program written into the project",
    );
    assert.deepEqual(
      readdirSync(gateDir(s.root)).filter((f) => f.startsWith("run-")),
      [],
      "each run's folder is removed",
    );
  } finally {
    rmSync(s.root, { recursive: true, force: true });
  }
});

test("what the replay finds, and every way the processes fail, become reports", async () => {
  const s = setup();
  try {
    const run = (text: string, line = 1, header = -1, timeoutMs = 20_000) =>
      s.gate.run(request(text, line, header), timeoutMs);
    assert.equal((await run(withMarker("fake:kernel-reject"))).kind, "kernel-rejected");
    const axiom = await run(withMarker("fake:doc-axiom"));
    assert.equal(axiom.kind === "replayed" && axiom.axioms[0]?.declaredInDocument, true);
    const header = await run(`import Nope -- fake:error-header\n${DOC}`, 2, 0);
    assert.deepEqual(
      [header.kind, header.kind === "compile-failed" && header.inHeader],
      ["compile-failed", true],
    );
    const body = await run(withMarker("fake:error-body"));
    assert.deepEqual([body.kind, body.kind === "compile-failed" && body.inHeader], ["compile-failed", false]);
    if (body.kind === "compile-failed") assert.match(body.message, /line 3: fake error/);
    assert.equal((await run(withMarker("fake:replay-crash"))).kind, "crashed");
    assert.equal((await run(withMarker("fake:garbage"))).kind, "crashed");
    const hang = await run(withMarker("fake:hang"), 1, -1, 800);
    assert.deepEqual([hang.kind, hang.kind === "timeout" && hang.stage], ["timeout", "compile"]);
  } finally {
    rmSync(s.root, { recursive: true, force: true });
  }
});

test("an error only in a workspace command above: blanked, compiled again, replayed", async () => {
  const s = setup();
  try {
    const text = `namespace N\ndef note : String := "fake:error-above"\ntheorem t : True := by\n  trivial\nend N\n`;
    const r = await s.gate.run(request(text, 2), 20_000);
    assert.equal(r.kind, "replayed", JSON.stringify(r));
    const compiles = s.calls().filter((c) => c.includes("-o"));
    assert.equal(compiles.length, 3, "the self-test's compile, then this document twice");
  } finally {
    rmSync(s.root, { recursive: true, force: true });
  }
});

test("without lake, or with a replay program this Lean cannot run, the gate is unavailable (not a candidate's failure)", async () => {
  const none = setup({}, false);
  try {
    const r = await none.gate.run(request(DOC, 1), 5_000);
    assert.equal(r.kind, "unavailable");
    if (r.kind === "unavailable") assert.match(r.message, /lake.*not on PATH/);
  } finally {
    rmSync(none.root, { recursive: true, force: true });
  }
  const broken = setup({ FAKE_LAKE_NO_RUN: "1" });
  try {
    const r = await broken.gate.run(request(DOC, 1), 20_000);
    assert.equal(r.kind, "unavailable", JSON.stringify(r));
    if (r.kind === "unavailable") assert.match(r.message, /self-test/);
    const again = await broken.gate.run(request(DOC, 1), 20_000);
    assert.equal(again.kind, "unavailable");
    assert.equal(broken.calls().length, 2, "the self-test ran once (compile, replay); no document was tried");
  } finally {
    rmSync(broken.root, { recursive: true, force: true });
  }
});

test("a candidate that prints Lean's message on the header line is rejected, not masked: only the header alone, compiled without it, can make a failure the workspace's", async () => {
  const s = setup();
  try {
    // The scripted compile answers a marker anywhere in the document with an error on line 1, as a candidate's
    // code printing a line shaped like `lean --json` output would.
    const faked = `import Foo\nnamespace N\ntheorem t : True := by\n  trivial -- fake:error-header\nend N\n`;
    const r = await s.gate.run(request(faked, 2, 0), 20_000);
    assert.deepEqual([r.kind, r.kind === "compile-failed" && r.inHeader], ["compile-failed", false]);
    const verdict = judgeWithGate(PROVED, r, "kernel-replay", RULES);
    assert.equal(verdict.kind, "rejected", JSON.stringify(verdict));
    assert.equal(isMasked({ kind: verdict.kind }), false);
    const headerCompiles = s.calls().filter((c) => c.some((a) => a.endsWith("FimRlvrGateHeader.lean")));
    assert.equal(headerCompiles.length, 1, "the header was compiled once by itself");
    // The same error where the header itself fails (the marker in an import line): the workspace's, masked.
    const broken = await s.gate.run(request(`import Nope -- fake:error-header\n${DOC}`, 1, 0), 20_000);
    assert.equal(judgeWithGate(PROVED, broken, "kernel-replay", RULES).kind, "environment");
  } finally {
    rmSync(s.root, { recursive: true, force: true });
  }
});

/** A request of one hole (`trivial`) whose reference is its document with `sorry` there. */
const holed = (candidate: string, after = ""): GateRequest => ({
  ...request(`namespace N\ntheorem t : True := by\n  ${candidate}\nend N\n${after}`, 1),
  referenceText: `namespace N\ntheorem t : True := by\n  sorry\nend N\n${after}`,
});

test("the statement: compiled once per hole without the candidate; a replayed declaration that states something else is refuted, not masked", async () => {
  const s = setup();
  try {
    const same = await s.gate.run(holed("trivial"), 20_000);
    assert.equal(same.kind, "replayed", JSON.stringify(same));
    assert.deepEqual(same.kind === "replayed" && same.statement, { kind: "same" });
    assert.equal(judgeWithGate(PROVED, same, "kernel-replay", RULES).kind, "proved");
    const other = await s.gate.run(holed("trivial -- fake:other-statement"), 20_000);
    assert.equal(other.kind === "replayed" && other.statement?.kind, "differs", JSON.stringify(other));
    const verdict = judgeWithGate(PROVED, other, "kernel-replay", RULES);
    assert.equal(verdict.kind, "rejected", JSON.stringify(verdict));
    if (verdict.kind === "rejected") assert.match(verdict.reason, /does not state the file's statement/);
    assert.equal(isMasked({ kind: verdict.kind }), false);
    const references = s.calls().filter((c) => c.includes("-o") && c.at(-1)!.includes("gate-reference"));
    assert.equal(references.length, 1, "one reference compile for the hole's two candidates");
    const replays = s
      .calls()
      .filter((c) => c.includes("--run"))
      .slice(-2);
    for (const replay of replays) assert.match(replay.at(-3)!, /gate-reference\/.*FimRlvrGateCheck\.olean$/);
    s.gate.stop();
    assert.deepEqual(
      readdirSync(kernelGateReferencePath(s.root)),
      [],
      "the references are removed when the gate stops",
    );
  } finally {
    rmSync(s.root, { recursive: true, force: true });
  }
});

test("a reference that does not compile is the workspace's (masked); a replay that does not compare the statement confirms nothing", async () => {
  const s = setup();
  try {
    const none = await s.gate.run(holed("trivial", "-- fake:no-sorry\n"), 20_000);
    assert.equal(none.kind, "no-reference", JSON.stringify(none));
    const verdict = judgeWithGate(PROVED, none, "kernel-replay", RULES);
    assert.equal(verdict.kind, "environment", JSON.stringify(verdict));
    const unjudged = await s.gate.run(holed("trivial -- fake:no-statement"), 20_000);
    assert.equal(unjudged.kind, "crashed", JSON.stringify(unjudged));
    assert.equal(judgeWithGate(PROVED, unjudged, "kernel-replay", RULES).kind, "rejected");
  } finally {
    rmSync(s.root, { recursive: true, force: true });
  }
});

test("prepare compiles a hole's reference ahead of its proofs, once; one that failed there is not compiled again by prepare, only by a proof", async () => {
  const s = setup();
  try {
    const referenceCompiles = () =>
      s.calls().filter((c) => c.includes("-o") && c.at(-1)!.includes("gate-reference")).length;
    s.gate.prepare(holed("skip"), 20_000);
    s.gate.prepare(holed("exact True.intro"), 20_000);
    const proof = await s.gate.run(holed("trivial"), 20_000);
    assert.equal(proof.kind, "replayed", JSON.stringify(proof));
    assert.deepEqual(
      s.gate.referenceCompiles,
      { ahead: 1, onProof: 0 },
      "the proof used the reference prepared",
    );
    assert.equal(referenceCompiles(), 1);
    // A reference that does not compile: prepare tries it once; the proof's run tries it again, and says why.
    const broken = (candidate: string) => holed(candidate, "-- fake:no-sorry\n");
    s.gate.prepare(broken("skip"), 20_000);
    const first = await s.gate.run(broken("trivial"), 20_000);
    assert.equal(first.kind, "no-reference", JSON.stringify(first));
    s.gate.prepare(broken("exact True.intro"), 20_000);
    s.gate.prepare(broken("skip"), 20_000);
    assert.deepEqual(s.gate.referenceCompiles, { ahead: 2, onProof: 0 }, "not prepared again");
    const again = await s.gate.run(broken("trivial -- again"), 20_000);
    assert.equal(again.kind, "no-reference", JSON.stringify(again));
    assert.deepEqual(s.gate.referenceCompiles, { ahead: 2, onProof: 1 }, "a proof's run tries it again");
  } finally {
    s.gate.stop();
    rmSync(s.root, { recursive: true, force: true });
  }
});

test("the replay's statement field is read strictly", () => {
  const base = '{"kind":"replayed","declaration":"N.t","replayed":1,"axioms":[]';
  const read = (extra: string) => parseReplayAnswer(`FIMRLVR-GATE ${base}${extra}}`, 1);
  assert.deepEqual(read(',"statement":"same"')?.kind === "replayed" && read(',"statement":"same"'), {
    kind: "replayed",
    declaration: "N.t",
    replayed: 1,
    axioms: [],
    statement: { kind: "same" },
    elapsedMs: 1,
  });
  const differs = read(',"statement":"differs","statementMessage":"its type differs"');
  assert.deepEqual(differs?.kind === "replayed" && differs.statement, {
    kind: "differs",
    message: "its type differs",
  });
  assert.equal(read(',"statement":"differs"'), undefined, "a difference without its message");
  assert.equal(read(',"statement":"equal"'), undefined);
  assert.equal(read("")?.kind === "replayed" && read("")?.kind, "replayed");
});
