/**
 * The options a candidate may set with `set_option NAME VALUE in …`: an allow-list, because an option can
 * switch a check off (`debug.skipKernelTC` lets `addDecl` skip the kernel for auxiliary declarations,
 * `warn.sorry` silences the sorry warning) and the list of such options grows with every Lean release.
 * Allowed: resource limits, each with an upper bound so a candidate cannot buy unbounded time, and option
 * groups that only change warnings or printing (BOOLEAN_OPTION_PREFIXES).
 * docs/POLICY.md explains each rule.
 */
import { TokenKind, isCommentKind, tokenText, type TokenStream } from "../lean/tokens";

/** Option name → the largest value a candidate may set (values are positive whole numbers). */
export type OptionLimits = Readonly<Record<string, number>>;

/**
 * Lean's defaults are 200000 heartbeats, 512 recursion depth, 20000 instance heartbeats, 128 instance size
 * and 1 pending synthesis level; a candidate may raise them within these bounds, the largest values Mathlib's
 * own proofs set (the pool's timeout still ends every check, and a worker the candidate crashes, with deep
 * recursion say, is the candidate's failure). 0, which Lean reads as "unlimited", is never allowed.
 */
export const DEFAULT_OPTION_LIMITS: OptionLimits = {
  maxHeartbeats: 1_600_000,
  maxRecDepth: 100_000,
  "synthInstance.maxHeartbeats": 400_000,
  "synthInstance.maxSize": 1_024,
  maxSynthPendingDepth: 4,
};

/**
 * Boolean options a candidate may set by exact name, to either value: each changes how a tactic rewrites
 * or how the elaborator unfolds while it searches, never whether Lean, the axiom check or the kernel accepts
 * the result. `push_neg.use_distrib` (Mathlib's push_neg: `¬(p ∧ q)` to `¬p ∨ ¬q`) and the `backward.*`
 * options Mathlib sets in proofs, which restore an older elaboration behaviour (how `isDefEq` respects
 * transparency, instance canonicalisation, `dsimp` on proofs, equation lemmas). Other `backward.*` options
 * are refused: that group is open-ended, and a later one might skip a check.
 */
export const NAMED_BOOLEAN_OPTIONS: ReadonlySet<string> = new Set([
  "push_neg.use_distrib",
  "backward.isDefEq.respectTransparency",
  "backward.isDefEq.respectTransparency.types",
  "backward.isDefEq.lazyProjDelta",
  "backward.isDefEq.lazyWhnfCore",
  "backward.synthInstance.canonInstances",
  "backward.dsimp.proofs",
  "backward.eqns.nonrecursive",
  "backward.eqns.deepRecursiveSplit",
]);

/**
 * Boolean options a candidate may set, by name prefix, with the values allowed: turning a linter off
 * (linters only add warnings, which never decide a verdict) and pretty-printer settings (they change how
 * messages print inside the candidate's scope, not what Lean accepts). Each group is a whole namespace of
 * options that only ever do that.
 */
export const BOOLEAN_OPTION_PREFIXES: readonly { prefix: string; values: readonly string[] }[] = [
  { prefix: "linter.", values: ["false"] },
  { prefix: "pp.", values: ["true", "false"] },
];

function booleanRule(name: string): { prefix: string; values: readonly string[] } | undefined {
  if (NAMED_BOOLEAN_OPTIONS.has(name)) return { prefix: name, values: ["true", "false"] };
  return BOOLEAN_OPTION_PREFIXES.find((r) => name.startsWith(r.prefix) && name.length > r.prefix.length);
}

export type OptionCheck = { kind: "allowed" } | { kind: "rejected"; reason: string };

function nextCode(ts: TokenStream, i: number): number {
  let j = i;
  while (j < ts.count && isCommentKind(ts.kinds[j] ?? 0)) j++;
  return j;
}

/** Checks the `set_option` whose keyword is token i: a listed option, a bounded number, then `in`. */
export function checkSetOption(ts: TokenStream, i: number, limits: OptionLimits): OptionCheck {
  const nameAt = nextCode(ts, i + 1);
  const name = nameAt < ts.count && ts.kinds[nameAt] === TokenKind.Ident ? tokenText(ts, nameAt) : "";
  const allowed = [
    ...Object.keys(limits),
    ...BOOLEAN_OPTION_PREFIXES.map((r) => `${r.prefix}*`),
    ...NAMED_BOOLEAN_OPTIONS,
  ].join(", ");
  const valueAt = nextCode(ts, nameAt + 1);
  const value = valueAt < ts.count ? tokenText(ts, valueAt) : "";
  const boolean = booleanRule(name);
  if (boolean) {
    if (ts.kinds[valueAt] !== TokenKind.Ident || !boolean.values.includes(value))
      return {
        kind: "rejected",
        reason: `the candidate sets \`${name}\` to \`${value}\`; a candidate may set ${boolean.prefix === name ? name : `${boolean.prefix}*`} only to ${boolean.values.join(" or ")}`,
      };
  } else if (!Object.prototype.hasOwnProperty.call(limits, name))
    return {
      kind: "rejected",
      reason: `the candidate sets the option \`${name || "?"}\`; a candidate may set only ${allowed}`,
    };
  else {
    const limit = limits[name] ?? 0;
    const number = /^[0-9]+$/.test(value) ? Number(value) : NaN;
    if (ts.kinds[valueAt] !== TokenKind.Number || !(number > 0 && number <= limit))
      return {
        kind: "rejected",
        reason: `the candidate sets \`${name}\` to \`${value}\`; allowed values are whole numbers from 1 to ${limit}`,
      };
  }
  const inAt = nextCode(ts, valueAt + 1);
  if (inAt >= ts.count || tokenText(ts, inAt) !== "in")
    return {
      kind: "rejected",
      reason: `the candidate's \`set_option ${name}\` is not followed by \`in\`, so it would outlive the candidate`,
    };
  return { kind: "allowed" };
}
