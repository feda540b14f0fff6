/**
 * The kernel gate's decisions (lean-bridge/verify/kernelGate.ts, gateStage.ts): what each report of a gate
 * makes of a proof, which axioms pass, which proofs the modes send through the gate, that a draw or a cache
 * never lets a refuted document pass, that only reports about the document are cached, and what the trainer
 * sees of a refutation (a hack, reward 0, never masked).
 */
import { test } from "node:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { declaredByDocument } from "../../lean-bridge/verify/classify";
import { countRefutations, refutationLogPath } from "../../lean-bridge/verify/refutationLog";
import assert from "node:assert/strict";
import { parseFile } from "../../lean-bridge/lean/commands";
import { LineIndex } from "../../lean-bridge/text/positions";
import { batchVerdict } from "../../lean-bridge/serve/wire";
import { buildCheckDocument, locateHole, type CheckDocument } from "../../lean-bridge/verify/checkDocument";
import {
  axiomFailure,
  judgeWithGate,
  type GateAxiom,
  type GateAxiomRules,
  type GateReport,
  type GateRequest,
  type KernelGateBackend,
} from "../../lean-bridge/verify/kernelGate";
import {
  AUTO_WARMUP_RUNS,
  GateCosts,
  KernelGateStage,
  MIN_AUTO_SHARE,
  isImportedStatement,
  parseKernelGateMode,
  type KernelGateMode,
} from "../../lean-bridge/verify/gateStage";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import {
  KERNEL_GATE_RULE,
  isKernelGateFailure,
  isMasked,
  type Verdict,
  type VerdictOutcome,
} from "../../lean-bridge/verify/verdict";
import { proofHole } from "../helpers";

const PROVED: VerdictOutcome = {
  kind: "proved",
  axioms: ["propext"],
  axiomsChecked: true,
  confirmedBy: "server",
  diagnostics: [],
};

const RULES: GateAxiomRules = {
  checkedName: "N.t",
  isPrivate: false,
  mayBePrivate: false,
  allowNative: false,
  legacyNativeExists: true,
};

const imported = (name: string): GateAxiom => ({ name, declaredInDocument: false, nativeShape: false });
const replayed = (axioms: GateAxiom[], declaration = "N.t"): GateReport => ({
  kind: "replayed",
  declaration,
  replayed: 3,
  axioms,
  elapsedMs: 1,
});

function asVerdict(outcome: VerdictOutcome): Verdict {
  return { ...outcome, elapsedMs: 1, verifier: { kind: "simulator", version: "t", label: "t" } } as Verdict;
}

/** A refutation: rejected by the gate's rule, reward 0 in both modes, never masked, a hack on the wire. */
function assertRefuted(outcome: VerdictOutcome, why: RegExp): void {
  assert.equal(outcome.kind, "rejected", JSON.stringify(outcome));
  if (outcome.kind !== "rejected") return;
  assert.equal(outcome.rule, KERNEL_GATE_RULE);
  assert.match(outcome.reason, why);
  const v = asVerdict(outcome);
  assert.equal(isKernelGateFailure(v), true);
  assert.equal(isMasked(v), false, "a refuted proof is trained on, never masked");
  assert.equal(rewardOf(v, "binary").reward, 0);
  assert.equal(rewardOf(v, "partial").reward, 0);
  const wire = batchVerdict("task-1", v, "partial");
  assert.equal(wire.hack, true);
  assert.equal(wire.rule, KERNEL_GATE_RULE);
  assert.equal(wire.reward, 0);
  assert.match(wire.diagnostics[0]?.message ?? "", /kernel gate/, "the reason reaches the trainer");
}

test("a replay with allowed, imported axioms confirms the proof and names the gate", () => {
  const v = judgeWithGate(
    PROVED,
    replayed([imported("propext"), imported("Quot.sound")]),
    "kernel-replay",
    RULES,
  );
  assert.equal(v.kind, "proved");
  if (v.kind !== "proved") return;
  assert.equal(v.confirmedBy, "kernel-replay");
  assert.deepEqual(v.axioms, ["Quot.sound", "propext"], "the replay's axioms join the server's");
  const wire = batchVerdict("t", asVerdict(v), "binary");
  assert.equal(wire.confirmedBy, "kernel-replay");
  assert.equal(wire.hack, undefined);
  assert.equal(wire.reward, 1);
  // A private declaration printed as Lean mangles it is the checked one.
  const priv = judgeWithGate(PROVED, replayed([], "_private.FimRlvrGateCheck.0.N.t"), "kernel-replay", {
    ...RULES,
    isPrivate: true,
  });
  assert.equal(priv.kind, "proved");
});

