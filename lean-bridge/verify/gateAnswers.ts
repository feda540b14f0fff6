/**
 * What the kernel gate's processes print, read: Lean's error messages in `lean --json` output, the replay's
 * answer line, and the last lines a process said (for a report). Nothing read here decides a verdict's kind by
 * itself where the process ran a candidate's code (leanKernelGate.ts says which does).
 */
import type { GateAxiom, GateReport, GateStatement } from "./kernelGate";
import { GATE_ANSWER_PREFIX } from "./kernelReplayProgram";

/** A Lean message as `lean --json` prints it (src/Lean/Message.lean, `SerialMessage`). */
interface JsonMessage {
  severity?: string;
  pos?: { line?: number; column?: number };
  data?: string;
}

/** Lean's error messages in `--json` output: each line one message; other lines are not Lean's. */
export function compileErrors(stdout: string): { line: number; text: string }[] {
  const errors: { line: number; text: string }[] = [];
  for (const raw of stdout.split("\n")) {
    const line = raw.trim();
    if (!line.startsWith("{")) continue;
    let message: JsonMessage;
    try {
      message = JSON.parse(line) as JsonMessage;
    } catch {
      continue;
    }
    if (message.severity === "error")
      errors.push({ line: (message.pos?.line ?? 1) - 1, text: (message.data ?? "").split("\n")[0] ?? "" });
  }
  return errors;
}

/** The replay program's answer: the last `FIMRLVR-GATE` line of its output, as a report (undefined: none or malformed). */
export function parseReplayAnswer(stdout: string, elapsedMs: number): GateReport | undefined {
  const line = stdout
    .split("\n")
    .filter((l) => l.startsWith(GATE_ANSWER_PREFIX))
    .at(-1);
  if (!line) return undefined;
  let answer: unknown;
  try {
    answer = JSON.parse(line.slice(GATE_ANSWER_PREFIX.length));
  } catch {
    return undefined;
  }
  if (typeof answer !== "object" || answer === null) return undefined;
  const a = answer as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  switch (a.kind) {
    case "replayed": {
      const declaration = text(a.declaration);
      if (declaration === undefined || typeof a.replayed !== "number" || !Array.isArray(a.axioms))
        return undefined;
      const axioms: GateAxiom[] = [];
      for (const x of a.axioms as unknown[]) {
        const o = (typeof x === "object" && x !== null ? x : {}) as Record<string, unknown>;
        const name = text(o.name);
        if (
          name === undefined ||
          typeof o.declaredInDocument !== "boolean" ||
          typeof o.nativeShape !== "boolean"
        )
          return undefined;
        axioms.push({ name, declaredInDocument: o.declaredInDocument, nativeShape: o.nativeShape });
      }
      const statement = readStatement(a.statement, text(a.statementMessage));
      if (statement === "malformed") return undefined;
      return {
        kind: "replayed",
        declaration,
        replayed: a.replayed,
        axioms,
        ...(statement ? { statement } : {}),
        elapsedMs,
      };
    }
    case "kernel-rejected": {
      const declaration = text(a.declaration);
      const message = text(a.message);
      if (declaration === undefined || message === undefined) return undefined;
      return { kind: "kernel-rejected", declaration, message, elapsedMs };
    }
    case "missing": {
      const message = text(a.message);
      return message === undefined ? undefined : { kind: "missing", message, elapsedMs };
    }
    default:
      return undefined;
  }
}

/** The answer's `statement` field: absent (no reference given), one of its kinds, or malformed. */
function readStatement(value: unknown, message: string | undefined): GateStatement | undefined | "malformed" {
  if (value === undefined) return undefined;
  if (value === "same") return { kind: "same" };
  if ((value === "differs" || value === "no-reference") && message !== undefined)
    return { kind: value, message };
  return "malformed";
}

/** The last lines a process said, for a report. */
export function tail(result: { stdout: string; stderr: string }): string {
  const said = `${result.stderr}\n${result.stdout}`.trim().split("\n").slice(-6).join(" / ");
  return said ? `: ${said}` : "";
}
