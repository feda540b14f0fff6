/**
 * The options a candidate may set with `set_option NAME VALUE in …`: an allow-list, because an option can
 * switch a check off (`debug.skipKernelTC` lets `addDecl` skip the kernel for auxiliary declarations,
 * `warn.sorry` silences the sorry warning) and the list of such options grows with every Lean release.
 * Only resource limits are allowed, each with an upper bound so a candidate cannot buy unbounded time.
 * docs/POLICY.md explains each rule.
 */
import { TokenKind, isCommentKind, tokenText, type TokenStream } from "../lean/tokens";

/** Option name → the largest value a candidate may set (values are positive whole numbers). */
export type OptionLimits = Readonly<Record<string, number>>;

/**
 * Lean's defaults are 200000 heartbeats, 512 recursion depth, 20000 instance heartbeats, 128 instance size;
 * a candidate may raise them within these bounds (the pool's timeout still ends every check).
 */
export const DEFAULT_OPTION_LIMITS: OptionLimits = {
  maxHeartbeats: 400_000,
  maxRecDepth: 4_096,
  "synthInstance.maxHeartbeats": 80_000,
  "synthInstance.maxSize": 512,
};

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
  const allowed = Object.keys(limits).join(", ");
  if (!Object.prototype.hasOwnProperty.call(limits, name))
    return {
      kind: "rejected",
      reason: `the candidate sets the option \`${name || "?"}\`; a candidate may set only ${allowed}`,
    };
  const limit = limits[name] ?? 0;
  const valueAt = nextCode(ts, nameAt + 1);
  const value = valueAt < ts.count ? tokenText(ts, valueAt) : "";
  const number = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (ts.kinds[valueAt] !== TokenKind.Number || !(number > 0 && number <= limit))
    return {
      kind: "rejected",
      reason: `the candidate sets \`${name}\` to \`${value}\`; allowed values are whole numbers from 1 to ${limit}`,
    };
  const inAt = nextCode(ts, valueAt + 1);
  if (inAt >= ts.count || tokenText(ts, inAt) !== "in")
    return {
      kind: "rejected",
      reason: `the candidate's \`set_option ${name}\` is not followed by \`in\`, so it would outlive the candidate`,
    };
  return { kind: "allowed" };
}
