/** Other views of the same tasks, for tools people already use. */
import type { TaskRecord } from "./records";

export type FimTokens = { prefix: string; suffix: string; middle: string };

/** Sentinels as the model families define them (Qwen2.5-Coder; StarCoder/StarCoder2). */
export const FIM_TOKEN_SETS: Record<"qwen" | "starcoder", FimTokens> = {
  qwen: { prefix: "<|fim_prefix|>", suffix: "<|fim_suffix|>", middle: "<|fim_middle|>" },
  starcoder: { prefix: "<fim_prefix>", suffix: "<fim_suffix>", middle: "<fim_middle>" },
};

/**
 * Prefix-suffix-middle training text: the file up to the hole, the rest of the declaration after it, then
 * the middle. (End-of-text tokens are the tokenizer's business and are not added.)
 */
export function fimText(
  task: TaskRecord,
  fileText: string,
  tokens: FimTokens,
): { id: string; split: string; kind: string; text: string } {
  const prefix = fileText.slice(0, task.offsets.start);
  return {
    id: task.id,
    split: task.split,
    kind: task.kind,
    text: `${tokens.prefix}${prefix}${tokens.suffix}${task.suffix}${tokens.middle}${task.middle}`,
  };
}

/** lean-grpo's JSONL: {name, statement, context, imports}, for whole-proof holes only. */
export function leanGrpo(
  task: TaskRecord,
  fileText: string,
  headerEnd: number,
): { name: string; statement: string; context: string; imports: string[] } {
  const declStart = task.offsets.start - task.prefix.length;
  return {
    name: task.decl,
    statement: task.prefix.slice(task.prefix.indexOf(task.statement)).trimEnd(),
    context: fileText.slice(headerEnd, declStart).trim(),
    imports: task.imports,
  };
}
