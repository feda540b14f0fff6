/** `fim-rlvr export WORKSPACE --out DIR …`: mine a workspace and write a dataset (see README, "Datasets"). */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { exportDataset, type ExportFormat } from "../dataset/exporter";
import { FIM_TOKEN_SETS, type FimTokens } from "../dataset/views";
import { HOLE_KINDS, type HoleKind } from "../holes/mine";
import type { VerifierPool } from "../verify/pool";
import { SERVER_OPTION_SPEC, openPool } from "./pool";
import { UsageError, parsePositiveInt } from "./usage";

function parseKinds(text: string | undefined): HoleKind[] {
  if (!text) return [...HOLE_KINDS];
  const kinds = text
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
  for (const k of kinds)
    if (!HOLE_KINDS.includes(k as HoleKind))
      throw new UsageError(`--kinds: unknown kind "${k}" (choose from ${HOLE_KINDS.join(",")})`);
  return kinds as HoleKind[];
}

function parseFormats(text: string | undefined): ExportFormat[] {
  const formats = (text ?? "native").split(",").map((f) => f.trim());
  for (const f of formats)
    if (!["native", "lean-grpo", "fim-text"].includes(f))
      throw new UsageError(`--format: unknown format "${f}" (native, lean-grpo, fim-text)`);
  return formats as ExportFormat[];
}

function parseFimTokens(values: {
  "fim-tokens"?: string;
  "fim-prefix"?: string;
  "fim-suffix"?: string;
  "fim-middle"?: string;
}): FimTokens | undefined {
  const name = values["fim-tokens"];
  if (!name) return undefined;
  if (name === "qwen" || name === "starcoder") return FIM_TOKEN_SETS[name];
  if (name !== "custom")
    throw new UsageError(`--fim-tokens must be qwen, starcoder or custom, got "${name}"`);
  const { "fim-prefix": prefix, "fim-suffix": suffix, "fim-middle": middle } = values;
  if (!prefix || !suffix || !middle)
    throw new UsageError("--fim-tokens custom needs --fim-prefix, --fim-suffix and --fim-middle");
  return { prefix, suffix, middle };
}

export async function exportCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...SERVER_OPTION_SPEC,
      out: { type: "string" },
      kinds: { type: "string" },
      verify: { type: "boolean" },
      "max-middle-chars": { type: "string" },
      "max-file-bytes": { type: "string" },
      seed: { type: "string" },
      format: { type: "string" },
      "fim-tokens": { type: "string" },
      "fim-prefix": { type: "string" },
      "fim-suffix": { type: "string" },
      "fim-middle": { type: "string" },
      workers: { type: "string" },
    },
    strict: true,
  });
  const workspace = positionals[0];
  if (!workspace) throw new UsageError("give the workspace folder: fim-rlvr export WORKSPACE --out DIR");
  if (positionals.length > 1) throw new UsageError(`one workspace at a time, got ${positionals.join(", ")}`);
  if (!existsSync(workspace) || !statSync(workspace).isDirectory())
    throw new UsageError(`${workspace}: no such folder`);
  if (!values.out) throw new UsageError("--out DIR is required: where to write the dataset");
  const formats = parseFormats(values.format);
  const fimTokens = parseFimTokens(values);
  if (formats.includes("fim-text") && !fimTokens)
    throw new UsageError("--format fim-text needs --fim-tokens qwen|starcoder|custom");
  if ((values.simulator || values.server) && !values.verify)
    throw new UsageError("--simulator and --server choose the verifier for --verify; add --verify");
  const root = resolve(workspace);
  const pool: VerifierPool | undefined = values.verify
    ? await openPool(root, values, parsePositiveInt("--workers", values.workers, 4) || 1)
    : undefined;
  const abort = new AbortController();
  const onSigint = () => {
    process.stderr.write("\nexport: interrupted; the previous dataset (if any) is left untouched\n");
    abort.abort();
    process.off("SIGINT", onSigint); // A second Ctrl-C ends the process at once.
  };
  process.on("SIGINT", onSigint);
  let last = 0;
  try {
    const result = await exportDataset({
      workspace: root,
      out: values.out,
      kinds: parseKinds(values.kinds),
      seed: parsePositiveInt("--seed", values.seed, 0),
      ...(values["max-middle-chars"] !== undefined
        ? { maxMiddleChars: parsePositiveInt("--max-middle-chars", values["max-middle-chars"], 0) }
        : {}),
      maxFileBytes: parsePositiveInt("--max-file-bytes", values["max-file-bytes"], 4 * 1024 * 1024),
      formats,
      ...(fimTokens ? { fimTokens } : {}),
      ...(pool ? { pool } : {}),
      signal: abort.signal,
      onProgress: (p) => {
        const now = performance.now();
        if (now - last < 1000 && p.done !== p.total) return;
        last = now;
        process.stderr.write(
          `export: ${p.phase} ${p.done}/${p.total}${pool && p.phase === "verifying" ? ` (verifier: ${pool.identity.label})` : ""}\n`,
        );
      },
    });
    if (result.kind === "cancelled") return 130;
    if (result.kind === "error") throw new UsageError(result.message);
    const r = result.report;
    const kinds = Object.entries(r.holes.kept.byKind)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ");
    process.stderr.write(
      `export: wrote ${r.holes.kept.total} tasks (${kinds}) from ${r.files.mined} files to ${result.out}\n` +
        `  splits: train ${r.holes.kept.bySplit.train}, validation ${r.holes.kept.bySplit.validation}, test ${r.holes.kept.bySplit.test}; ` +
        `skipped: ${r.files.skipped.length} files, ${Object.values(r.declarations.skipped).reduce((a, b) => a + b, 0)} declarations without tactic proofs, ${r.holes.duplicatesDropped} duplicates\n` +
        (r.verification
          ? `  verified by ${r.verification.verifier}: ${r.verification.kept} kept, ${r.verification.dropped} dropped\n`
          : "") +
        `  dataset card: ${resolve(result.out, "README.md")}\n`,
    );
    return 0;
  } finally {
    process.off("SIGINT", onSigint);
    await pool?.stop();
  }
}
