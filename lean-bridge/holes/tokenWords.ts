/**
 * Questions about a token's text for the miner's hot loops, answered without slicing the text: `tokenIs`
 * (lean/tokens.ts) compared code unit by code unit, and sets of words looked up by the token's length and
 * first code unit (a number) before any comparison. The block reader asks such questions of nearly every
 * token at every nesting level; a slice allocates a string and a `Set<string>` lookup hashes it, each time.
 */
import type { TokenStream } from "../lean/tokens";

/** Whether token i's text is `word` (false for an index past the last token, as `tokenIs`). */
export function tokenEquals(ts: TokenStream, i: number, word: string): boolean {
  const start = ts.starts[i] ?? 0;
  return textIs(ts.text, start, (ts.ends[i] ?? 0) - start, word);
}

/** Whether the token at `start`, `length` code units long, is `word` (for a loop that has read both). */
export function textIs(text: string, start: number, length: number, word: string): boolean {
  if (length !== word.length) return false;
  for (let k = 0; k < length; k++) if (text.charCodeAt(start + k) !== word.charCodeAt(k)) return false;
  return true;
}

/** The lookup key of a word: its length and first code unit (a small integer). */
function wordKey(length: number, firstCode: number): number {
  return length * 0x10000 + firstCode;
}

/** Words, each with a value, looked up by a token: `get(ts, i)` is `map.get(tokenText(ts, i))`. */
export class TokenWordMap<V> {
  private readonly byKey = new Map<number, [string, V][]>();

  constructor(entries: Iterable<readonly [string, V]>) {
    for (const [word, value] of entries) {
      if (word.length === 0) continue; // No token is empty.
      const key = wordKey(word.length, word.charCodeAt(0));
      const list = this.byKey.get(key) ?? [];
      const at = list.findIndex(([w]) => w === word);
      if (at >= 0)
        list[at] = [word, value]; // A later entry wins, as in a Map.
      else list.push([word, value]);
      this.byKey.set(key, list);
    }
  }

  get(ts: TokenStream, i: number): V | undefined {
    const start = ts.starts[i] ?? 0;
    const length = (ts.ends[i] ?? 0) - start;
    if (length <= 0) return undefined;
    const candidates = this.byKey.get(wordKey(length, ts.text.charCodeAt(start)));
    if (candidates === undefined) return undefined;
    for (const [word, value] of candidates) if (tokenEquals(ts, i, word)) return value;
    return undefined;
  }
}

/** A set of words looked up by a token: `has(ts, i)` is `set.has(tokenText(ts, i))`. */
export class TokenWords {
  private readonly map: TokenWordMap<true>;

  constructor(readonly words: readonly string[]) {
    this.map = new TokenWordMap(words.map((w): [string, true] => [w, true]));
  }

  has(ts: TokenStream, i: number): boolean {
    return this.map.get(ts, i) === true;
  }
}
