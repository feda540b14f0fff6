/**
 * A Lean 4 lexer that follows Lean's lexical rules closely enough to never cut inside a token or comment:
 * nested block comments, doc comments, strings with escapes, interpolated strings `s!"…{e}…"` (whose
 * braces hold code), raw strings `r#"…"#`, char literals, `«guillemet»` identifiers, dotted names and
 * Lean's letter-like unicode. It never throws and always advances, so any input terminates.
 *
 * Tokens live in parallel typed arrays (one allocation per file, not per token) because mining lexes
 * tens of megabytes and the verifier lexes every candidate.
 */

import { ASCII_ID_REST, ASCII_ID_START, codePointAt, isDigit, isIdRest, isIdStart, width } from "./chars";
import {
  ADJACENT_INTERPOLATION,
  ASCII_MULTI_FIRST,
  ASCII_PLAIN_SYMBOL,
  INTERPOLATING_KEYWORDS,
  MULTI_BY_FIRST,
} from "./symbols";
import { charLiteralEnd, skipNumber } from "./literals";
import { TokenKind, type TokenStream } from "./tokens";
import { unitsOf } from "../text/units";

class Lexer {
  kinds: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
  cols: Int32Array;
  lines: Int32Array;
  lineFirst: Uint8Array;
  count = 0;
  unterminated = false;
  /** Set by skipIdent when a «…» part was consumed (it may contain newlines). */
  private sawGuillemet = false;
  private lineStart = 0;
  private lastLineWithToken = -1;
  private line = 0;

  /**
   * The text's UTF-16 units: V8 reads a typed array about twice as fast as `charCodeAt` of a two-byte string
   * (any text with `→` or `ℕ` in it). Past the end a read gives undefined, which compares like charCodeAt's NaN.
   */
  private readonly units: Uint16Array;

  constructor(readonly text: string) {
    this.units = unitsOf(text);
    // Lean source averages over four characters a token (whitespace included): most files fit at once, and
    // larger arrays are fresh zeroed memory that a Mathlib-sized export pays for in page faults.
    const capacity = Math.max(64, text.length >> 2);
    this.kinds = new Uint8Array(capacity);
    this.starts = new Int32Array(capacity);
    this.ends = new Int32Array(capacity);
    this.cols = new Int32Array(capacity);
    this.lines = new Int32Array(capacity);
    this.lineFirst = new Uint8Array(capacity);
  }

  private grow(): void {
    const n = this.kinds.length * 2;
    const k = new Uint8Array(n);
    k.set(this.kinds);
    this.kinds = k;
    const s = new Int32Array(n);
    s.set(this.starts);
    this.starts = s;
    const e = new Int32Array(n);
    e.set(this.ends);
    this.ends = e;
    const c = new Int32Array(n);
    c.set(this.cols);
    this.cols = c;
    const l = new Int32Array(n);
    l.set(this.lines);
    this.lines = l;
    const f = new Uint8Array(n);
    f.set(this.lineFirst);
    this.lineFirst = f;
  }

  /** Advances the line bookkeeping over text[from, to). */
  private countLines(from: number, to: number): void {
    const text = this.text;
    for (let j = text.indexOf("\n", from); j !== -1 && j < to; j = text.indexOf("\n", j + 1)) {
      this.line++;
      this.lineStart = j + 1;
    }
  }

