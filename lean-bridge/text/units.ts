/**
 * A text's UTF-16 code units as a Uint16Array, for the exporter's loops over every character of a file. V8
 * reads `charCodeAt` of a two-byte string (any file with a `→` or `ℕ` in it) at about half the speed of a
 * typed array, and the copy is one native call (about 0.5 ns a unit). The last text asked about is kept, so
 * the loops over one file share one copy.
 */
import { endianness } from "node:os";

const LITTLE_ENDIAN = endianness() === "LE";
let lastText: string | undefined;
let lastUnits = new Uint16Array(0);

export function unitsOf(text: string): Uint16Array {
  if (text === lastText) return lastUnits;
  const bytes = Buffer.from(text, "utf16le");
  lastUnits =
    LITTLE_ENDIAN && bytes.byteOffset % 2 === 0
      ? new Uint16Array(bytes.buffer, bytes.byteOffset, text.length)
      : Uint16Array.from({ length: text.length }, (_, k) => text.charCodeAt(k));
  lastText = text;
  return lastUnits;
}
