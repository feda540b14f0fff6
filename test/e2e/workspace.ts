/** A fresh copy of the example Lean workspace for one real-VS-Code test, and the bundled extension-host suite. */
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { EXAMPLE, REPO } from "../helpers";
import { tempDir } from "../tempDirs";

/**
 * Copies the example workspace; `settings` go to its .vscode/settings.json. (Workspace settings, because
 * code-server is a remote window: there, machine-overridable settings such as fimRlvr.trainer.python are
 * ignored in the browser's user settings once the extension's schema is known.)
 */
export function copyExample(settings: Record<string, unknown> = {}): string {
  const ws = join(tempDir("fim-e2e-"), "lean-workspace");
  cpSync(EXAMPLE, ws, {
    recursive: true,
    filter: (path) => !/[/\\](\.lake|\.fim-rlvr)([/\\]|$)/.test(path),
  });
  mkdirSync(join(ws, ".vscode"), { recursive: true });
  writeFileSync(join(ws, ".vscode", "settings.json"), JSON.stringify(settings, null, 2));
  return ws;
}

/** Bundles test/e2e/suite (mocha stays external: it is loaded from node_modules by the extension host). */
export async function bundleSuite(): Promise<string> {
  const outfile = join(REPO, "out", "e2e", "suite.js");
  await build({
    entryPoints: [join(REPO, "test", "e2e", "suite", "index.ts")],
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    external: ["vscode", "mocha"],
    logLevel: "warning",
  });
  return outfile;
}

/** Settings that make a run short and independent of Lean and of a Python environment. */
export function trainingSettings(python: string, steps: number): Record<string, unknown> {
  return {
    "fimRlvr.verifier.mode": "simulator",
    "fimRlvr.trainer.python": python,
    "fimRlvr.trainer.steps": steps,
    "fimRlvr.trainer.groupSize": 2,
    // The real trainer on CPU: no warm start, short candidates, one group per step.
    "fimRlvr.trainer.config": {
      sft_steps: 0,
      max_new_tokens: 24,
      batch_size: 1,
      eval_limit: 4,
      checkpoint_every: 1,
      validation_every: 0,
    },
  };
}
