/** Finds a workspace's Lean sources and reads them defensively: nothing in it may stop an export. */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { IMPORT_MARKER, IMPORTED_FOLDER_SKIPPED, PROJECT_DIR } from "../util/projectLayout";

export interface SourceFile {
  /** Path relative to the workspace, with forward slashes. */
  file: string;
  text: string;
  /** The file's bytes, which are the text's UTF-8 exactly (absent when a byte-order mark was dropped). */
  utf8?: Buffer;
}

export interface SkippedFile {
  file: string;
  reason: string;
}

/**
 * Build output, dependencies and VCS folders are never sources of the workspace itself; nor is `.fim-rlvr/`
 * (our own files, imported statements among them: util/projectLayout.ts), nor any folder an import
 * marked as its own (an earlier layout's), which is listed as skipped with why.
 */
const IGNORED_DIRS = new Set([
  ".lake",
  "lake-packages",
  ".git",
  "node_modules",
  "build",
  PROJECT_DIR,
  "dist",
]);

export function listLeanFiles(root: string): { files: string[]; skipped: SkippedFile[] } {
  const files: string[] = [];
  const skipped: SkippedFile[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 32) return;
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      skipped.push({ file: rel(root, dir), reason: `unreadable folder: ${(error as Error).message}` });
      return;
    }
    if (depth > 0 && entries.some((entry) => entry.name === IMPORT_MARKER && entry.isFile())) {
      skipped.push({ file: rel(root, dir), reason: IMPORTED_FOLDER_SKIPPED });
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (IGNORED_DIRS.has(entry.name) || entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, depth + 1);
      else if (entry.name.endsWith(".lean")) files.push(path);
    }
  };
  walk(root, 0);
  return { files, skipped };
}

function rel(root: string, path: string): string {
  return relative(root, path).split(sep).join("/");
}

export type ReadResult = { kind: "ok"; source: SourceFile } | { kind: "skipped"; skipped: SkippedFile };

export function readSource(root: string, path: string, maxBytes: number): ReadResult {
  const file = rel(root, path);
  let bytes: Buffer;
  try {
    const size = statSync(path).size;
    if (size > maxBytes)
      return {
        kind: "skipped",
        skipped: {
          file,
          reason: `larger than ${maxBytes} bytes (${size}); raise --max-file-bytes to include it`,
        },
      };
    bytes = readFileSync(path);
  } catch (error) {
    return { kind: "skipped", skipped: { file, reason: `unreadable: ${(error as Error).message}` } };
  }
  if (bytes.includes(0)) return { kind: "skipped", skipped: { file, reason: "binary (contains NUL bytes)" } };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { kind: "skipped", skipped: { file, reason: "not valid UTF-8" } };
  }
  // The text stays exactly as read (CRLF included): replacing a hole's range by its middle gives back the
  // file's bytes, and files.jsonl's sha256 is the file's. Lean reads CRLF as LF; LSP positions agree.
  // Valid UTF-8 decodes and encodes back to the same bytes, but for a leading byte-order mark (dropped).
  const hasBom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  return { kind: "ok", source: hasBom ? { file, text } : { file, text, utf8: bytes } };
}
