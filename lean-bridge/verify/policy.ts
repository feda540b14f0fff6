/**
 * What a candidate may contain before Lean ever sees it. Candidates are untrusted code written by a model:
 * the policy rejects proof holes (`sorry`), attempts to leave the hole (end the declaration, start a new
 * command, `#exit`, `import`, new `axiom`s), and anything that runs arbitrary programs at elaboration time.
 * See docs/POLICY.md for the rationale of each rule and how to change it.
 */
import { isCommandKeyword } from "../lean/commandWords";
import { lex } from "../lean/lexer";
import { stringCode } from "../lean/stringCode";
import { TokenKind, bracketDelta, isCommentKind, tokenText } from "../lean/tokens";
import {
  ALSO_A_NAME,
  CODE_EXECUTION_IDENTIFIERS,
  CODE_NAMESPACE_HEADS,
  ESCAPE_IDENTIFIERS,
  NATIVE_IDENTIFIERS,
  SEARCH_IDENTIFIERS,
  SORRY_IDENTIFIERS,
  TIME_IDENTIFIERS,
  PERCENT_ELABORATORS,
  codeNamespaceIn,
  forbiddenWordIn,
  isTermHash,
  nameInPlace,
  ruleFor,
} from "./policyWords";
import { checkSetOption, DEFAULT_OPTION_LIMITS, type OptionLimits } from "./setOptions";
import { TACTIC_WORDS } from "./tacticAllowList";
import { checkTacticWords, isTacticWord, placedCandidate, type Placement } from "./tacticPolicy";

export type { Placement } from "./tacticPolicy";

// The word lists and the readings of a word are policyWords.ts's; they are part of this module's interface.
export {
  CODE_EXECUTION_IDENTIFIERS,
  CODE_NAMESPACE_HEADS,
  HASH_WORDS,
  PERCENT_ELABORATORS,
  ESCAPE_IDENTIFIERS,
  NATIVE_IDENTIFIERS,
  SEARCH_IDENTIFIERS,
  SORRY_IDENTIFIERS,
  TIME_IDENTIFIERS,
  isTermHash,
  nameInPlace,
  nameParts,
} from "./policyWords";

export interface CandidatePolicy {
  /**
   * Identifiers that are rejected wherever Lean reads them: a word of syntax (`sorry`, `theorem`, `run_tac`)
   * as a whole identifier, a constant's name (`IO`, `Lean.Elab`, and every word a policy file adds) as any
   * component or prefix of a name.
   */
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
  /**
   * Namespaces refused as a name's first component (after `_root_.`), because their functions reach files,
   * processes, the network or the environment: CODE_NAMESPACE_HEADS.
   */
  codeNamespaces: readonly string[];
  /**
   * The `x%` term elaborators a candidate may write (PERCENT_ELABORATORS); every other identifier written
   * against `%` is refused. `"any"` refuses none (a policy that refuses nothing, for tests of later layers).
   */
  percentElaborators: ReadonlySet<string> | "any";
  /**
   * The words a tactic may start with (TACTIC_WORDS, the workspace's own tactics, a policy file's
   * `allowTactics`); a tactic whose leading word is not here is refused (rule `unknown-tactic`). `"any"` refuses
   * none (a policy that refuses nothing, for tests of later layers).
   */
  tacticWords: ReadonlySet<string> | "any";
}

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
  codeNamespaces: CODE_NAMESPACE_HEADS,
  percentElaborators: PERCENT_ELABORATORS,
  tacticWords: TACTIC_WORDS,
};

export type PolicyResult = { kind: "allowed" } | { kind: "rejected"; rule: string; reason: string };

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

export function checkCandidate(
  raw: string,
  policy: CandidatePolicy = DEFAULT_POLICY,
  placement?: Placement,
): PolicyResult {
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
  const code = checkCode(candidate, policy, effectiveForbidden(policy), 0);
  if (code.kind === "rejected") return code;
  const mode = placement?.mode ?? "tactics";
  return checkTacticWords(
    mode === "tactics" ? placedCandidate(candidate, placement) : candidate,
    policy,
    mode,
    "the candidate",
  );
}

/**
 * How deep code inside a string's braces may nest (code in a string in code in a string …): a string inside
 * braces ends the plain reading of its outer string, so real text never nests at all (stringCode.ts).
 */
const MAX_STRING_NESTING = 4;

/**
 * Checks code: the candidate itself (`nesting` 0), or the code of a string's braces, which Lean may read as
 * code wherever the string stands (stringCode.ts), checked under the same rules. Inside braces, where no
 * later re-parse of the check document looks, command keywords are refused here too.
 */