  run(): void {
    const text = this.text;
    const units = this.units;
    let { kinds, starts, ends, cols, lines, lineFirst } = this;
    const n = text.length;
    let i = 0;
    while (i < n) {
      const c = units[i]!;
      if (c === 10) {
        this.line++;
        i++;
        this.lineStart = i;
        // The indentation that follows, in a loop of its own (a tenth of Lean's characters).
        while (units[i]! === 32) i++;
        continue;
      }
      if (c === 32 || c === 9 || c === 13) {
        i++;
        continue;
      }
      const start = i;
      const col = start - this.lineStart;
      const first = this.lastLineWithToken !== this.line;
      this.lastLineWithToken = this.line;
      const startLine = this.line;
      let kind: TokenKind;
      // Comments, strings, chars and «guillemet» names may span lines; other tokens never do. Set by the
      // branches that can tell (`sawGuillemet` is set only by `skipIdent`, which only they call).
      let mayWrap = false;
      if (c < 128 && ASCII_ID_START[c] === 1) {
        // Fast path: an identifier starting with an ASCII letter or `_` (most tokens), scanned as
        // `skipIdent` would; it hands over (to scan again from the start) only where a dot is followed by a
        // non-ASCII character (a «…» part or a letter-like one) or a string may follow (`r"…"`, `s!"…"`).
        let slow = false;
        i++;
        let next = units[i]!;
        for (;;) {
          if (next < 128) {
            if (ASCII_ID_REST[next] === 1) {
              next = units[++i]!;
              continue;
            }
            if (next !== 46) break;
            // A dot continues the name only if another name part follows.
            const after = units[i + 1]!;
            if (after < 128 && ASCII_ID_START[after] === 1) {
              i += 2;
              next = units[i]!;
              continue;
            }
            slow = after >= 128;
            break;
          }
          if (!(next >= 128)) break; // The end of the text.
          const r = codePointAt(text, i);
          if (!isIdRest(r)) break;
          i += width(r);
          next = units[i]!;
        }
        if (slow || next === 34 || next === 35) {
          i = this.scanIdentOrPrefixedString(start);
          kind = this.scannedKind;
          mayWrap = kind === TokenKind.Ident ? this.sawGuillemet : true;
          this.sawGuillemet = false;
        } else kind = TokenKind.Ident;
      } else if (c < 128 && ASCII_PLAIN_SYMBOL[c] === 1) {
        // Fast path: a one-character symbol (what `skipSymbol` would find, without its checks).
        i++;
        kind = TokenKind.Symbol;
      } else if (c === 45 && units[i + 1]! === 45) {
        const nl = text.indexOf("\n", i);
        i = nl === -1 ? n : nl;
        kind = TokenKind.LineComment;
      } else if (c === 47 && units[i + 1]! === 45) {
        const next = units[i + 2]!;
        // As in Lean's `whitespace`: `/--` and `/-!` (even `/--/`) open doc comments, whose body starts
        // after the three-character opener; an ordinary `/-` comment also skips the character after `/-`
        // before it looks for nested openers and closers (`/-/- -/` is one whole comment).
        kind = next === 45 || next === 33 ? TokenKind.DocComment : TokenKind.BlockComment;
        i = this.skipBlockComment(i);
        mayWrap = true;
      } else if (c === 34) {
        i = this.skipString(i + 1, this.afterInterpolatingKeyword());
        kind = TokenKind.String;
        mayWrap = true;
        this.sawGuillemet = false; // Names inside `{…}` of an interpolated string.
      } else if (isDigit(c)) {
        // Fast path: plain decimal digits, followed by none of `.`, `e`/`E` and not `0x`/`0b`/`0o`: there
        // `skipNumber` would stop too. Anything else it scans from the start.
        let next = units[++i]!;
        while (next >= 48 && next <= 57) next = units[++i]!;
        const lower = next | 0x20;
        if (
          next === 46 ||
          lower === 101 ||
          (c === 48 && i === start + 1 && (lower === 120 || lower === 98 || lower === 111))
        )
          i = skipNumber(text, start);
        kind = TokenKind.Number;
      } else if (c === 39 && charLiteralEnd(text, i) > 0) {
        i = charLiteralEnd(text, i);
        kind = TokenKind.Char;
        mayWrap = true;
      } else if (c < 128) {
        // Any other ASCII character: never a name (`ASCII_ID_START`), so a symbol.
        i = this.skipSymbol(i, c);
        kind = TokenKind.Symbol;
      } else {
        const cp = codePointAt(text, i);
        if (isIdStart(cp) || cp === 0xab) {
          i = this.scanIdentOrPrefixedString(start);
          kind = this.scannedKind;
          mayWrap = kind === TokenKind.Ident ? this.sawGuillemet : true;
          this.sawGuillemet = false;
        } else {
          i = this.skipSymbol(i, cp);
          kind = TokenKind.Symbol;
        }
      }
      if (i <= start) i = start + 1; // Defensive: every token consumes at least one unit.
      // The token goes into the arrays held in locals (re-read after they grow): field loads per store
      // cost more than the stores.
      const t = this.count;
      if (t === kinds.length) {
        this.grow();
        kinds = this.kinds;
        starts = this.starts;
        ends = this.ends;
        cols = this.cols;
        lines = this.lines;
        lineFirst = this.lineFirst;
      }
      kinds[t] = kind;
      starts[t] = start;
      ends[t] = i;
      cols[t] = col;
      lines[t] = startLine;
      lineFirst[t] = first ? 1 : 0;
      this.count = t + 1;
      if (mayWrap) {
        this.countLines(start, i);
        if (this.line !== startLine) this.lastLineWithToken = this.line;
      }
    }
  }