test("a replay of another declaration, or with a forbidden axiom, refutes the proof", () => {
  assertRefuted(judgeWithGate(PROVED, replayed([], "N.other"), "kernel-replay", RULES), /not the checked/);
  assertRefuted(
    judgeWithGate(
      PROVED,
      replayed([{ name: "N.cheat", declaredInDocument: true, nativeShape: false }]),
      "kernel-replay",
      RULES,
    ),
    /axiom 'N.cheat', declared in the checked document/,
  );
  // An axiom named like an allowed one, but declared by the document, is not Lean's.
  assertRefuted(
    judgeWithGate(
      PROVED,
      replayed([{ name: "propext", declaredInDocument: true, nativeShape: false }]),
      "kernel-replay",
      RULES,
    ),
    /declared in the checked document/,
  );
  assertRefuted(
    judgeWithGate(PROVED, replayed([imported("Mathlib.Foo.cheat")]), "kernel-replay", RULES),
    /outside the allow-list/,
  );
  assertRefuted(
    judgeWithGate(PROVED, replayed([imported("Lean.ofReduceBool")]), "kernel-replay", RULES),
    /outside the allow-list/,
    // Native code without allowNative fails as any other axiom.
  );
});

test("native axioms: only the checked declaration's own, made as Lean makes them, and the legacy ones only where Lean has them", () => {
  const native = RULES.checkedName + "._native.native_decide.ax_1_1";
  const own: GateAxiom = { name: native, declaredInDocument: true, nativeShape: true };
  const allow = { ...RULES, allowNative: true };
  assert.equal(axiomFailure(own, allow), undefined);
  assert.match(axiomFailure({ ...own, nativeShape: false }, allow) ?? "", /not one Lean made/);
  assert.match(
    axiomFailure({ ...own, name: "N.helper._native.native_decide.ax_1_1" }, allow) ?? "",
    /another declaration/,
  );
  assert.match(axiomFailure(own, RULES) ?? "", /declared in the checked document/, "without allowNative");
  const legacy = imported("Lean.ofReduceBool");
  assert.equal(axiomFailure(legacy, allow), undefined, "before 4.35 the legacy axiom is Lean's");
  assert.ok(
    axiomFailure(legacy, { ...allow, legacyNativeExists: false }),
    "from 4.35 no such axiom is Lean's",
  );
  assert.ok(
    axiomFailure({ name: "Lean.ofReduceBool", declaredInDocument: true, nativeShape: true }, allow),
    "a document's own Lean.ofReduceBool is not the prelude's",
  );
  const v = judgeWithGate(PROVED, replayed([imported("propext"), own]), "kernel-replay", allow);
  assert.equal(v.kind, "proved", JSON.stringify(v));
});

test("every failure a candidate could cause refutes the proof; only what it cannot is the workspace's", () => {
  const kernel: GateReport = {
    kind: "kernel-rejected",
    declaration: "N.t",
    message: "(kernel) declaration type mismatch, 'N.cheat' has type True but is expected to have type False",
    elapsedMs: 1,
  };
  assertRefuted(judgeWithGate(PROVED, kernel, "kernel-replay", RULES), /kernel refused.*N\.cheat/);
  assertRefuted(
    judgeWithGate(
      PROVED,
      { kind: "missing", message: "no declaration N.t", elapsedMs: 1 },
      "kernel-replay",
      RULES,
    ),
    /no declaration/,
  );
  assertRefuted(
    judgeWithGate(
      PROVED,
      { kind: "compile-failed", message: "line 9: unknown identifier", inHeader: false, elapsedMs: 1 },
      "kernel-replay",
      RULES,
    ),
    /does not compile in a fresh Lean process/,
  );
  assertRefuted(
    judgeWithGate(
      PROVED,
      { kind: "timeout", stage: "compile", timeoutMs: 240000, elapsedMs: 1 },
      "kernel-replay",
      RULES,
    ),
    /240000 ms/,
  );
  assertRefuted(
    judgeWithGate(
      PROVED,
      { kind: "crashed", stage: "replay", message: "killed by SIGKILL", elapsedMs: 1 },
      "kernel-replay",
      RULES,
    ),
    /SIGKILL/,
  );
  const header = judgeWithGate(
    PROVED,
    {
      kind: "compile-failed",
      message: "line 1: unknown module prefix 'Mathlib'",
      inHeader: true,
      elapsedMs: 1,
    },
    "kernel-replay",
    RULES,
  );
  assert.equal(header.kind, "environment");
  const unavailable = judgeWithGate(
    PROVED,
    { kind: "unavailable", message: "`lake` is not on PATH", action: "install Lean", elapsedMs: 1 },
    "kernel-replay",
    RULES,
  );
  assert.equal(unavailable.kind, "environment");
  if (unavailable.kind === "environment") assert.equal(unavailable.action, "install Lean");
  // A verdict that is not a proof passes through.
  const failed: VerdictOutcome = { kind: "failed", reason: "x", diagnostics: [] };
  assert.equal(judgeWithGate(failed, kernel, "kernel-replay", RULES), failed);
});