function checkCode(
  code: string,
  policy: CandidatePolicy,
  forbidden: ReadonlySet<string>,
  nesting: number,
): PolicyResult {
  const inBraces = nesting > 0;
  const who = inBraces ? "the code in a string's braces (which Lean may read as code)" : "the candidate";
  const ts = lex(code);
  if (ts.unterminated)
    return {
      kind: "rejected",
      rule: "escape",
      reason: `${who} ends inside a comment or string, which would swallow the rest of the declaration`,
    };
  let depth = 0;
  for (let i = 0; i < ts.count; i++) {
    const kind = ts.kinds[i];
    const text = tokenText(ts, i);
    if (kind === TokenKind.Ident) {
      const hit = ALSO_A_NAME.has(text) && nameInPlace(ts, i) ? undefined : forbiddenWordIn(text, forbidden);
      if (hit)
        return {
          kind: "rejected",
          rule: ruleFor(hit),
          reason: `${who} uses \`${hit}\`, which the verification policy forbids`,
        };
      const namespace = codeNamespaceIn(text, policy.codeNamespaces);
      if (namespace)
        return {
          kind: "rejected",
          rule: "code-execution",
          reason: `${who} names \`${text}\` in \`${namespace}\`, a namespace whose functions reach files, processes or the environment; a proof needs none of them`,
        };
      if (
        ts.kinds[i + 1] === TokenKind.Symbol &&
        tokenText(ts, i + 1) === "%" &&
        ts.starts[i + 1] === ts.ends[i] &&
        policy.percentElaborators !== "any" &&
        !policy.percentElaborators.has(text)
      )
        return {
          kind: "rejected",
          rule: "code-execution",
          reason: `${who} uses the term elaborator \`${text}%\`, which is not on the policy's list of elaborators that never evaluate code (\`eval%\` runs its argument); write the remainder operator with spaces (\`a % b\`)`,
        };
      if (text === "set_option") {
        const option = checkSetOption(ts, i, policy.optionLimits);
        if (option.kind === "rejected")
          return {
            kind: "rejected",
            rule: "set-option",
            reason: inBraces ? `${who}: ${option.reason}` : option.reason,
          };
      }
      if (inBraces && isCommandKeyword(text) && !(text === "lemma" && nameInPlace(ts, i)))
        return {
          kind: "rejected",
          rule: "escape",
          reason: `${who} contains the command \`${text}\``,
        };
    } else if (kind === TokenKind.String) {
      const plain = plainStringAt(ts, i);
      const inner = checkStringCode(
        ts.text,
        ts.starts[i] ?? 0,
        ts.ends[i] ?? 0,
        policy,
        forbidden,
        nesting,
        plain,
      );
      if (inner.kind === "rejected") return inner;
    } else if (kind === TokenKind.Symbol) {
      if (policy.forbiddenSymbols.includes(text))
        return {
          kind: "rejected",
          rule: "escape",
          reason: `${who} uses \`${text}\`, which the verification policy forbids`,
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
          reason: `${who} runs the command \`#${tokenText(ts, i + 1)}\``,
        };
      depth += bracketDelta(ts, i);
      if (depth < 0)
        return {
          kind: "rejected",
          rule: "escape",
          reason: `${who} closes a bracket it did not open`,
        };
    }
  }
  if (depth !== 0) return { kind: "rejected", rule: "escape", reason: `${who} leaves a bracket open` };
  // The code of a string's braces is a term; its `by` blocks hold tactics.
  return inBraces ? checkTacticWords(code, policy, "term", who) : { kind: "allowed" };
}

/**
 * Tokens after which a string literal is a term of its own, read plainly: a term keyword's argument, an
 * operand, a list or tuple item. No syntax in core Lean, Batteries or Mathlib starts a term with an
 * interpolated string, so `exact "{"` and `s = "{"` hold text; after an identifier (a macro may take an
 * interpolated string, `s!`, `throwError`), `]` (`trace[cls] "…"`) or `)` (`throwErrorAt (stx) "…"`) the
 * string may be read as interpolated, and is checked both ways (checkStringCode).
 */
const PLAIN_STRING_AFTER = new Set([
  "exact",
  "show",
  "from",
  "use",
  "refine",
  ":=",
  ":",
  "=",
  "≠",
  "<",
  ">",
  "≤",
  "≥",
  "∈",
  "∉",
  "←",
  "<|",
  "$",
  "(",
  "[",
  ",",
  "⟨",
  "++",
]);

