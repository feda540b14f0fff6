/** Other views of the same tasks, for tools people already use, and the bounded prompt text of a task. */
import { readJsonl } from "./jsonl";
import type { ContextRecord, TaskRecord } from "./records";

export type FimTokens = { prefix: string; suffix: string; middle: string };

/** Sentinels as the model families define them (Qwen2.5-Coder; StarCoder/StarCoder2). */
export const FIM_TOKEN_SETS: Record<"qwen" | "starcoder", FimTokens> = {
  qwen: { prefix: "<|fim_prefix|>", suffix: "<|fim_suffix|>", middle: "<|fim_middle|>" },
  starcoder: { prefix: "<fim_prefix>", suffix: "<fim_suffix>", middle: "<fim_middle>" },
};

type HeaderFields = Pick<ContextRecord, "imports" | "scope" | "variables" | "statement">;

/**
 * The text a model sees before a hole, bounded: from the declaration's context row the imports, the scope
 * (`namespace`, `open`…) and the `variable`s, then the statement when the task's prefix window begins after
 * it, then the prefix. The dataset card's Python snippet builds the same text.
 */
export function promptPrefix(context: HeaderFields, task: Pick<TaskRecord, "prefix">): string {
  const header = [...context.imports.map((m) => `import ${m}`), ...context.scope, ...context.variables];
  const statement = task.prefix.includes(context.statement) ? "" : `${context.statement} := by\n`;
  return `${header.length ? header.join("\n") + "\n\n" : ""}${statement}${task.prefix}`;
}

/** Walks contexts.jsonl alongside tasks in the same order (their `context` never decreases). */
export class ContextCursor {
  private readonly rows: Generator<ContextRecord>;
  private current: ContextRecord | undefined;

  constructor(contextsJsonl: string) {
    this.rows = readJsonl<ContextRecord>(contextsJsonl);
  }

  at(index: number): ContextRecord {
    while (this.current?.context !== index) {
      const next = this.rows.next();
      if (next.done) throw new Error(`contexts.jsonl has no row ${index} (tasks out of order)`);
      this.current = next.value;
    }
    return this.current;
  }

  close(): void {
    this.rows.return(undefined);
  }
}

/**
 * Prefix-suffix-middle training text: the bounded prompt before the hole (`promptPrefix`), the task's suffix
 * after it, then the middle. (End-of-text tokens are the tokenizer's business and are not added.)
 */
export function fimText(
  task: TaskRecord,
  context: ContextRecord,
  tokens: FimTokens,
): { id: string; split: string; kind: string; text: string } {
  return {
    id: task.id,
    split: task.split,
    kind: task.kind,
    text: `${tokens.prefix}${promptPrefix(context, task)}${tokens.suffix}${task.suffix}${tokens.middle}${task.middle}`,
  };
}

/**
 * lean-grpo's JSONL: {name, statement, context, imports}, for whole-proof holes only. Its `context` is the
 * whole file text between the imports and the declaration, as lean-grpo needs it to elaborate the statement.
 */
export function leanGrpo(
  task: TaskRecord,
  context: ContextRecord,
  fileText: string,
  headerEnd: number,
): { name: string; statement: string; context: string; imports: string[] } {
  const head = context.text.slice(0, task.offsets.start - context.offsets.start);
  return {
    name: task.decl,
    statement: head.slice(head.indexOf(context.statement)).trimEnd(),
    context: fileText.slice(headerEnd, context.offsets.start).trim(),
    imports: context.imports,
  };
}
