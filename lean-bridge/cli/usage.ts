import { existsSync } from "node:fs";
import { readWholeNumber } from "../util/wholeNumber";

/** Usage errors: the CLI prints the message and what to do, then exits with code 2. */
export class UsageError extends Error {}

/**
 * A command's input that does not exist is bad usage (exit 2) in every command, as in export, import and verify:
 * `what` says what to give instead.
 */
export function requireExisting(path: string, what: string): void {
  if (!existsSync(path)) throw new UsageError(`${path}: no such file or folder; give ${what}`);
}

export function parseHole(text: string): {
  start: { line: number; character: number };
  end: { line: number; character: number };
} {
  const m = /^(\d+):(\d+)-(\d+):(\d+)$/.exec(text.trim());
  if (!m) throw new UsageError(`--hole must look like L:C-L:C (0-based line:character), got "${text}"`);
  const [l1, c1, l2, c2] = m.slice(1).map(Number) as [number, number, number, number];
  return { start: { line: l1, character: c1 }, end: { line: l2, character: c2 } };
}

/** A count option (`--workers`, `--seed`, …): a whole number of at least `min` (0 unless said), or a usage error. */
export function parseCount(name: string, text: string | undefined, fallback: number, min = 0): number {
  if (text === undefined) return fallback;
  const n = readWholeNumber(name, text, min);
  if (n.kind === "error") throw new UsageError(n.message);
  return n.value;
}
