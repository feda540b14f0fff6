/**
 * What a candidate may contain before Lean ever sees it. Candidates are untrusted code written by a model:
 * the policy rejects proof holes (`sorry`), attempts to leave the hole (end the declaration, start a new
 * command, `#exit`, `import`, new `axiom`s), and anything that runs arbitrary programs at elaboration time.
 * See docs/POLICY.md for the rationale of each rule and how to change it.
 */
import { lex } from "../lean/lexer";
import { TokenKind, bracketDelta, isCommentKind, tokenText, type TokenStream } from "../lean/tokens";
import { checkSetOption, DEFAULT_OPTION_LIMITS, type OptionLimits } from "./setOptions";

export interface CandidatePolicy {
  /** Identifiers that are rejected wherever they appear (a dotted name matches on any component). */
  forbiddenIdentifiers: string[];
  /** `#…` commands are always rejected; this lists extra symbols rejected anywhere (e.g. "@["). */
  forbiddenSymbols: string[];
  /** Longest candidate accepted, in UTF-16 units. */
  maxChars: number;
  /**
   * Whether `native_decide` / `decide +native` (proofs by compiled code, axiom `Lean.ofReduceBool`) are
   * accepted. Also allow the axiom (`--allowed-axioms`), or the axiom check fails such proofs anyway.
   */
  allowNative: boolean;
  /** Options a candidate may set with `set_option … in`, with their upper bounds. */
  optionLimits: OptionLimits;
}

/**
 * `sorryAx` is what `sorry` elaborates to; `as_aux_lemma` hides a proof (and its sorry) in a lemma; `stop`
 * is `repeat sorry` (Init/Tactics.lean), and in a bullet (`· stop`) it closes a goal behind another block's
 * unsolved goals, where Lean prints no sorry warning.
 */
export const SORRY_IDENTIFIERS = ["sorry", "admit", "sorryAx", "as_aux_lemma", "stop"];

/**
 * Tactics that spend wall-clock time without heartbeats: `sleep` turns any failure into a timeout. A
 * candidate's timeout is its failure anyway, but a batch of them would hold the verifier for nothing.
 */
export const TIME_IDENTIFIERS = ["sleep"];

/** Proofs that trust compiled code instead of the kernel (axioms `Lean.ofReduceBool`, `Lean.trustCompiler`). */
export const NATIVE_IDENTIFIERS = [
  "native_decide",
  // Std's bit-blasting tactics check their LRAT certificate with compiled code (`Lean.ofReduceBool`, from
  // Lean 4.29 `<declaration>._native.bv_decide.ax_…`): the axiom check refuses them too, this says why sooner.
  "bv_decide",
  "bv_check",
  "native",
  "ofReduceBool",
  "ofReduceNat",
  "reduceBool",
  "reduceNat",
  "trustCompiler",
];

/** Commands: a candidate using them would end the declaration or add a new one. */
export const ESCAPE_IDENTIFIERS = [
  "theorem",
  "lemma",
  "def",
  "example",
  "axiom",
  "instance",
  "abbrev",
  "opaque",
  "structure",
  "class",
  "inductive",
  "namespace",
  "section",
  "end",
  "import",
  "mutual",
  "universe",
  "variable",
  "attribute",
  "prelude",
  "module",
  "export",
  "omit",
  "include",
  "deriving",
];

/** Ways to run arbitrary code during elaboration. */
export const CODE_EXECUTION_IDENTIFIERS = [
  "run_tac",
  "run_cmd",
  "run_elab",
  "run_meta",
  "by_elab",
  "elab",
  "elab_rules",
  "macro",
  "macro_rules",
  "syntax",
  "declare_syntax_cat",
  "notation",
  "infix",
  "infixl",
  "infixr",
  "prefix",
  "postfix",
  "unsafe",
  "implemented_by",
  "initialize",
  "builtin_initialize",
  "IO",
  "unsafeBaseIO",
  "unsafeIO",
  "unsafeEIO",
  "evalExpr",
  "Lean.Elab",
  "Lean.Meta",
  "TacticM",
  "CommandElabM",
  "TermElabM",
  "MetaM",
  "CoreM",
];

/** Search tactics that once closed goals without a real proof (DeepSeek-Prover-V2) and are slow anyway. */
export const SEARCH_IDENTIFIERS = ["apply?", "exact?", "rw?", "hint"];