test("--kernel-gate values", () => {
  const ok = (t: string) => parseKernelGateMode(t) as KernelGateMode;
  assert.deepEqual(ok("all"), { kind: "all" });
  assert.deepEqual(ok("off"), { kind: "off" });
  assert.deepEqual(ok("auto"), { kind: "auto" });
  assert.deepEqual(ok("share:0.25"), { kind: "share", share: 0.25 });
  assert.deepEqual(ok("share:1"), { kind: "all" });
  for (const bad of ["share:0", "share:1.5", "share:", "half", ""])
    assert.equal(parseKernelGateMode(bad).kind, "error", bad);
});

test("auto: every proof while the gate costs under 2 checks, then a share sized to that, never under the floor", () => {
  const costs = new GateCosts();
  assert.equal(costs.autoShare(), 1, "nothing measured yet");
  for (let k = 0; k < AUTO_WARMUP_RUNS; k++) {
    costs.noteCheck(100);
    costs.noteGate(150);
  }
  assert.equal(costs.autoShare(), 1, "1.5 checks");
  const dear = new GateCosts();
  for (let k = 0; k < AUTO_WARMUP_RUNS; k++) {
    dear.noteCheck(100);
    dear.noteGate(1000);
  }
  assert.ok(Math.abs(dear.autoShare() - 0.2) < 1e-9, String(dear.autoShare()));
  const dearer = new GateCosts();
  for (let k = 0; k < AUTO_WARMUP_RUNS; k++) {
    dearer.noteCheck(1);
    dearer.noteGate(1000);
  }
  assert.equal(dearer.autoShare(), MIN_AUTO_SHARE);
});

test("imported statements are named by their namespace or their folder", () => {
  assert.equal(isImportedStatement("Foo.lean", "FimRlvrImported.R000042.t"), true);
  assert.equal(isImportedStatement("FimRlvrImported/x/H1/P0/R42_t.lean", "t"), true);
  assert.equal(isImportedStatement(".fim-rlvr/statements/x/H1/P0/R42_t.lean", "t"), true);
  assert.equal(isImportedStatement("FimExamples/Arith.lean", "FimExamples.add_zero"), false);
});

// The stage, over a scripted backend and a real check document.

const FILE = "namespace N\n\ntheorem t (a : Nat) : a = a := by\n  rfl\n\nend N\n";

function checkDoc(candidate = "rfl", file = FILE): CheckDocument {
  const parsed = parseFile(file);
  const located = locateHole(parsed, new LineIndex(file), proofHole(file, "t"));
  assert.equal(located.kind, "ok");
  if (located.kind !== "ok") throw new Error("bad hole");
  const built = buildCheckDocument(parsed, located.hole, candidate);
  assert.equal(built.kind, "ok");
  if (built.kind !== "ok") throw new Error("bad doc");
  return built.doc;
}

class ScriptedGate implements KernelGateBackend {
  readonly name = "kernel-replay" as const;
  readonly seen: GateRequest[] = [];
  active = 0;
  maxActive = 0;
  constructor(private readonly answer: (r: GateRequest) => GateReport) {}
  async run(request: GateRequest): Promise<GateReport> {
    this.seen.push(request);
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    await new Promise((r) => setImmediate(r));
    this.active--;
    return this.answer(request);
  }
}

function stage(backend: KernelGateBackend, mode: KernelGateMode, draws: number[] = [], concurrency = 2) {
  return new KernelGateStage(
    { backend, mode, timeoutMs: 1000, concurrency, draw: () => draws.shift() ?? 0 },
    { kind: "simulator", version: "t", label: "t" },
    {},
  );
}

const input = (doc: CheckDocument, file = "FimExamples/T.lean") => ({
  file,
  doc,
  proved: PROVED,
  allowedAxioms: ["propext", "Classical.choice", "Quot.sound"],
  allowNative: false,
  legacyNativeExists: true,
});

