/**
 * Completion cleaning, exactly as the trainer does it (trainer/fim_rlvr/tasks/clean.py): what the model wrote becomes
 * the candidate the verifier checks. Stops are cut, a ```lean fence is stripped, tabs are expanded, and later
 * lines are re-indented to the hole's column. The parity test (test/models/promptParity.test.ts) runs the
 * Python on the same inputs and compares byte for byte.
 */
import { pyRstrip, pyStrip } from "../text/pyText";

const FENCE_OPEN = /^\s*```[A-Za-z0-9_+-]*[ \t]*\n/;

/** The text before the earliest stop string. */
export function cutAtStops(text: string, stops: readonly string[]): string {
  let end = text.length;
  for (const stop of stops) {
    if (!stop) continue;
    const at = text.indexOf(stop);
    if (at !== -1) end = Math.min(end, at);
  }
  return text.slice(0, end);
}

/** Removes a ```lean ... ``` wrapper; returns the text and whether one was there. */
export function stripFence(text: string): [string, boolean] {
  const match = FENCE_OPEN.exec(text);
  if (!match) return [text, false];
  const body = text.slice(match[0].length);
  const close = body.indexOf("```");
  return [close === -1 ? body : body.slice(0, close), true];
}

function leadingSpaces(line: string): number {
  return line.length - line.replace(/^ +/, "").length;
}

/**
 * Puts the first line at the hole and shifts later lines by (indent - firstLineColumn), keeping their layout.
 * `firstLineColumn` is where the first line stood in the completion's own coordinates.
 */
export function reindent(text: string, indent: number, firstLineColumn: number): string {
  const lines = text.split("\n");
  const shift = indent - firstLineColumn;
  const out = [lines[0]!.replace(/^ +/, "")];
  for (const line of lines.slice(1)) {
    if (!pyStrip(line)) out.push("");
    else if (shift >= 0) out.push(" ".repeat(shift) + line);
    else out.push(line.slice(Math.min(-shift, leadingSpaces(line))));
  }
  return out.join("\n");
}

/** The candidate for a raw completion: stops cut, fences stripped, tabs expanded, lines re-indented. */
export function cleanCompletion(raw: string, indent: number, stops: readonly string[], fim: boolean): string {
  let text = raw.replaceAll("\r\n", "\n").replaceAll("\t", "  ");
  let fencedIn = false;
  if (!fim || FENCE_OPEN.test(text)) [text, fencedIn] = stripFence(text);
  text = fencedIn ? text.replaceAll("```", "") : cutAtStops(text, stops);
  // Leading blank lines carry no code; trailing whitespace would only change the verifier's ranges.
  const lines = text.split("\n");
  let dropped = 0;
  while (lines.length > 1 && !pyStrip(lines[0]!)) {
    lines.shift();
    dropped += 1;
  }
  text = pyRstrip(lines.join("\n"));
  if (!pyStrip(text)) return "";
  const continuesPrefix = fim && !fencedIn && dropped === 0;
  const firstColumn = continuesPrefix ? indent : leadingSpaces(text.split("\n", 1)[0]!);
  return reindent(text, indent, firstColumn);
}

const LEAN_BLOCK = /```[ \t]*lean4?[ \t]*\n([\s\S]*?)```/g;
const THINK_END = "</think>";

/**
 * A reasoning model's answer: the last closed ```lean (or ```lean4) block after its thinking (after `</think>`
 * when there is one), re-indented to the hole. "" when there is none: an unfinished answer proves nothing.
 */
export function finalLeanBlock(raw: string, indent: number): string {
  let text = raw.replaceAll("\r\n", "\n").replaceAll("\t", "  ");
  const think = text.lastIndexOf(THINK_END);
  if (think !== -1) text = text.slice(think + THINK_END.length);
  const blocks = [...text.matchAll(LEAN_BLOCK)].map((m) => m[1]!);
  if (blocks.length === 0) return "";
  const lines = blocks[blocks.length - 1]!.split("\n");
  while (lines.length > 0 && !pyStrip(lines[0]!)) lines.shift();
  const body = pyRstrip(lines.join("\n"));
  if (!pyStrip(body)) return "";
  return reindent(body, indent, leadingSpaces(body.split("\n", 1)[0]!));
}
