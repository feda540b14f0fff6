/**
 * The kernel gate: the last word on a proof. Lean's server proved the candidate, but everything it said came
 * from the process that ran the candidate's code (its elaboration, its `#print axioms` line); a metaprogram in
 * that process can add a declaration without the kernel (`set_option debug.skipKernelTC true in …`,
 * `Lean.addDecl` from a tactic) or declare an axiom and word the answers around it. The gate asks a second
 * time, where no candidate code runs: the check document is compiled in a fresh Lean process, and the checked
 * declaration and every declaration of the document it depends on are replayed through the kernel on top of
 * the document's imports by a separate program that only reads the compiled module (Lean's own
 * `Environment.replay`, as lean4checker and `lake check` do), which also lists the axioms the declaration rests
 * on. This file holds what the gate reports and what the verifier decides from it; the backends are
 * leanKernelGate.ts (real Lean) and simulator/kernelReplay.ts (the simulator's model), the policy of which
 * proofs go through it gateStage.ts.
 */
import {
  DEFAULT_ALLOWED_AXIOMS,
  axiomName,
  isNativeAxiom,
  nativeAxiomAccepted,
  namesTheDeclaration,
} from "./classify";
import { KERNEL_GATE_RULE, type VerdictOutcome } from "./verdict";

/** The gates a proof can be confirmed by, as verdicts name them (`confirmedBy`). */
export type GateName = "kernel-replay";

/** One axiom the checked declaration rests on, as the replay found it. */
export interface GateAxiom {
  /** Its full name as Lean prints it. */
  name: string;
  /** Declared by the check document itself (an `axiom`, or an `addDecl` of one), not by an import. */
  declaredInDocument: boolean;
  /**
   * Its type is `@Eq Bool e true`, the shape of the axiom `Lean.Meta.nativeEqTrue` adds for one native
   * computation (src/Lean/Meta/Native.lean); only such an axiom may pass as native code under `allowNative`.
   */
  nativeShape: boolean;
}

/** Where in the gate's work something happened: compiling the check document, or replaying it. */
export type GateStage = "compile" | "replay";

/**
 * Whether the replayed declaration states what the file states. The compile that made the replayed module ran
 * the candidate's code, which can leave a constant of the checked name with a weaker type; the reference is the
 * same document with the verifier's `sorry` in the hole, compiled by a process that ran no candidate code.
 * `same`: the same kind, universe parameters and (alpha-equivalent) type. `differs`: a hack, refuted.
 * `no-reference`: the reference holds no such declaration (no candidate can cause that: the workspace's).
 */
export type GateStatement =
  { kind: "same" } | { kind: "differs"; message: string } | { kind: "no-reference"; message: string };

/** What a gate backend found, before the verifier judges it (`judgeWithGate`). */
export type GateReport =
  /**
   * Every declaration of the closure passed the kernel; `axioms` are those the checked declaration rests on.
   * `statement`: its type against the reference's; absent only where the request gave no reference.
   */
  | {
      kind: "replayed";
      declaration: string;
      replayed: number;
      axioms: GateAxiom[];
      statement?: GateStatement;
      elapsedMs: number;
    }
  /** The kernel refused a declaration of the closure (`message` is its error, naming the declaration). */
  | { kind: "kernel-rejected"; declaration: string; message: string; elapsedMs: number }
  /** The compiled module holds no declaration of the checked name. */
  | { kind: "missing"; message: string; elapsedMs: number }
  /**
   * The statement's reference (the document with `sorry` in the hole, no candidate text) could not be
   * compiled or read: nothing the candidate did, so the workspace's; `message` says what happened.
   */
  | { kind: "no-reference"; message: string; elapsedMs: number }
  /**
   * The check document did not compile in the fresh process. `inHeader`: the error is in its header (imports
   * out of date or missing: the workspace's fault, as classify.ts reads the server's header errors).
   */
  | { kind: "compile-failed"; message: string; inHeader: boolean; elapsedMs: number }
  | { kind: "timeout"; stage: GateStage; timeoutMs: number; elapsedMs: number }
  /** A gate process died or answered nothing readable while it held the candidate's document. */
  | { kind: "crashed"; stage: GateStage; message: string; elapsedMs: number }
  /**
   * The gate cannot run here at all, whatever the candidate (no `lake`, a replay program this Lean cannot
   * run: found by its self-test on a document of the verifier's own). `action` says what to do.
   */
  | { kind: "unavailable"; message: string; action: string; elapsedMs: number };