export const DEFAULT_POLICY: CandidatePolicy = {
  forbiddenIdentifiers: [
    ...SORRY_IDENTIFIERS,
    ...ESCAPE_IDENTIFIERS,
    ...CODE_EXECUTION_IDENTIFIERS,
    ...SEARCH_IDENTIFIERS,
    ...TIME_IDENTIFIERS,
  ],
  forbiddenSymbols: ["@["],
  maxChars: 20_000,
  allowNative: false,
  optionLimits: DEFAULT_OPTION_LIMITS,
};

export type PolicyResult = { kind: "allowed" } | { kind: "rejected"; rule: string; reason: string };

function ruleFor(name: string): string {
  if (SORRY_IDENTIFIERS.includes(name)) return "sorry";
  if (NATIVE_IDENTIFIERS.includes(name)) return "native-code";
  if (ESCAPE_IDENTIFIERS.includes(name)) return "escape";
  if (SEARCH_IDENTIFIERS.includes(name)) return "search-tactic";
  if (CODE_EXECUTION_IDENTIFIERS.includes(name)) return "code-execution";
  if (TIME_IDENTIFIERS.includes(name)) return "time";
  return "policy"; // Forbidden by a policy file.
}

/**
 * The components of a name as Lean reads them: `«…»` escapes removed, dots inside them kept
 * (`Lean.«ofReduceBool»` is `Lean.ofReduceBool`; `«a.b».c` has the parts `a.b` and `c`).
 */
export function nameParts(ident: string): string[] {
  const parts: string[] = [];
  let current = "";
  for (let i = 0; i < ident.length; i++) {
    const c = ident[i];
    if (c === "«") {
      const close = ident.indexOf("»", i + 1);
      const end = close === -1 ? ident.length : close;
      current += ident.slice(i + 1, end);
      i = end;
    } else if (c === ".") {
      parts.push(current);
      current = "";
    } else current += c;
  }
  parts.push(current);
  return parts;
}

/**
 * Forbidden words that are also ordinary names, allowed where they can only be a name: `IO` alone (the
 * type, or a hypothesis; `IO.println` and the like stay forbidden: running IO needs a qualified function),
 * and the words decided by their place (see nameInPlace).
 */
const ALSO_A_NAME = new Set(["IO", "native", "lemma"]);

/**
 * Whether a bare `native` or `lemma` at token i stands where it can only be a name. `native` switches native
 * code on as a configuration item (`decide +native`, `(native := true)`, `{ native := true }`), so it is a
 * name unless `+`/`-` is written against it or it stands as a named argument or field (after `(`, `{`, `,`
 * or `with`, before `:=`). `lemma` starts a command only when a declaration name follows (Mathlib's
 * `lemma foo : …`); anything else after it (`:`, `:=`, `⟩`, a line end) makes it a hypothesis name. Lean
 * confirms either way: a command would end the declaration early, which Lean's range of it shows.
 */
export function nameInPlace(ts: TokenStream, i: number): boolean {
  const word = tokenText(ts, i);
  const next = nextCodeToken(ts, i + 1);
  if (word === "native") {
    let k = i - 1;
    while (k >= 0 && isCommentKind(ts.kinds[k] ?? 0)) k--;
    const before = k >= 0 ? tokenText(ts, k) : "";
    const against = (before === "+" || before === "-") && ts.ends[k] === ts.starts[i];
    // `(native := true)`, `{ native := true }`, `{ x with native := true }`: a named argument or a field.
    const field = ["(", "{", ",", "with"].includes(before) && next < ts.count && tokenText(ts, next) === ":=";
    return !against && !field;
  }
  if (word === "lemma") return next >= ts.count || ts.kinds[next] !== TokenKind.Ident;
  return word === "IO";
}

function nextCodeToken(ts: TokenStream, i: number): number {
  let j = i;
  while (j < ts.count && isCommentKind(ts.kinds[j] ?? 0)) j++;
  return j;
}

function matchesForbidden(ident: string, forbidden: Set<string>): string | undefined {
  const parts = nameParts(ident);
  const name = parts.join(".");
  if (forbidden.has(name)) return name;
  for (let k = 1; k < parts.length; k++) {
    const prefix = parts.slice(0, k).join(".");
    if (forbidden.has(prefix)) return prefix;
  }
  for (const part of parts) if (forbidden.has(part)) return part;
  return undefined;
}

const forbiddenSetCache = new WeakMap<CandidatePolicy, Set<string>>();

/**
 * The candidate as Lean will read it: line endings normalised (the check document places the candidate
 * with CR removed). Re-indentation changes only the blanks at line starts, which never changes a token.
 */
export function asLeanReadsIt(candidate: string): string {
  return candidate.includes("\r") ? candidate.replace(/\r\n?/g, "\n") : candidate;
}

