/**
 * The smallest single-range edit between two texts. Lean re-elaborates everything after the first changed
 * position, so sending only the changed middle is what lets it reuse the snapshots of the unchanged prefix.
 */
import type { TextDocumentContentChangeEvent } from "vscode-languageserver-protocol";
import { LineIndex } from "./positions";

export interface MinimalEdit {
  /** Offsets in the old text. */
  start: number;
  end: number;
  insert: string;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

export function minimalEdit(oldText: string, newText: string): MinimalEdit | undefined {
  if (oldText === newText) return undefined;
  const max = Math.min(oldText.length, newText.length);
  let prefix = 0;
  while (prefix < max && oldText.charCodeAt(prefix) === newText.charCodeAt(prefix)) prefix++;
  // Never split a surrogate pair: an LSP position inside an astral character is meaningless.
  if (prefix > 0 && isHighSurrogate(oldText.charCodeAt(prefix - 1))) prefix--;
  let suffix = 0;
  const maxSuffix = max - prefix;
  while (
    suffix < maxSuffix &&
    oldText.charCodeAt(oldText.length - 1 - suffix) === newText.charCodeAt(newText.length - 1 - suffix)
  )
    suffix++;
  if (suffix > 0 && isLowSurrogate(oldText.charCodeAt(oldText.length - suffix))) suffix--;
  return {
    start: prefix,
    end: oldText.length - suffix,
    insert: newText.slice(prefix, newText.length - suffix),
  };
}

/** The LSP change event for `minimalEdit`, with the range expressed in the old text's UTF-16 positions. */
export function incrementalChange(
  oldText: string,
  newText: string,
): TextDocumentContentChangeEvent | undefined {
  const edit = minimalEdit(oldText, newText);
  if (!edit) return undefined;
  const index = new LineIndex(oldText);
  return { range: index.rangeAt(edit.start, edit.end), text: edit.insert };
}

/** Applies LSP content changes in order, each against the result of the previous (as Lean does). */
export function applyChanges(text: string, changes: readonly TextDocumentContentChangeEvent[]): string {
  let current = text;
  for (const change of changes) {
    if (!("range" in change)) {
      current = change.text;
      continue;
    }
    const index = new LineIndex(current);
    const start = index.offsetAt(change.range.start);
    const end = Math.max(start, index.offsetAt(change.range.end));
    current = current.slice(0, start) + change.text + current.slice(end);
  }
  return current;
}