/** What a backend is given: the check document as the server checked it, and which declaration to confirm. */
export interface GateRequest {
  /** The check document's text (kernel-checked exactly as Lean's server checked it). */
  documentText: string;
  /** The checked declaration's full name as components (`«a.b».c` is `["a.b", "c"]`), no `_root_`. */
  declaration: string[];
  /** Lean may have made it private (`_private.<Module>.0.<name>`): a `private` one, or any in a `module` file. */
  mayBePrivate: boolean;
  /** The 0-based last line of the document's header (-1 when none): compile errors up to it are the workspace's. */
  headerEndLine: number;
  /**
   * The 0-based line where the checked declaration starts. Lean writes no `.olean` for a file with any error, so
   * commands above it that fail (the workspace's, which the server's check leaves aside) are blanked and the
   * document compiled again: removing what the candidate does not depend on cannot make its proof pass.
   */
  declarationLine: number;
  /**
   * The check document with the verifier's `sorry` in the hole instead of the candidate (no candidate text):
   * the gate compiles it once per hole, in a process of its own, and requires the replayed declaration to
   * state what this one states. Absent only for the gate's own documents (its self-test).
   */
  referenceText?: string;
}

/** A way to run the gate: real Lean (leanKernelGate.ts) or the simulator's model (simulator/kernelReplay.ts). */
export interface KernelGateBackend {
  readonly name: GateName;
  /** Runs the gate on one document within `timeoutMs` (compile and replay together). Never throws. */
  run(request: GateRequest, timeoutMs: number): Promise<GateReport>;
  /**
   * Whether the gate can run here at all, whatever the candidate (its self-test, on documents of its own):
   * undefined when it can, else the `unavailable` report every proof gets. Asked once, before the first draw.
   */
  ready?(timeoutMs: number): Promise<GateReport | undefined>;
  /**
   * A document about to be checked, as its proof would be asked (the candidate's text in it is not proved
   * yet): the backend may get ready for its proofs now, off their path (the embedded gate imports the
   * document's header in its compile servers and compiles the statement's reference, which holds no
   * candidate text, within `timeoutMs`). Never throws.
   */
  prepare?(request: GateRequest, timeoutMs: number): void;
  /** Stops what the backend keeps running between proofs (when its verifier stops). */
  stop?(): void;
}

/** How the verifier judges a gate's axioms: the same allow-list and native rules as classify.ts. */
export interface GateAxiomRules {
  checkedName: string;
  isPrivate: boolean;
  mayBePrivate: boolean;
  allowedAxioms?: readonly string[];
  allowNative: boolean;
  /** Whether this Lean has the legacy native axioms (classify.ts, `legacyNativeAxiomsExist`). */
  legacyNativeExists: boolean;
}

/** What to do when the gate cannot run at all. */
export const GATE_UNAVAILABLE_ACTION =
  "install Lean so that `lake` runs in the project (the kernel gate compiles the check document with `lake env lean`), or pass --kernel-gate off to train on the server's word alone (eval, export --verify and Fill Hole always need the gate)";

/**
 * Why an axiom fails the gate, or undefined when it passes: on the allow-list and imported (propext,
 * Classical.choice, Quot.sound come from Lean's own prelude; an axiom of one of those names declared by the
 * document is not them), or, under `allowNative`, the checked declaration's own native computation, declared by
 * the document in `nativeEqTrue`'s shape.
 */
export function axiomFailure(axiom: GateAxiom, rules: GateAxiomRules): string | undefined {
  const name = axiomName(axiom.name);
  const allowed = rules.allowedAxioms ?? DEFAULT_ALLOWED_AXIOMS;
  if (allowed.includes(name) && !axiom.declaredInDocument) return undefined;
  if (rules.allowNative && isNativeAxiom(name)) {
    const own = nativeAxiomAccepted(
      name,
      rules.checkedName,
      rules.isPrivate,
      rules.mayBePrivate,
      rules.legacyNativeExists,
    );
    // A 4.29+ native axiom is made by `nativeEqTrue` inside the document; a legacy one comes from Lean's prelude.
    const legacy = !/\._native\./.test(name);
    const madeAsLeanMakesIt = legacy
      ? !axiom.declaredInDocument
      : axiom.declaredInDocument && axiom.nativeShape;
    if (own && madeAsLeanMakesIt) return undefined;
    if (legacy && !rules.legacyNativeExists)
      return `the proof rests on '${name}', which this Lean does not provide (4.35 removed the legacy native axioms, lean4#14953): the document declared it`;
    if (own)
      return `'${name}' is named like a native computation of '${rules.checkedName}' but is not one Lean made (its type is not \`@Eq Bool _ true\`, or it does not come from where Lean declares it)`;
    return `the proof rests on compiled code run for another declaration ('${name}'); "allowNative" accepts only the checked declaration's own`;
  }
  if (axiom.declaredInDocument)
    return `the proof rests on the axiom '${name}', declared in the checked document itself`;
  return `the proof rests on the axiom '${name}', outside the allow-list (${allowed.join(", ")})`;
}

