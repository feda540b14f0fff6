import { test } from "node:test";
import assert from "node:assert/strict";
import { parseFile } from "../../lean-bridge/lean/commands";
import { LineIndex } from "../../lean-bridge/text/positions";
import { buildCheckDocument, locateHole } from "../../lean-bridge/verify/checkDocument";
import {
  classify,
  legacyNativeAxiomsExist,
  nativeAxiomAccepted,
  nativeAxiomOwner,
  parseAxioms,
} from "../../lean-bridge/verify/classify";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { featuresOfToolchain } from "../../lean-bridge/verify/toolchain";
import { checkLeanView } from "../../lean-bridge/verify/leanView";
import { LeanDiagnosticTag, type LeanDiagnostic } from "../../lean-bridge/protocol/lean";
import type { Verdict } from "../../lean-bridge/verify/verdict";
import { proofHole, realPayloads } from "../helpers";

const FILE = "theorem early : 1 = 1 := by\n  rfl\n\ntheorem t (a : Nat) : a = a := by\n  skip\n  rfl\n";

function doc(candidate = "skip\n  rfl") {
  const parsed = parseFile(FILE);
  const located = locateHole(parsed, new LineIndex(FILE), proofHole(FILE, "t"));
  if (located.kind !== "ok") throw new Error("bad hole");
  const built = buildCheckDocument(parsed, located.hole, candidate);
  if (built.kind !== "ok") throw new Error("bad doc");
  return built.doc;
}

const at = (line: number, character: number, endChar = character + 1) => ({
  start: { line, character },
  end: { line, character: endChar },
});
const axiomsInfo = (message: string): LeanDiagnostic => ({ range: at(7, 0, 20), severity: 3, message });

test("axiom lists are read even when Lean wraps them over lines", () => {
  assert.deepEqual(parseAxioms("'x' depends on axioms: [propext,\n Classical.choice,\n Quot.sound]"), [
    "propext",
    "Classical.choice",
    "Quot.sound",
  ]);
  assert.deepEqual(parseAxioms("'x' does not depend on any axioms"), []);
  assert.deepEqual(
    parseAxioms("'A.add_zero'' depends on axioms: [propext]"),
    ["propext"],
    "a name with a prime",
  );
  assert.deepEqual(parseAxioms("'A.two_mul'' does not depend on any axioms"), []);
  assert.equal(parseAxioms("something else"), undefined);
});

test("clean diagnostics with allowed axioms prove; sorryAx or foreign axioms do not", () => {
  const d = doc();
  assert.equal(classify(d, [axiomsInfo("'t' depends on axioms: [propext]")], false).kind, "proved");
  assert.equal(classify(d, [axiomsInfo("'t' depends on axioms: [sorryAx]")], false).kind, "incomplete");
  const foreign = classify(d, [axiomsInfo("'t' depends on axioms: [Lean.ofReduceBool]")], false);
  assert.equal(foreign.kind, "failed");
  assert.equal(classify(d, [], false).kind, "failed", "no #print axioms output is not a proof");
  const checked = classify(d, [axiomsInfo("'t' does not depend on any axioms")], false);
  assert.equal(checked.kind === "proved" && checked.axiomsChecked, true);
});

test("errors before the declaration are ignored; errors in it fail with candidate-relative ranges", () => {
  const d = doc();
  const before: LeanDiagnostic = { range: at(1, 2), severity: 1, message: "boom" };
  assert.equal(classify(d, [before, axiomsInfo("'t' does not depend on any axioms")], false).kind, "proved");
  const inCandidate: LeanDiagnostic = { range: at(5, 2, 5), severity: 1, message: "Type mismatch" };
  const r = classify(d, [inCandidate], false);
  assert.equal(r.kind, "failed");
  // The candidate keeps its own layout ("skip\n  rfl"), so `rfl` sits at character 2 of its line 1.
  assert.deepEqual(r.diagnostics[0]?.candidateRange, {
    start: { line: 1, character: 2 },
    end: { line: 1, character: 5 },
  });
});