function plainStringAt(ts: ReturnType<typeof lex>, i: number): boolean {
  // `s!"…"`, `m!"…"` and the like are interpolated whatever stands before them.
  if (!tokenText(ts, i).startsWith('"')) return false;
  let k = i - 1;
  while (k >= 0 && isCommentKind(ts.kinds[k] ?? 0)) k--;
  return k >= 0 && PLAIN_STRING_AFTER.has(tokenText(ts, k));
}

/**
 * The code inside a string literal's braces, checked as candidate code. Any syntax may take the string as
 * interpolated (`trace[cls] "…{e}…"`, `throwErrorAt stx "…"`, a library's macro), so every string is read so;
 * one whose two readings end in different places is refused, since then the text after it would be read two
 * ways too.
 */
function checkStringCode(
  text: string,
  start: number,
  end: number,
  policy: CandidatePolicy,
  forbidden: ReadonlySet<string>,
  nesting: number,
  plain: boolean,
): PolicyResult {
  const brace = text.indexOf("{", start);
  if (brace === -1 || brace >= end) return { kind: "allowed" };
  const read = stringCode(text, start, end);
  // A string no syntax takes as interpolated, whose braces hold no code that ends inside it, is text.
  if (read.kind === "unreadable" && plain) return { kind: "allowed" };
  if (read.kind === "unreadable")
    return {
      kind: "rejected",
      rule: "ambiguous-string",
      reason: `the candidate has a string whose braces cannot be read one way (${read.reason}); Lean may read \`{…}\` in any string as code, so a string's braces must hold code that ends inside it, and no quotation mark`,
    };
  if (read.regions.length > 0 && nesting >= MAX_STRING_NESTING)
    return {
      kind: "rejected",
      rule: "ambiguous-string",
      reason: `the candidate nests code in strings more than ${MAX_STRING_NESTING} deep`,
    };
  for (const region of read.regions) {
    const inner = checkCode(text.slice(region.start, region.end), policy, forbidden, nesting + 1);
    if (inner.kind === "rejected") return inner;
  }
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
  /**
   * Tactic words to accept besides TACTIC_WORDS (a tactic of a library the list has not read). A word the
   * policy's word lists refuse stays refused.
   */
  allowTactics?: string[];
}

export function policyFromFile(
  raw: unknown,
): { kind: "ok"; policy: CandidatePolicy } | { kind: "error"; message: string } {
  const file = raw as PolicyFile | null;
  if (typeof file !== "object" || file === null || Array.isArray(file))
    return {
      kind: "error",
      message:
        'a policy file is a JSON object: {"forbid": [...], "allow": [...], "allowTactics": [...], "maxChars": N, "allowNative": false}',
    };
  const strings = (v: unknown) =>
    v === undefined || (Array.isArray(v) && v.every((x) => typeof x === "string"));
  if (!strings(file.forbid) || !strings(file.allow))
    return { kind: "error", message: '"forbid" and "allow" must be lists of identifiers' };
  if (file.maxChars !== undefined && !(Number.isInteger(file.maxChars) && file.maxChars > 0))
    return { kind: "error", message: '"maxChars" must be a positive whole number' };
  if (file.allowNative !== undefined && typeof file.allowNative !== "boolean")
    return { kind: "error", message: '"allowNative" must be true or false' };
  if (!strings(file.allowTactics))
    return { kind: "error", message: '"allowTactics" must be a list of tactic words' };
  const odd = (file.allowTactics ?? []).find((w) => !isTacticWord(w));
  if (odd !== undefined)
    return {
      kind: "error",
      message: `"allowTactics": ${JSON.stringify(odd)} is not a tactic's leading word (one identifier, such as "my_tac" or "my_tac!")`,
    };
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
      codeNamespaces: DEFAULT_POLICY.codeNamespaces,
      percentElaborators: DEFAULT_POLICY.percentElaborators,
      // A word the file allows after all (`exact?`) is a tactic the user accepts.
      tacticWords: withTacticWords(DEFAULT_POLICY, [...(file.allowTactics ?? []), ...allow]).tacticWords,
    },
  };
}

/** The policy with more tactic words allowed (a workspace's own tactics, a policy file's `allowTactics`). */
export function withTacticWords(policy: CandidatePolicy, words: Iterable<string>): CandidatePolicy {
  const known = policy.tacticWords;
  if (known === "any") return policy;
  const extra = [...words].filter((w) => !known.has(w));
  if (extra.length === 0) return policy;
  return { ...policy, tacticWords: new Set([...known, ...extra]) };
}
