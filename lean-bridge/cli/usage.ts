/** Usage errors: the CLI prints the message and what to do, then exits with code 2. */
export class UsageError extends Error {}

export const USAGE = `fim-rlvr — fill-in-the-middle RL data and verification for Lean 4

Commands:
  fim-rlvr verify --project DIR --file REL.lean --hole L:C-L:C --candidate TEXT
                  [--server "CMD ..."] [--simulator] [--timeout-ms N] [--json]
  fim-rlvr verify-batch --project DIR --input CANDIDATES.jsonl --out VERDICTS.jsonl
                  [--server "CMD"] [--simulator] [--workers K]
  fim-rlvr export WORKSPACE --out DIR [--kinds proof,steps,block,tactic] [--verify]
                  [--simulator] [--server "CMD"] [--max-middle-chars N] [--seed S]
                  [--format native|lean-grpo|fim-text] [--fim-tokens qwen|starcoder|custom]
  fim-rlvr simulator [--oracle FILE] [--header-ms N] [--decl-ms N]

Holes are LSP positions: 0-based line, character counted in UTF-16 code units.
Without --server or --simulator, Lean is started with \`lake serve\` from PATH.
The simulator is a stand-in for Lean (dry run); verdicts always name the verifier that made them.
Common options: --oracle FILE (simulator alternatives), --memory-mb N (Lean -M per worker),
  --memory-budget-mb N (all workers together; limits the slots; default 3/4 of RAM),
  --cpu-seconds N (CPU limit), --no-sandbox (do not use bubblewrap), --reward binary|partial,
  --policy FILE (candidate policy changes: {"forbid": [...], "allow": [...], "maxChars": N}).`;

export function parseHole(text: string): {
  start: { line: number; character: number };
  end: { line: number; character: number };
} {
  const m = /^(\d+):(\d+)-(\d+):(\d+)$/.exec(text.trim());
  if (!m) throw new UsageError(`--hole must look like L:C-L:C (0-based line:character), got "${text}"`);
  const [l1, c1, l2, c2] = m.slice(1).map(Number) as [number, number, number, number];
  return { start: { line: l1, character: c1 }, end: { line: l2, character: c2 } };
}

export function parsePositiveInt(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${name} must be a whole number, got "${text}"`);
  return n;
}