test("the real Lean payloads classify as Lean meant them", () => {
  const [incremental] = realPayloads();
  const d = doc();
  // The first real payload holds an unsolved-goals error (leanTags [1]) and a tactic error.
  const unsolvedOnly = incremental!.diagnostics
    .filter((x) => x.leanTags?.includes(1))
    .map((x) => ({ ...x, range: at(3, 25), fullRange: at(5, 5) }));
  const r = classify(d, unsolvedOnly, false);
  assert.equal(r.kind, "incomplete");
  if (r.kind === "incomplete") assert.equal(r.goalsLeft, 1);
  const both = incremental!.diagnostics.map((x) => ({ ...x, range: at(4, 2) }));
  assert.equal(classify(d, both, false).kind, "failed");
  const sorry: LeanDiagnostic = { range: at(3, 8, 9), severity: 2, message: "declaration uses 'sorry'" };
  assert.equal(classify(d, [sorry], false).kind, "incomplete");
  assert.equal(classify(d, [{ ...sorry, message: "declaration uses `sorry`" }], false).kind, "incomplete");
});

test("rewards: binary by default; partial pays only for fewer goals than at the hole, never for length", () => {
  const base = { elapsedMs: 1, verifier: { kind: "simulator" as const, version: "x", label: "simulator" } };
  const proved: Verdict = { ...base, kind: "proved", axioms: [], axiomsChecked: true, diagnostics: [] };
  const failedAt = (line: number): Verdict => ({
    ...base,
    kind: "failed",
    reason: "x",
    diagnostics: [{ severity: 1, message: "e", range: at(0, 0), candidateRange: at(line, 0) }],
  });
  // Goals after the candidate (plainGoal at its end) and at the hole's start; the proof's later steps may
  // leave a different number (goalsLeft), which never counts.
  const left = (goalsAfterCandidate: number, goalsAtHole?: number): Verdict => ({
    ...base,
    kind: "incomplete",
    reason: "unsolved-goals",
    goalsLeft: 1,
    goalsAfterCandidate,
    ...(goalsAtHole !== undefined ? { goalsAtHole } : {}),
    diagnostics: [],
  });
  assert.equal(rewardOf(proved).reward, 1);
  assert.equal(rewardOf(proved, "partial").reward, 1);
  assert.equal(rewardOf(failedAt(3)).reward, 0);
  // No-op lines before an error no longer buy anything.
  assert.equal(rewardOf(failedAt(3), "partial").reward, 0);
  assert.equal(rewardOf(failedAt(30), "partial").reward, 0);
  // Doing nothing leaves the goals as they were: exactly 0.
  assert.equal(rewardOf(left(1, 1), "partial").reward, 0);
  assert.equal(rewardOf(left(3, 2), "partial").reward, 0);
  assert.equal(rewardOf(left(1), "partial").reward, 0, "no goal count from Lean, no partial credit");
  assert.equal(rewardOf(left(1, 2), "partial").reward, 0.25);
  assert.ok(rewardOf(left(1, 4), "partial").reward > rewardOf(left(3, 4), "partial").reward);
  assert.ok(rewardOf(left(0, 4), "partial").reward < 1);
  assert.equal(rewardOf(left(1, 2), "binary").reward, 0);
  const noAfter: Verdict = {
    ...base,
    kind: "incomplete",
    reason: "unsolved-goals",
    goalsLeft: 0,
    goalsAtHole: 3,
    diagnostics: [],
  };
  assert.equal(rewardOf(noAfter, "partial").reward, 0, "the goals after the candidate must come from Lean");
});