test("the stage asks the backend about the checked declaration, as components, with its header line", async () => {
  const gate = new ScriptedGate(() => replayed([imported("propext")]));
  const doc = checkDoc();
  const v = await stage(gate, { kind: "all" }).confirm(input(doc));
  assert.equal(v.kind === "proved" && v.confirmedBy, "kernel-replay");
  assert.deepEqual(gate.seen[0]?.declaration, ["N", "t"]);
  assert.equal(gate.seen[0]?.documentText, doc.text);
  assert.equal(gate.seen[0]?.headerEndLine, doc.headerEndLine);
});

test("a share: the draw decides, not the candidate; imported statements and refuted documents are always gated", async () => {
  const gate = new ScriptedGate(() => replayed([]));
  const s = stage(gate, { kind: "share", share: 0.5 }, [0.7, 0.3]);
  const left = await s.confirm(input(checkDoc("rfl")));
  assert.equal(left.kind === "proved" && left.confirmedBy, "server", "drawn out: the server's word");
  assert.equal(gate.seen.length, 0);
  const taken = await s.confirm(input(checkDoc("exact rfl")));
  assert.equal(taken.kind === "proved" && taken.confirmedBy, "kernel-replay");
  assert.deepEqual([s.stats.passedOver, s.stats.gated], [1, 1]);
  // An imported statement's proof goes through the gate whatever the draw.
  const never = stage(
    new ScriptedGate(() => replayed([], "FimRlvrImported.R000001.t")),
    { kind: "share", share: 0.01 },
    [0.99],
  );
  const importedFile = FILE.replace("namespace N", "namespace FimRlvrImported.R000001").replace(
    "end N",
    "end FimRlvrImported.R000001",
  );
  const v = await never.confirm(input(checkDoc("rfl", importedFile)));
  assert.equal(v.kind === "proved" && v.confirmedBy, "kernel-replay");

  // Once refuted, a document stays refuted: a later copy is answered from the cache even when drawn out.
  const refuter = new ScriptedGate(() => ({
    kind: "kernel-rejected",
    declaration: "N.t",
    message: "(kernel) no",
    elapsedMs: 1,
  }));
  const r = stage(refuter, { kind: "share", share: 0.5 }, [0.1, 0.9]);
  assertRefuted(await r.confirm(input(checkDoc())), /\(kernel\) no/);
  assertRefuted(await r.confirm(input(checkDoc())), /\(kernel\) no/);
  assert.equal(refuter.seen.length, 1, "the second copy came from the cache");
  assert.equal(r.stats.refuted, 2);
  // After a refutation every later proof is gated, whatever the draw: a hack the policy repeats is never paid.
  assert.equal(r.escalated, true);
  const afterHack = await r.confirm(input(checkDoc("exact rfl")));
  assert.equal(afterHack.kind, "rejected", "drawn out by 0.9 against a share of 0.5, gated all the same");
  assert.equal(refuter.seen.length, 2);
  assert.equal(s.escalated, false, "no refutation, no escalation");
});

test("off never gates; reports that say nothing about the document are not cached", async () => {
  const off = new ScriptedGate(() => replayed([]));
  const v = await stage(off, { kind: "off" }).confirm(input(checkDoc()));
  assert.equal(v.kind === "proved" && v.confirmedBy, "server");
  assert.equal(off.seen.length, 0);
  const slow = new ScriptedGate(() => ({
    kind: "timeout",
    stage: "compile",
    timeoutMs: 1000,
    elapsedMs: 1000,
  }));
  const s = stage(slow, { kind: "all" });
  assertRefuted(await s.confirm(input(checkDoc())), /1000 ms/);
  assertRefuted(await s.confirm(input(checkDoc())), /1000 ms/);
  assert.equal(slow.seen.length, 2, "a timeout is asked again");
});

test("identical documents in flight share one run; different ones queue behind the concurrency limit", async () => {
  const gate = new ScriptedGate(() => replayed([]));
  const s = stage(gate, { kind: "all" }, [], 1);
  const docs = [checkDoc("rfl"), checkDoc("rfl"), checkDoc("exact rfl"), checkDoc("simp")];
  const verdicts = await Promise.all(docs.map((d) => s.confirm(input(d))));
  assert.ok(verdicts.every((v) => v.kind === "proved"));
  assert.equal(gate.seen.length, 3, "the two identical documents ran once");
  assert.equal(gate.maxActive, 1);
  assert.equal(s.stats.runs, 3);
});

