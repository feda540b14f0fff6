/** Reads and parses task files once per content, so a GRPO group of candidates for one hole parses once. */
import { readFileSync, statSync } from "node:fs";
import { resolve, relative, isAbsolute } from "node:path";
import { parseFile, type ParsedFile } from "../lean/commands";
import { LineIndex, normalizeLineEndings } from "../text/positions";

export interface LoadedFile {
  path: string;
  text: string;
  parsed: ParsedFile;
  index: LineIndex;
}

export type LoadResult = { kind: "ok"; file: LoadedFile } | { kind: "error"; message: string };

export class TaskFiles {
  private readonly cache = new Map<string, { stamp: string; file: LoadedFile }>();

  constructor(private readonly projectRoot: string) {}

  load(relPath: string, text?: string): LoadResult {
    const path = isAbsolute(relPath) ? relPath : resolve(this.projectRoot, relPath);
    if (relative(this.projectRoot, path).startsWith("..") && text === undefined)
      return { kind: "error", message: `${relPath} is outside the project ${this.projectRoot}` };
    let stamp: string;
    let raw = text;
    try {
      if (raw === undefined) {
        const st = statSync(path);
        stamp = `${st.mtimeMs}:${st.size}`;
      } else stamp = `text:${raw.length}`;
    } catch {
      return { kind: "error", message: `${relPath}: no such file in ${this.projectRoot}` };
    }
    const hit = this.cache.get(path);
    if (hit && hit.stamp === stamp && (raw === undefined || hit.file.text === normalizeLineEndings(raw)))
      return { kind: "ok", file: hit.file };
    try {
      raw ??= readFileSync(path, "utf8");
    } catch (error) {
      return {
        kind: "error",
        message: `${relPath}: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    const normalized = normalizeLineEndings(raw);
    const file: LoadedFile = {
      path,
      text: normalized,
      parsed: parseFile(normalized),
      index: new LineIndex(normalized),
    };
    this.cache.set(path, { stamp, file });
    if (this.cache.size > 256) this.cache.delete(this.cache.keys().next().value!);
    return { kind: "ok", file };
  }
}