test("anonymous declarations are axiom-checked under the verifier's name", () => {
  const text = "example (a : Nat) : a = a := by\n  rfl\n";
  const parsed = parseFile(text);
  const located = locateHole(parsed, new LineIndex(text), {
    start: { line: 1, character: 2 },
    end: { line: 1, character: 5 },
  });
  if (located.kind !== "ok") throw new Error("bad hole");
  const built = buildCheckDocument(parsed, located.hole, "rfl");
  if (built.kind !== "ok") throw new Error("bad doc");
  const name = built.doc.checkedName;
  assert.ok(built.doc.axiomsLine > 0);
  assert.match(built.doc.text, new RegExp(`#print axioms _root_\\.${name}`));
  const line = built.doc.axiomsLine;
  const info = (message: string): LeanDiagnostic => ({ range: at(line, 0, 20), severity: 3, message });
  // An example is not a theorem: Lean must also confirm that it states a proposition.
  assert.ok(built.doc.propCheckLine > 0 && built.doc.propCheckLine < line);
  assert.match(built.doc.text, new RegExp(`#check \\(type_of% @_root_\\.${name} : Prop\\)`));
  const isProp: LeanDiagnostic = {
    range: at(built.doc.propCheckLine, 0, 20),
    severity: 3,
    message: `type_of% @${name} : Prop`,
  };
  assert.equal(classify(built.doc, [isProp], false).kind, "failed", "no #print axioms output: not proved");
  const ok = classify(built.doc, [isProp, info(`'${name}' depends on axioms: [propext]`)], false);
  assert.equal(ok.kind, "proved");
  assert.equal(ok.kind === "proved" && ok.axiomsChecked, true);
  const native = classify(
    built.doc,
    [isProp, info(`'${name}' depends on axioms: [Lean.ofReduceBool]`)],
    false,
  );
  assert.equal(native.kind, "failed");
  const unconfirmed = classify(built.doc, [info(`'${name}' depends on axioms: [propext]`)], false);
  assert.equal(unconfirmed.kind, "rejected", "no answer to the proposition check: never proved");
  const data: LeanDiagnostic = {
    range: at(built.doc.propCheckLine, 0, 20),
    severity: 1,
    message: "type mismatch\n  Nat\nhas type\n  Type : Type 1\nbut is expected to have type\n  Prop : Type",
  };
  const answer = classify(built.doc, [data, info(`'${name}' depends on axioms: [propext]`)], false);
  assert.equal(answer.kind, "rejected");
  if (answer.kind === "rejected") assert.equal(answer.rule, "not-a-proposition");
});

test("a theorem needs no proposition check: Lean requires its type to be one", () => {
  assert.equal(doc("rfl").propCheckLine, -1);
  assert.doesNotMatch(doc("rfl").text, /type_of%/);
});

test("partial credit is classified by Lean's tag and place, never by message text", () => {
  const d = doc("skip");
  const index = new LineIndex(d.text);
  const by = index.positionAt(d.declaration.byStart ?? 0);
  const inCandidate = index.positionAt(d.candidateStart);
  const unsolvedAt = (p: { line: number; character: number }, tagged = true): LeanDiagnostic => ({
    range: { start: p, end: { line: p.line, character: p.character + 2 } },
    severity: 1,
    message: "unsolved goals\n⊢ P",
    ...(tagged ? { leanTags: [LeanDiagnosticTag.unsolvedGoals] } : {}),
  });
  // The hole's own block, reported where it opens: incomplete.
  assert.equal(classify(d, [unsolvedAt(by)], false).kind, "incomplete");
  // The same words without Lean's tag (`fail "unsolved goals"`): a failure.
  assert.equal(classify(d, [unsolvedAt(by, false)], false).kind, "failed");
  // A nested block inside the candidate left open (`exact (by skip)`): a failure, not progress.
  const nested = classify(d, [unsolvedAt(inCandidate)], false);
  assert.equal(nested.kind, "failed");
  if (nested.kind === "failed") assert.match(nested.reason, /inside the candidate/);
  // Both: still a failure.
  assert.equal(classify(d, [unsolvedAt(by), unsolvedAt(inCandidate)], false).kind, "failed");
});