  /**
   * Whether a string starting here is read by Lean as an interpolated string: the last code token is one
   * of the syntaxes whose argument is `interpolatedStr(term)` (`throwError "…{e}…"`, `m! "…"`).
   */
  private afterInterpolatingKeyword(): boolean {
    for (let k = this.count - 1; k >= 0; k--) {
      const kind = this.kinds[k];
      if (kind === TokenKind.LineComment || kind === TokenKind.BlockComment || kind === TokenKind.DocComment)
        continue;
      if (kind !== TokenKind.Ident) return false;
      return INTERPOLATING_KEYWORDS.has(this.text.slice(this.starts[k], this.ends[k]));
    }
    return false;
  }

  /** What `scanIdentOrPrefixedString` found: an identifier or a string literal. */
  private scannedKind: TokenKind = TokenKind.Ident;

  /** An identifier, or a string literal written after one (`r"…"`, `r#"…"#`, `s!"…"`). */
  private scanIdentOrPrefixedString(start: number): number {
    const end = this.skipIdent(start);
    const special = this.stringAfterIdent(start, end);
    this.scannedKind = special !== end ? TokenKind.String : TokenKind.Ident;
    return special;
  }

  private skipBlockComment(i: number): number {
    const text = this.text;
    const units = this.units;
    const n = text.length;
    let depth = 1;
    if (i + 2 >= n) {
      this.unterminated = true;
      return n;
    }
    let j = i + 2 + width(codePointAt(text, i + 2));
    while (j < n) {
      const c = units[j]!;
      if (c === 47 && units[j + 1]! === 45) {
        depth++;
        j += 2;
      } else if (c === 45 && units[j + 1]! === 47) {
        depth--;
        j += 2;
        if (depth === 0) return j;
      } else j++;
    }
    this.unterminated = true;
    return n;
  }

  /** Scans a string body after its opening quote; with `interpolated`, `{…}` holds code. */
  private skipString(j: number, interpolated: boolean): number {
    const text = this.text;
    const units = this.units;
    const n = text.length;
    while (j < n) {
      const c = units[j]!;
      if (c === 92) j += 2;
      else if (c === 34) return j + 1;
      else if (interpolated && c === 123) j = this.skipInterpolatedCode(j + 1);
      else j++;
    }
    this.unterminated = true;
    return n;
  }

  /** Skips code inside `{…}` of an interpolated string, up to and including the matching `}`. */
  private skipInterpolatedCode(j: number): number {
    const text = this.text;
    const units = this.units;
    const n = text.length;
    let depth = 1;
    while (j < n) {
      const c = units[j]!;
      if (c === 123) {
        depth++;
        j++;
      } else if (c === 125) {
        depth--;
        j++;
        if (depth === 0) return j;
      } else if (c === 34) j = this.skipString(j + 1, false);
      else if (c === 47 && units[j + 1]! === 45) j = this.skipBlockComment(j);
      else if (c === 45 && units[j + 1]! === 45) {
        const nl = text.indexOf("\n", j);
        j = nl === -1 ? n : nl;
      } else if (isIdStart(codePointAt(text, j))) {
        const end = this.skipIdent(j);
        j = this.stringAfterIdent(j, end);
      } else j++;
    }
    this.unterminated = true;
    return n;
  }