/**
 * Characters no candidate needs, refused wherever they stand (comments and strings too), because what Lean
 * reads there is not what we, or a person looking at the candidate, would: control characters but tab and
 * newline (Lean's whitespace is space, tab and newline; a lone CR is an error), lone UTF-16 surrogates (no
 * UTF-8 file can hold one; how the server's JSON decoder takes `\ud800` is not ours to guess), and the
 * bidirectional overrides and isolates that make displayed text differ from its order ("Trojan Source"),
 * and invisible characters (zero-width space, joiners, marks, word joiner, U+FEFF): `s\u200Borry` shows as
 * `sorry` to a person, while Lean, whose identifiers hold none of them, reads something else.
 */
const ODD_CHARACTER =
  // eslint-disable-next-line no-control-regex -- control characters are what this pattern is for
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function codeUnitName(c: string): string {
  return `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
}

function oddCharacterWhy(c: string): string {
  const code = c.charCodeAt(0);
  if (code >= 0xd800 && code <= 0xdfff) return "a lone UTF-16 surrogate, which no Lean file can hold";
  if ((code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069))
    return "a bidirectional control that makes the text shown differ from the text Lean reads";
  if ((code >= 0x200b && code <= 0x200f) || code === 0x2060 || code === 0xfeff)
    return "an invisible character, so the text shown is not the text Lean reads";
  return "a control character Lean source does not use";
}

function effectiveForbidden(policy: CandidatePolicy): Set<string> {
  let forbidden = forbiddenSetCache.get(policy);
  if (!forbidden) {
    forbidden = new Set(policy.forbiddenIdentifiers);
    if (!policy.allowNative) for (const name of NATIVE_IDENTIFIERS) forbidden.add(name);
    forbiddenSetCache.set(policy, forbidden);
  }
  return forbidden;
}

/**
 * `#v[…]` (a vector literal) and Mathlib's `#s` (`Finset.card s`, a one-letter name after `#`) are terms,
 * not commands: `#` with `v` and `[` written together, or with a one-letter name (primes and subscript
 * digits allowed). Every command spelled `#…` is a longer word (`#eval`, `#exit`, `#print`, `#check` …), and
 * a command that slipped through would end the declaration, which Lean's range of it shows.
 */
export function isTermHash(ts: TokenStream, i: number): boolean {
  const name = tokenText(ts, i + 1);
  if (/^\p{L}['\u2080-\u2089]*$/u.test(name)) return true;
  return (
    name === "v" &&
    ts.kinds[i + 2] === TokenKind.Symbol &&
    tokenText(ts, i + 2) === "[" &&
    ts.starts[i + 2] === ts.ends[i + 1]
  );
}

/** Keywords of core syntax whose argument is a term: a plain string after them is only a string. */
const TERM_KEYWORDS = new Set([
  "exact",
  "refine",
  "show",
  "from",
  "apply",
  "use",
  "exists",
  "calc",
  "then",
  "else",
  "return",
]);

/**
 * Whether a string literal holding `{` could be read by Lean as interpolated code: when the lexer read it
 * interpolated (`s!"…"`, `m!`, `f!`, `throwError "…"`: code inside is hidden from this policy, and proofs do
 * not need it), or when an identifier stands right before it that is not a core keyword taking a term
 * (user or library syntax can take `interpolatedStr(term)` there). After a symbol (`:=`, `(`, `,`, `=`) or
 * a core term keyword, the grammar wants a term, and a string there is a plain string literal.
 */
function mayInterpolate(ts: TokenStream, i: number): boolean {
  const text = tokenText(ts, i);
  if (!text.startsWith('"') && !text.startsWith("r")) return true; // `s!"…"` and friends: one token.
  let k = i - 1;
  while (k >= 0 && isCommentKind(ts.kinds[k] ?? 0)) k--;
  if (k < 0 || ts.kinds[k] !== TokenKind.Ident) return false;
  return !TERM_KEYWORDS.has(tokenText(ts, k));
}

export function checkCandidate(raw: string, policy: CandidatePolicy = DEFAULT_POLICY): PolicyResult {
  const candidate = asLeanReadsIt(raw);
  if (candidate.trim() === "") return { kind: "rejected", rule: "empty", reason: "the candidate is empty" };
  if (candidate.length > policy.maxChars)
    return {
      kind: "rejected",
      rule: "too-long",
      reason: `the candidate has ${candidate.length} characters; the limit is ${policy.maxChars}`,
    };
  const odd = ODD_CHARACTER.exec(candidate);
  if (odd)
    return {
      kind: "rejected",
      rule: "character",
      reason: `the candidate contains ${codeUnitName(odd[0])}, ${oddCharacterWhy(odd[0])}`,
    };
  const forbidden = effectiveForbidden(policy);
  const ts = lex(candidate);
  if (ts.unterminated)
    return {
      kind: "rejected",
      rule: "escape",
      reason:
        "the candidate ends inside a comment or string, which would swallow the rest of the declaration",
    };
  let depth = 0;
  for (let i = 0; i < ts.count; i++) {
    const kind = ts.kinds[i];
    const text = tokenText(ts, i);
    if (kind === TokenKind.Ident) {
      const hit = ALSO_A_NAME.has(text) && nameInPlace(ts, i) ? undefined : matchesForbidden(text, forbidden);
      if (hit)
        return {
          kind: "rejected",
          rule: ruleFor(hit),
          reason: `the candidate uses \`${hit}\`, which the verification policy forbids`,
        };
      if (text === "set_option") {
        const option = checkSetOption(ts, i, policy.optionLimits);
        if (option.kind === "rejected")
          return { kind: "rejected", rule: "set-option", reason: option.reason };
      }
    } else if (kind === TokenKind.String && text.includes("{") && mayInterpolate(ts, i)) {
      // Whether Lean reads `{…}` in a string as code depends on the syntax before it (`s!`, `throwError`,
      // any user syntax with `interpolatedStr`): where it may, the string is refused rather than guessed.
      return {
        kind: "rejected",
        rule: "ambiguous-string",
        reason:
          "the candidate has a string holding `{` where Lean may read it as interpolated code (after `s!`, `m!`, `throwError` or a syntax keyword); proofs do not need one",
      };
    } else if (kind === TokenKind.Symbol) {
      if (policy.forbiddenSymbols.includes(text))
        return {
          kind: "rejected",
          rule: "escape",
          reason: `the candidate uses \`${text}\`, which the verification policy forbids`,
        };
      if (
        text === "#" &&
        ts.kinds[i + 1] === TokenKind.Ident &&
        ts.starts[i + 1] === ts.ends[i] &&
        !isTermHash(ts, i)
      )
        return {
          kind: "rejected",
          rule: "escape",
          reason: `the candidate runs the command \`#${tokenText(ts, i + 1)}\``,
        };
      depth += bracketDelta(ts, i);
      if (depth < 0)
        return { kind: "rejected", rule: "escape", reason: "the candidate closes a bracket it did not open" };
    }
  }
  if (depth !== 0) return { kind: "rejected", rule: "escape", reason: "the candidate leaves a bracket open" };
  return { kind: "allowed" };
}

/** A policy file (`--policy FILE`): changes to the default policy. */
export interface PolicyFile {
  /** Identifiers to reject in addition to the defaults. */
  forbid?: string[];
  /** Default identifiers to accept after all (e.g. "exact?"). */
  allow?: string[];
  maxChars?: number;
  /** Accept `native_decide` / `decide +native` (the axiom `Lean.ofReduceBool` must be allowed too). */
  allowNative?: boolean;
}

export function policyFromFile(
  raw: unknown,
): { kind: "ok"; policy: CandidatePolicy } | { kind: "error"; message: string } {
  const file = raw as PolicyFile | null;
  if (typeof file !== "object" || file === null || Array.isArray(file))
    return {
      kind: "error",
      message:
        'a policy file is a JSON object: {"forbid": [...], "allow": [...], "maxChars": N, "allowNative": false}',
    };
  const strings = (v: unknown) =>
    v === undefined || (Array.isArray(v) && v.every((x) => typeof x === "string"));
  if (!strings(file.forbid) || !strings(file.allow))
    return { kind: "error", message: '"forbid" and "allow" must be lists of identifiers' };
  if (file.maxChars !== undefined && !(Number.isInteger(file.maxChars) && file.maxChars > 0))
    return { kind: "error", message: '"maxChars" must be a positive whole number' };
  if (file.allowNative !== undefined && typeof file.allowNative !== "boolean")
    return { kind: "error", message: '"allowNative" must be true or false' };
  const allow = new Set(file.allow ?? []);
  return {
    kind: "ok",
    policy: {
      forbiddenIdentifiers: [
        ...DEFAULT_POLICY.forbiddenIdentifiers.filter((i) => !allow.has(i)),
        ...(file.forbid ?? []),
      ],
      forbiddenSymbols: DEFAULT_POLICY.forbiddenSymbols,
      maxChars: file.maxChars ?? DEFAULT_POLICY.maxChars,
      allowNative: file.allowNative ?? false,
      optionLimits: DEFAULT_POLICY.optionLimits,
    },
  };
}