test("the #print axioms answer must name exactly the checked declaration, once", () => {
  const d = doc("rfl");
  const line = d.axiomsLine;
  const info = (message: string): LeanDiagnostic => ({ range: at(line, 0, 20), severity: 3, message });
  assert.equal(classify(d, [info("'t' does not depend on any axioms")], false).kind, "proved");
  const other = classify(d, [info("'Inner.t' does not depend on any axioms")], false);
  assert.equal(other.kind, "failed");
  if (other.kind === "failed") assert.match(other.reason, /not the checked declaration/);
  const twice = [info("'t' does not depend on any axioms"), info("'t' does not depend on any axioms")];
  assert.equal(classify(d, twice, false).kind, "failed");
  assert.equal(classify(d, [info("'«t»' does not depend on any axioms")], false).kind, "proved");
});

test("private declarations answer as _private.<Module>.0.<name>", () => {
  const text = "namespace P\nprivate theorem s (a : Nat) : a = a := by\n  rfl\nend P\n";
  const parsed = parseFile(text);
  const located = locateHole(parsed, new LineIndex(text), {
    start: { line: 2, character: 2 },
    end: { line: 2, character: 5 },
  });
  if (located.kind !== "ok") throw new Error("bad hole");
  const built = buildCheckDocument(parsed, located.hole, "rfl");
  if (built.kind !== "ok") throw new Error("bad doc");
  const info = (message: string): LeanDiagnostic => ({
    range: at(built.doc.axiomsLine, 0, 20),
    severity: 3,
    message,
  });
  const ok = (m: string) => classify(built.doc, [info(m)], false).kind;
  assert.equal(ok("'_private.Foo.Bar.0.P.s' does not depend on any axioms"), "proved");
  assert.equal(ok("'_private.«.fim-rlvr».Slot0.0.P.s' does not depend on any axioms"), "proved");
  assert.equal(ok("'P.s' does not depend on any axioms"), "failed");
  assert.equal(ok("'_private.Foo.0.P.Q.s' does not depend on any axioms"), "failed");
});

test("environment failures are told apart from the candidate's", () => {
  const d = doc("rfl");
  // Language.diagnosticsOfHeaderError: from the top of the file to its end, and nothing elaborated after.
  const end = new LineIndex(d.text).positionAt(d.text.length);
  const outOfDate: LeanDiagnostic = {
    range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } },
    fullRange: { start: { line: 0, character: 0 }, end },
    severity: 1,
    message: 'Imports are out of date and must be rebuilt; use the "Restart File" command in your editor.',
  };
  const r = classify(d, [outOfDate], true);
  assert.equal(r.kind, "environment");
  if (r.kind === "environment") assert.match(r.action, /lake build/);
  // An error on line 0 of a file without imports is its first command's: the workspace's business.
  const header: LeanDiagnostic = { range: at(0, 0), severity: 1, message: "unknown module prefix 'Foo'" };
  assert.notEqual(classify(d, [header], true).kind, "environment");
  // Lean stopping with nothing attributed to the header (a crash the candidate may have caused) is no
  // environment failure: a candidate must not be able to choose a masked outcome.
  assert.equal(classify(d, [], true).kind, "failed");
  // The same words written by the candidate (in the declaration) are the candidate's failure, not the
  // environment's: a candidate must not be able to pass its failure off as a broken workspace.
  const mimic: LeanDiagnostic = { ...outOfDate, range: at(4, 2, 6) };
  assert.equal(classify(d, [mimic], false).kind, "failed");
  const newer: LeanDiagnostic = { range: at(3, 8, 9), severity: 2, message: "declaration `t` uses `sorry`" };
  assert.equal(classify(d, [newer], false).kind, "incomplete");
});

test("a file without a header whose core library cannot be loaded is the environment's failure", () => {
  const d = doc("rfl");
  // Lean 4.35 without its standard library, on a file with no header (so an implicit `import Init`).
  const noInit: LeanDiagnostic = {
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    severity: 1,
    message:
      "unknown module prefix 'Init'\n\nNo directory 'Init' or file 'Init.olean' in the search path entries:",
  };
  const r = classify(d, [noInit], true);
  assert.equal(r.kind, "environment");
  if (r.kind === "environment") {
    assert.match(r.reason, /core library/);
    assert.match(r.action, /prelude/);
  }
  // Without Lean's fatal report, or with anything else beside it, it is not the header's.
  assert.notEqual(classify(d, [noInit], false).kind, "environment");
  const more: LeanDiagnostic = { range: at(4, 2, 6), severity: 1, message: "type mismatch" };
  assert.notEqual(classify(d, [noInit, more], true).kind, "environment");
});