  /** Handles `r"…"`, `r#"…"#` and `s!"…"` style literals that begin with an identifier. */
  private stringAfterIdent(identStart: number, identEnd: number): number {
    const text = this.text;
    const units = this.units;
    const next = units[identEnd]!;
    if (identEnd - identStart === 1 && units[identStart]! === 114 && (next === 34 || next === 35)) {
      let hashes = 0;
      let j = identEnd;
      while (units[j]! === 35) {
        hashes++;
        j++;
      }
      if (units[j]! !== 34) return identEnd;
      const closing = '"' + "#".repeat(hashes);
      const end = text.indexOf(closing, j + 1);
      if (end === -1) {
        this.unterminated = true;
        return text.length;
      }
      return end + closing.length;
    }
    if (next === 34 && ADJACENT_INTERPOLATION.has(text.slice(identStart, identEnd)))
      return this.skipString(identEnd + 1, true);
    return identEnd;
  }

  private skipIdent(i: number): number {
    const text = this.text;
    const units = this.units;
    const n = text.length;
    let j = i;
    for (;;) {
      if (units[j]! === 0xab) {
        this.sawGuillemet = true;
        const close = text.indexOf("»", j + 1);
        if (close === -1) this.unterminated = true; // Lean: "unterminated identifier escape".
        j = close === -1 ? n : close + 1;
      } else {
        const c = units[j]!;
        if (c < 128) {
          if (ASCII_ID_START[c] === 0) return j;
          j++;
        } else {
          const cp = codePointAt(text, j);
          if (!isIdStart(cp)) return j;
          j += width(cp);
        }
        while (j < n) {
          const c = units[j]!;
          if (c < 128) {
            // ASCII fast path: most identifier characters are ASCII.
            if (ASCII_ID_REST[c] === 0) break;
            j++;
            continue;
          }
          const r = codePointAt(text, j);
          if (!isIdRest(r)) break;
          j += width(r);
        }
      }
      // A dot continues the name only if another name part follows.
      if (units[j]! === 46) {
        const after = codePointAt(text, j + 1);
        if (isIdStart(after) || after === 0xab) {
          j++;
          continue;
        }
      }
      return j;
    }
  }

  private skipSymbol(i: number, cp: number): number {
    if (cp >= 128) return i + width(cp);
    if (ASCII_MULTI_FIRST[cp] === 0) return i + 1;
    // `MULTI_SYMBOLS`, longest first, by character codes (a map lookup and `startsWith` per symbol cost
    // more than the rest of the lexer on symbol-heavy proofs).
    const text = this.text;
    const units = this.units;
    const next = units[i + 1]!;
    switch (cp) {
      case 58: // `:=` `::`
        return next === 61 || next === 58 ? i + 2 : i + 1;
      case 61: // `=>`
      case 124: // `|>`
      case 45: // `->`
        return next === 62 ? i + 2 : i + 1;
      case 64: // `@[`
        return next === 91 ? i + 2 : i + 1;
      case 46: // `..`
        return next === 46 ? i + 2 : i + 1;
      case 60: // `<;>` `<|>` `<|` `<-`
        if ((next === 59 || next === 124) && units[i + 2]! === 62) return i + 3;
        return next === 124 || next === 45 ? i + 2 : i + 1;
    }
    // A symbol added to `MULTI_SYMBOLS` and not above.
    const candidates = MULTI_BY_FIRST.get(cp);
    if (candidates) for (const sym of candidates) if (text.startsWith(sym, i)) return i + sym.length;
    return i + 1;
  }
}

export function lex(text: string): TokenStream {
  const lexer = new Lexer(text);
  lexer.run();
  return lexer;
}
