/** Other views of the same tasks, for tools people already use, and the bounded prompt text of a task. */
import type { TaskRecord } from "./records";

export type FimTokens = { prefix: string; suffix: string; middle: string };

/** Sentinels as the model families define them (Qwen2.5-Coder; StarCoder/StarCoder2). */
export const FIM_TOKEN_SETS: Record<"qwen" | "starcoder", FimTokens> = {
  qwen: { prefix: "<|fim_prefix|>", suffix: "<|fim_suffix|>", middle: "<|fim_middle|>" },
  starcoder: { prefix: "<fim_prefix>", suffix: "<fim_suffix>", middle: "<fim_middle>" },
};

type PromptFields = Pick<TaskRecord, "imports" | "scope" | "variables" | "statement" | "prefix">;

/**
 * The text a model sees before a hole, bounded: the imports, the scope (`namespace`, `open`…) and the
 * `variable`s, then the statement when the prefix window begins after it, then the prefix. The dataset
 * card's Python snippet builds the same text.
 */
export function promptPrefix(task: PromptFields): string {
  const header = [...task.imports.map((m) => `import ${m}`), ...task.scope, ...task.variables];
  const statement = task.prefix.includes(task.statement) ? "" : `${task.statement} := by\n`;
  return `${header.length ? header.join("\n") + "\n\n" : ""}${statement}${task.prefix}`;
}

/**
 * Prefix-suffix-middle training text: the bounded prompt before the hole (`promptPrefix`), the task's suffix
 * after it, then the middle. (End-of-text tokens are the tokenizer's business and are not added.)
 */
export function fimText(
  task: TaskRecord,
  tokens: FimTokens,
): { id: string; split: string; kind: string; text: string } {
  return {
    id: task.id,
    split: task.split,
    kind: task.kind,
    text: `${tokens.prefix}${promptPrefix(task)}${tokens.suffix}${task.suffix}${tokens.middle}${task.middle}`,
  };
}

/** The UTF-16 offset of an LSP position in a text (lines end at "\n"; CRLF keeps its "\r" in the line). */
function offsetOf(text: string, position: { line: number; character: number }): number {
  let at = 0;
  for (let line = 0; line < position.line; line++) {
    const next = text.indexOf("\n", at);
    if (next < 0) return text.length;
    at = next + 1;
  }
  return at + position.character;
}

/**
 * lean-grpo's JSONL: {name, statement, context, imports}, for whole-proof holes only. Its `context` is the
 * whole file text between the imports and the declaration, as lean-grpo needs it to elaborate the statement.
 */
export function leanGrpo(
  task: TaskRecord,
  fileText: string,
  headerEnd: number,
): { name: string; statement: string; context: string; imports: string[] } {
  const declStart = offsetOf(fileText, task.declStart);
  const head = fileText.slice(declStart, task.offsets.start);
  return {
    name: task.decl,
    statement: head.slice(head.indexOf(task.statement)).trimEnd(),
    context: fileText.slice(headerEnd, declStart).trim(),
    imports: task.imports,
  };
}
