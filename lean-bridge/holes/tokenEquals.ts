/**
 * `tokenIs` (lean/tokens.ts) for the miner's hot loops: the same answer, compared code unit by code unit.
 * `String.prototype.startsWith` with a position is a call into the runtime, and the block reader asks such a
 * question of nearly every token at every nesting level.
 */
import type { TokenStream } from "../lean/tokens";

/** Whether token i's text is `word` (false for an index past the last token, as `tokenIs`). */
export function tokenEquals(ts: TokenStream, i: number, word: string): boolean {
  const start = ts.starts[i] ?? 0;
  if ((ts.ends[i] ?? 0) - start !== word.length) return false;
  const text = ts.text;
  for (let k = 0; k < word.length; k++) if (text.charCodeAt(start + k) !== word.charCodeAt(k)) return false;
  return true;
}