test("Lean's view: exactly the checked declaration from its start on, under its name; anything else fails closed", () => {
  const d = doc("rfl");
  const index = new LineIndex(d.text);
  const declStart = index.positionAt(d.declarationStart);
  const sym = (name: string, line: number, kind = 6) => ({
    name,
    kind: kind as 6,
    range: { start: { line, character: 0 }, end: { line: line + 1, character: 0 } },
    selectionRange: { start: { line, character: 0 }, end: { line, character: 1 } },
  });
  const early = sym("early", 0);
  const declEnd = index.positionAt(d.declarationEnd);
  const mine = {
    ...sym("t", declStart.line),
    range: { start: { line: declStart.line, character: 0 }, end: declEnd },
  };
  assert.equal(checkLeanView(d, [early, mine]).kind, "ok");
  assert.equal(checkLeanView(d, [early, mine, sym("extra", declStart.line + 2)]).kind, "unexpected");
  assert.equal(checkLeanView(d, [early, sym("Inner.t", declStart.line)]).kind, "unexpected");
  assert.equal(checkLeanView(d, [early]).kind, "unexpected", "the declaration is missing");
  assert.equal(checkLeanView(d, [early, { ...mine, name: "«t»" }]).kind, "ok");
  // Lean's declaration ends before our end: something in the candidate ended it early.
  const cut = {
    ...mine,
    range: { start: mine.range.start, end: { line: declEnd.line, character: declEnd.character - 1 } },
  };
  assert.equal(checkLeanView(d, [early, cut]).kind, "unexpected");
  // Declarations inside namespaces come as children; flat SymbolInformation answers work too.
  const ns = { ...sym("N", 0, 3), children: [early, mine, sym("hidden", declStart.line + 1)] };
  assert.equal(checkLeanView(d, [ns]).kind, "unexpected");
  const flat = [{ name: "t", kind: 6 as const, location: { uri: "file:///x", range: mine.range } }];
  assert.equal(checkLeanView(d, flat).kind, "ok");
  assert.equal(checkLeanView(d, null).kind, "unexpected");
  assert.equal(checkLeanView(d, {} as never).kind, "unexpected");
});

test("allowNative: a native axiom passes only when it names the checked declaration (Lean 4.29+ names)", () => {
  assert.equal(nativeAxiomOwner("N.thm._native.native_decide.ax_1_1"), "N.thm");
  assert.equal(nativeAxiomOwner("bv_axiomCheck._native.bv_decide.ax_1_5"), "bv_axiomCheck");
  assert.equal(nativeAxiomOwner("Lean.ofReduceBool"), undefined, "the legacy axioms name no declaration");
  assert.equal(nativeAxiomOwner("propext"), undefined);
  const ok = (axiom: string, isPrivate = false, mayBePrivate = false) =>
    nativeAxiomAccepted(axiom, "N.thm", isPrivate, mayBePrivate);
  assert.ok(ok("N.thm._native.native_decide.ax_1_1"));
  assert.ok(ok("N.thm._native.bv_decide.ax_2_3"));
  assert.ok(ok("Lean.ofReduceBool"), "before 4.29 nothing ties the axiom to a declaration");
  for (const other of [
    "N.helper._native.native_decide.ax_1_1",
    "thm._native.native_decide.ax_1_1",
    "M.N.thm._native.native_decide.ax_1_1",
    "N.thm.helper._native.native_decide.ax_1_1",
    "_private.Mod.0.N.thm._native.native_decide.ax_1_1",
  ])
    assert.ok(!ok(other), other);
  // A private declaration's axioms carry its private name; in a module file either form.
  assert.ok(ok("_private.Mod.0.N.thm._native.native_decide.ax_1_1", true));
  assert.ok(!ok("N.thm._native.native_decide.ax_1_1", true));
  assert.ok(ok("_private.Mod.0.N.thm._native.native_decide.ax_1_1", false, true));
  assert.ok(ok("N.thm._native.native_decide.ax_1_1", false, true));
  // Through classify: `t` is the checked declaration of FILE, `early` a declaration above it.
  const d = doc("decide");
  const answer = (list: string) => axiomsInfo(`'t' depends on axioms: [${list}]`);
  const own = classify(d, [answer("t._native.native_decide.ax_1_1")], false, undefined, true);
  assert.equal(own.kind, "proved", JSON.stringify(own));
  const helper = classify(
    d,
    [answer("t._native.native_decide.ax_1_1, early._native.native_decide.ax_1_1")],
    false,
    undefined,
    true,
  );
  assert.equal(helper.kind, "failed");
  assert.match(
    helper.kind === "failed" ? helper.reason : "",
    /early\._native.*another declaration|another declaration.*early\._native/,
  );
  const off = classify(d, [answer("t._native.native_decide.ax_1_1")], false);
  assert.equal(off.kind, "failed", "without allowNative every native axiom fails");
});

