/**
 * What every verifier does before a check reaches Lean, whichever server runs it (the pool's language
 * server, a Kimina Lean Server): read the task's file, locate the hole, pass the candidate through the
 * policy, and build the check document (statement kept, `#print axioms` appended, tampering refused).
 * One function, so both backends put the same layer in front of Lean.
 */
import type { Range } from "vscode-languageserver-protocol";
import { buildCheckDocument, locateHole, type CheckDocument, type HoleLocation } from "./checkDocument";
import type { ParsedFile } from "../lean/commands";
import { holeStartsTactic, type StartMode } from "./tacticStarts";
import { checkCandidate, type CandidatePolicy } from "./policy";
import type { TaskFiles } from "./taskFiles";
import type { PrefixModules } from "./prefixModules";
import type { LeanFeatures } from "./toolchain";

export type PreparedCheck =
  { kind: "ok"; doc: CheckDocument; path: string } | { kind: "rejected"; rule: string; reason: string };

/** Whether the hole is a tactic's place in its declaration's tactic block, or a term's inside a tactic. */
function holeMode(file: ParsedFile, hole: HoleLocation): StartMode {
  const ts = file.tokens;
  const decl = hole.declaration;
  let from = decl.firstToken;
  while (from <= decl.lastToken && (ts.starts[from] ?? 0) <= (decl.byStart ?? 0)) from++;
  return holeStartsTactic(ts, from, decl.lastToken, hole.start) ? "tactics" : "term";
}

export function prepareCheck(
  files: TaskFiles,
  task: { file: string; hole: Range; text?: string },
  candidate: string,
  options: {
    policy: CandidatePolicy;
    features: LeanFeatures;
    checkPolicy?: boolean;
    /** The prefix-import form's modules, where the verifier compiles them (the embedded Lean). */
    prefixes?: PrefixModules;
    /** Not a check: the prefix form only where its module stands compiled, none asked for (PrefixModules). */
    prefixLookOnly?: boolean;
  },
): PreparedCheck {
  const loaded = files.load(task.file, task.text);
  if (loaded.kind === "error") return { kind: "rejected", rule: "bad-task", reason: loaded.message };
  const located = locateHole(loaded.file.parsed, loaded.file.index, task.hole, options.features);
  if (located.kind === "bad-hole")
    return { kind: "rejected", rule: "bad-task", reason: `${task.file}: ${located.message}` };
  // The verifier's own probes (`sorry` in the hole) are not candidates; only they skip the policy.
  if (options.checkPolicy !== false) {
    const policy = checkCandidate(candidate, options.policy, {
      column: located.hole.column,
      mode: holeMode(loaded.file.parsed, located.hole),
    });
    if (policy.kind === "rejected") return policy;
  }
  const form = options.prefixes?.forDeclaration(
    loaded.file.parsed,
    located.hole.declaration,
    options.prefixLookOnly,
  );
  const built = buildCheckDocument(
    loaded.file.parsed,
    located.hole,
    candidate,
    options.features,
    form?.kind === "ready" ? form.blanked : undefined,
  );
  if (built.kind === "tampered") return { kind: "rejected", rule: "tamper", reason: built.message };
  if (built.kind === "bad-hole") return { kind: "rejected", rule: "bad-task", reason: built.message };
  return { kind: "ok", doc: built.doc, path: loaded.file.path };
}
