/**
 * Whether a candidate is a reference proof with the names it introduces chosen differently (`intro h; exact h`
 * for `intro hp; exact hp`). Lean does not care what a hypothesis is called, so the simulator should not either;
 * but it reads tokens, not scopes, so it accepts a renaming only where token order settles what each name means:
 * - the renamed name is bound by an `intro` of the reference (the token right after it), and the reference does
 *   not mention it before that;
 * - the new name occurs nowhere in the reference, so it captures nothing the reference refers to;
 * - the new name is short and plainly a name (one or two letters, then digits, subscripts or primes: `h`, `hp`,
 *   `h₁`, `x'`), never one of Lean's two-letter keywords or tactics, since a workspace may make any longer word a
 *   keyword (a tactic's name is a token everywhere it is declared);
 * - each renamed name has one new name and no two share one.
 * Anything else is compared as written, and fails where it differs: the simulator fails closed.
 */

/** One or two letters, then digits, subscripts or primes. */
const SHORT_NAME = /^[A-Za-z][A-Za-z]?[0-9₀-₉']*$/u;

/** Words of that shape that Lean (or a common library) reads as syntax. */
const SHORT_KEYWORDS = new Set(["at", "by", "do", "if", "in", "rw", "fn", "λ"]);

function isShortName(text: string): boolean {
  return SHORT_NAME.test(text) && !SHORT_KEYWORDS.has(text);
}

/** Words after which the next token is a name the tactic introduces. */
const INTRODUCING = new Set(["intro"]);

/** Whether `candidate` is `reference` with some of its introduced names renamed, under the rules above. */
export function sameUpToIntroducedNames(reference: readonly string[], candidate: readonly string[]): boolean {
  if (reference.length !== candidate.length) return false;
  const renamed = new Map<string, string>();
  const taken = new Set<string>();
  const inReference = new Set(reference);
  for (let k = 0; k < reference.length; k++) {
    const r = reference[k]!;
    const c = candidate[k]!;
    const rename = renamed.get(r);
    if (rename !== undefined) {
      if (c !== rename) return false;
      continue;
    }
    if (r === c) continue;
    // A difference: only the name right after `intro`, the first time the reference mentions it.
    if (!INTRODUCING.has(reference[k - 1] ?? "") || candidate[k - 1] !== reference[k - 1]) return false;
    if (reference.slice(0, k).includes(r)) return false;
    if (!isShortName(r) || !isShortName(c) || inReference.has(c) || taken.has(c)) return false;
    renamed.set(r, c);
    taken.add(c);
  }
  return true;
}
