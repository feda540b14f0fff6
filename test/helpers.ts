/** Shared test helpers: the example workspace, fixtures, and a hole finder by text. */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../lean-bridge/server/launch";
import { parseFile } from "../lean-bridge/lean/commands";
import type { Range } from "vscode-languageserver-protocol";
import { LineIndex } from "../lean-bridge/text/positions";
import type { LeanPublishDiagnosticsParams } from "../lean-bridge/protocol/lean";

export const REPO = packageRoot(__filename);
export const EXAMPLE = join(REPO, "lean-env");

export function readExample(rel: string): string {
  return readFileSync(join(EXAMPLE, rel), "utf8");
}

/** The range of the whole tactic proof (after `by`) of the named declaration. */
export function proofHole(text: string, name: string): Range {
  const file = parseFile(text);
  const decl = file.commands.map((c) => c.declaration).find((d) => d?.name === name);
  if (!decl || decl.byStart === undefined || decl.byEnd === undefined)
    throw new Error(`no tactic proof named ${name}`);
  let start = decl.byStart + 2;
  while (/\s/.test(text[start] ?? "")) start++;
  return new LineIndex(text).rangeAt(start, decl.byEnd);
}

export function realPayloads(): LeanPublishDiagnosticsParams[] {
  const dir = join(REPO, "test", "fixtures", "lean-payloads");
  return ["incrementalTactic.jsonl", "2058.jsonl"].flatMap((f) =>
    readFileSync(join(dir, f), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LeanPublishDiagnosticsParams),
  );
}

/** Runs `node CLI args…` with `env`; `onStderr` may act on the output so far (kill a process, press Ctrl-C). */
export function runCli(
  cli: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  onStderr?: (all: string, child: ChildProcess) => void,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, [cli, ...args], { env });
  let stderr = "";
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
    onStderr?.(stderr, child);
  });
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stderr, stdout })));
}