test("the legacy native axioms count as compiled code only where Lean has them (before 4.35, lean4#14953)", () => {
  assert.equal(legacyNativeAxiomsExist(featuresOfToolchain("leanprover/lean4:v4.34.1")), true);
  assert.equal(legacyNativeAxiomsExist(featuresOfToolchain("leanprover/lean4:v4.35.0")), false);
  assert.equal(legacyNativeAxiomsExist(featuresOfToolchain("leanprover/lean4:v4.36.0")), false);
  assert.equal(legacyNativeAxiomsExist(featuresOfToolchain(undefined)), false, "unknown: not trusted");
  assert.ok(!nativeAxiomAccepted("Lean.ofReduceBool", "N.thm", false, false, false));
  const d = doc("decide");
  const legacy = axiomsInfo("'t' depends on axioms: [Lean.ofReduceBool]");
  assert.equal(classify(d, [legacy], false, undefined, true, true).kind, "proved", "4.34: Lean's own");
  const posing = classify(d, [legacy], false, undefined, true, false);
  assert.equal(posing.kind, "failed");
  assert.match(
    posing.kind === "failed" ? posing.reason : "",
    /does not provide.*4\.35.*declared by the document/,
  );
  // The server's word alone: the kernel gate, where it runs, names itself in its place.
  const proved = classify(d, [axiomsInfo("'t' depends on axioms: [propext]")], false);
  assert.equal(proved.kind === "proved" && proved.confirmedBy, "server");
});

test("the server path refuses an allowed axiom's name when the check document declares that axiom itself", () => {
  const own = "prelude\ninductive False : Prop\naxiom propext : False\ntheorem t : False := by\n  skip\n";
  const parsed = parseFile(own);
  const located = locateHole(parsed, new LineIndex(own), proofHole(own, "t"));
  if (located.kind !== "ok") throw new Error("bad hole");
  const built = buildCheckDocument(parsed, located.hole, "exact propext");
  if (built.kind !== "ok") throw new Error("bad doc");
  const axiomsLine = built.doc.axiomsLine;
  const said: LeanDiagnostic = {
    range: { start: { line: axiomsLine, character: 0 }, end: { line: axiomsLine, character: 12 } },
    severity: 3,
    message: "'t' depends on axioms: [propext]",
  };
  const v = classify(built.doc, [said], false);
  assert.equal(v.kind, "failed", JSON.stringify(v));
  if (v.kind === "failed") assert.match(v.reason, /declared by the checked document itself/);
  // The same answer about a document that only uses the imported propext is a proof.
  assert.equal(classify(doc(), [axiomsInfo("'t' depends on axioms: [propext]")], false).kind, "proved");
});