/** A refutation: the server's messages (which described a proof) are dropped, so the reason is what readers see. */
function refuted(gate: GateName, why: string): VerdictOutcome {
  return {
    kind: "rejected",
    rule: KERNEL_GATE_RULE,
    reason: `the kernel gate (${gate}) refutes this proof, which Lean's server accepted: ${why}. No reward (not masked); logged as a hack`,
    diagnostics: [],
  };
}

/** The statement's reference could not be had: the proof is not confirmed, and the candidate is not to blame. */
function noReference(message: string, candidate: VerdictOutcome): VerdictOutcome {
  return {
    kind: "environment",
    reason: `the kernel gate could not establish the declaration's statement without the candidate (the check document with \`sorry\` in the hole): ${message}`,
    action:
      "check that the workspace builds and that `sorry` elaborates in it (a prelude workspace must declare `sorryAx` and the `sorry` tactic), then verify again",
    diagnostics: candidate.diagnostics,
  };
}

/**
 * The candidate's verdict, given the gate's report on its proof. Replayed with allowed axioms only: proved,
 * confirmed by the gate. The kernel refusing a declaration, the checked declaration missing or another one in
 * its place, a forbidden axiom, a document that does not compile or a gate that dies or runs out of time on
 * it: `rejected` (rule kernel-replay-failed), reward 0, never masked, since a candidate could cause each of them
 * (a metaprogram can tell the two processes apart and act up in one). Only what no candidate can cause is the
 * workspace's (`environment`): the gate unavailable here, or the document's header failing to load.
 */
export function judgeWithGate(
  candidate: VerdictOutcome,
  report: GateReport,
  gate: GateName,
  rules: GateAxiomRules,
): VerdictOutcome {
  if (candidate.kind !== "proved") return candidate;
  const at = (stage: GateStage) =>
    stage === "compile" ? "compiling the check document" : "the kernel replay";
  switch (report.kind) {
    case "replayed": {
      if (!namesTheDeclaration(report.declaration, rules.checkedName, rules.isPrivate, rules.mayBePrivate))
        return refuted(
          gate,
          `the replay confirmed '${report.declaration}', not the checked declaration '${rules.checkedName}'`,
        );
      if (report.statement?.kind === "differs")
        return refuted(
          gate,
          `the compiled '${report.declaration}' does not state the file's statement (${report.statement.message}): code run while compiling changed what it says`,
        );
      if (report.statement?.kind === "no-reference") return noReference(report.statement.message, candidate);
      const failures = report.axioms.map((a) => axiomFailure(a, rules)).filter((f) => f !== undefined);
      if (failures.length > 0) return refuted(gate, failures.join("; "));
      return {
        ...candidate,
        axioms: [...new Set([...candidate.axioms, ...report.axioms.map((a) => axiomName(a.name))])].sort(),
        confirmedBy: gate,
      };
    }
    case "kernel-rejected":
      return refuted(gate, `the kernel refused a declaration it depends on: ${report.message}`);
    case "missing":
      return refuted(gate, report.message);
    case "no-reference":
      return noReference(report.message, candidate);
    case "compile-failed":
      if (report.inHeader)
        return {
          kind: "environment",
          reason: `the kernel gate could not load the file's header in a fresh Lean process: ${report.message}`,
          action:
            "run `lake build` in the project (and `lake exe cache get` where Mathlib is used), then verify again",
          diagnostics: candidate.diagnostics,
        };
      return refuted(gate, `the check document does not compile in a fresh Lean process: ${report.message}`);
    case "timeout":
      return refuted(
        gate,
        `${at(report.stage)} ran past the gate's ${report.timeoutMs} ms (a proof that needs more than the gate's limit outside the server is not confirmed)`,
      );
    case "crashed":
      return refuted(gate, `${at(report.stage)} failed: ${report.message}`);
    case "unavailable":
      return {
        kind: "environment",
        reason: `the kernel gate cannot run here, so the proof cannot be confirmed: ${report.message}`,
        action: report.action,
        diagnostics: candidate.diagnostics,
      };
  }
}
