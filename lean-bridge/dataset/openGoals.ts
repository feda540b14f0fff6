/**
 * The workspace's open goals: declarations that leave a goal to `sorry` (or its synonyms). A declaration whose
 * whole tactic proof is `sorry` (`theorem t : P := by sorry`) is a statement without a proof: its one task is
 * the proof hole, with no reference (`"reference": false`: never an SFT target; the verifier alone rewards
 * it). A declaration with `sorry` anywhere else (`have h : P := by sorry` inside a proof, a `stop`) has no
 * proof to cut holes from: its holes' middles would teach text that proves nothing, and its other holes are
 * not closed by their own middles. It gives no task and is counted (`sorry-in-proof`). A statement whose term
 * proof is `sorry` (`theorem t : P := sorry`) is counted apart (`term-sorry`) from other term proofs: the
 * verifier checks tactic holes only, so it is offered once written `:= by sorry`.
 */
import type { ParsedFile } from "../lean/commands";
import type { MinedHole } from "../holes/mine";
import { isCommentKind, type TokenStream } from "../lean/tokens";

/**
 * The tokens that leave a goal open, as core Lean defines them (src/Init/Tactics.lean): the `sorry` term and
 * tactic, `admit` (`exact @sorryAx _ false`), `stop` (`repeat sorry` over the rest of the proof) and the axiom
 * `sorryAx` they elaborate to.
 */
const OPEN_GOAL_WORDS = ["sorry", "admit", "stop"] as const;
const SORRY_AX = "sorryAx";

/** The skip reason of a declaration with an open goal inside a larger proof. */
export const SORRY_IN_PROOF = "sorry-in-proof";
/** The skip reason of a statement whose term proof is `sorry` (counted among term proofs by the miner). */
export const TERM_SORRY = "term-sorry";

/** Keywords whose value is data, not a proof (the miner's data-valued definitions). */
const DATA_KEYWORDS = new Set(["def", "abbrev", "opaque"]);

export type OpenGoal =
  /** No open goal: its holes are tasks with their middles as references. */
  | { kind: "proved" }
  /** Its whole proof is `sorry` (or `admit`): `hole` (the proof hole) is its one task, without a reference. */
  | { kind: "statement"; hole: MinedHole }
  /** An open goal elsewhere in it: no task. */
  | { kind: "sorry-in-proof" };

/** The index of the token starting exactly at `offset`, or -1 (binary search over the token starts). */
function tokenStartingAt(ts: TokenStream, offset: number): number {
  let lo = 0;
  let hi = ts.count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ts.starts[mid]! < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo < ts.count && ts.starts[lo] === offset ? lo : -1;
}

/**
 * One file's open-goal tokens, found once (a search for each word, then a check that the match is a whole
 * code token: not part of a name, a string or a comment), and the declarations classified by them in file
 * order.
 */
export class OpenGoals {
  /** Offsets and token indices of the open-goal tokens, ascending. */
  private readonly offsets: number[] = [];
  private readonly tokens: number[] = [];
  /** The first entry not before the last declaration asked about (declarations come in file order). */
  private next = 0;

  constructor(private readonly ts: TokenStream) {
    const { text } = ts;
    const found: [number, number][] = [];
    for (const word of OPEN_GOAL_WORDS)
      for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + word.length)) {
        const i = tokenStartingAt(ts, at);
        if (i < 0 || isCommentKind(ts.kinds[i]!)) continue;
        const token = text.slice(at, ts.ends[i]);
        if (token === word || token === SORRY_AX) found.push([at, i]);
      }
    found.sort((a, b) => a[0] - b[0]);
    for (const [at, i] of found) {
      this.offsets.push(at);
      this.tokens.push(i);
    }
  }

  /**
   * The declarations of `parsed` (this file) stated with a term proof that is `sorry` alone: the miner
   * skips them as term proofs.
   */
  termSorries(parsed: ParsedFile): number {
    if (this.none) return 0;
    const { ts } = this;
    let n = 0;
    for (const command of parsed.commands) {
      const decl = command.declaration;
      if (decl?.bodyKind !== "term" || decl.bodyStart === undefined || DATA_KEYWORDS.has(decl.keyword))
        continue;
      const i = tokenStartingAt(ts, decl.bodyStart);
      if (i < 0 || this.tokens.indexOf(i) < 0 || ts.text.slice(ts.starts[i], ts.ends[i]) !== "sorry")
        continue;
      let next = i + 1;
      while (next <= command.lastToken && isCommentKind(ts.kinds[next]!)) next++;
      if (next > command.lastToken) n++;
    }
    return n;
  }

  /** Whether the file has any: most have none, and then nothing else is looked at. */
  get none(): boolean {
    return this.offsets.length === 0;
  }

  /** What the declaration of `holes` (one declaration's holes, in mining order) is. */
  classify(holes: readonly MinedHole[]): OpenGoal {
    const first = holes[0];
    if (this.none || !first) return { kind: "proved" };
    while (this.next < this.offsets.length && this.offsets[this.next]! < first.declFrom) this.next++;
    let count = 0;
    let token = -1;
    for (let k = this.next; k < this.offsets.length && this.offsets[k]! < first.declTo; k++) {
      count++;
      token = this.tokens[k]!;
    }
    if (count === 0) return { kind: "proved" };
    const word = this.ts.text.slice(this.ts.starts[token], this.ts.ends[token]);
    const proof = holes.find((h) => h.kind === "proof");
    if (
      count === 1 &&
      (word === "sorry" || word === "admit") &&
      proof?.firstToken === token &&
      proof.lastToken === token
    )
      return { kind: "statement", hole: proof };
    return { kind: "sorry-in-proof" };
  }
}