test("a gate that cannot run leaves no proof to the server's word: under share and auto every one is masked, drawn or not", async () => {
  const away: GateReport = { kind: "unavailable", message: "no lake", action: "install Lean", elapsedMs: 0 };
  for (const mode of [{ kind: "share", share: 0.1 }, { kind: "auto" }] as KernelGateMode[]) {
    const gate = new ScriptedGate(() => replayed([]));
    let readyAsked = 0;
    const backend: KernelGateBackend = {
      name: "kernel-replay",
      run: (r) => gate.run(r),
      ready: () => {
        readyAsked++;
        return Promise.resolve(away);
      },
    };
    // Draws of 0.99 leave every proof out of a 10% share.
    const s = stage(backend, mode, [0.99, 0.99, 0.99, 0.99]);
    const verdicts = await Promise.all(
      ["rfl", "exact rfl", "simp", "decide"].map((c) => s.confirm(input(checkDoc(c)))),
    );
    assert.deepEqual(
      verdicts.map((v) => v.kind),
      ["environment", "environment", "environment", "environment"],
      `${mode.kind}: ${JSON.stringify(verdicts)}`,
    );
    assert.ok(verdicts.every((v) => isMasked(asVerdict(v))));
    assert.equal(s.stats.passedOver, 0);
    assert.equal(gate.seen.length, 0, "nothing ran");
    assert.equal(readyAsked, 1, "the self-test is asked once");
  }
});

test("a gate that stops being able to run answers every later proof, drawn or not", async () => {
  const gate = new ScriptedGate(() => ({
    kind: "unavailable",
    message: "lake vanished",
    action: "install",
    elapsedMs: 0,
  }));
  const s = stage(gate, { kind: "share", share: 0.5 }, [0, 0.99, 0.99]);
  const first = await s.confirm(input(checkDoc("rfl")));
  const later = await s.confirm(input(checkDoc("simp")));
  assert.deepEqual([first.kind, later.kind], ["environment", "environment"]);
  assert.equal(s.stats.passedOver, 0);
});

test("refutations are recorded in PROJECT/.fim-rlvr/refutations.jsonl and escalate a restarted stage", async () => {
  const root = mkdtempSync(join(tmpdir(), "fimrlvr-refutations-"));
  try {
    const log = refutationLogPath(root);
    assert.equal(log, join(root, ".fim-rlvr", "refutations.jsonl"));
    const refuting = new ScriptedGate(() => ({
      kind: "kernel-rejected",
      declaration: "N.t",
      message: "(kernel) no",
      elapsedMs: 1,
    }));
    const first = new KernelGateStage(
      {
        backend: refuting,
        mode: { kind: "share", share: 0.1 },
        timeoutMs: 1000,
        concurrency: 1,
        draw: () => 0,
        refutationLog: log,
      },
      { kind: "simulator", version: "t", label: "t" },
      {},
    );
    assert.equal(first.escalated, false);
    assert.equal((await first.confirm(input(checkDoc("rfl")))).kind, "rejected");
    const lines = readFileSync(log, "utf8").trim().split("\n");
    assert.equal(lines.length, 1);
    const record = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.equal(record.declaration, "N.t");
    assert.equal(record.gate, "kernel-replay");
    // A crash mid-write leaves a line cut short: it is skipped, never fatal.
    appendFileSync(log, '{"at":"2026-12-01T00:00:00Z","decl');
    // A restart: the new stage reads the record and gates every proof, whatever its share's draws say.
    const confirming = new ScriptedGate(() => replayed([]));
    const second = new KernelGateStage(
      {
        backend: confirming,
        mode: { kind: "share", share: 0.1 },
        timeoutMs: 1000,
        concurrency: 1,
        draw: () => 0.99,
        refutationLog: log,
      },
      { kind: "simulator", version: "t", label: "t" },
      {},
    );
    assert.equal(second.priorRefutations, 1);
    assert.equal(second.escalated, true);
    const v = await second.confirm(input(checkDoc("simp")));
    assert.equal(v.kind === "proved" && v.confirmedBy, "kernel-replay");
    assert.equal(second.stats.passedOver, 0);
    assert.equal(countRefutations(join(root, "none.jsonl")), 0);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("an allowed axiom's name declared by the check document is that document's axiom, not the allowed one", () => {
  const own =
    "prelude\ninductive False : Prop\naxiom propext : False\ntheorem t : False := by\n  exact propext\n";
  assert.deepEqual(declaredByDocument(own, ["propext"]), ["propext"]);
  assert.deepEqual(declaredByDocument("namespace X\naxiom propext : False\nend X\n", ["propext"]), []);
  assert.deepEqual(declaredByDocument("namespace X\naxiom propext : False\nend X\n", ["X.propext"]), [
    "X.propext",
  ]);
  assert.deepEqual(declaredByDocument("theorem t : True := by\n  exact propext\n", ["propext"]), []);
});
