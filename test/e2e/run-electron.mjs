// Runs the extension-host suites (test/e2e/suite) in a downloaded VS Code with @vscode/test-electron: the
// hosted-CI path (it needs the internet to fetch VS Code). Here, test/e2e/training.test.ts runs the same
// suites in code-server. Usage: npm run build && node test/e2e/run-electron.mjs
import { cpSync, mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { runTests } from "@vscode/test-electron";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const suite = join(repo, "out", "e2e", "suite.js");
await build({
  entryPoints: [join(repo, "test", "e2e", "suite", "index.ts")],
  outfile: suite,
  bundle: true,
  platform: "node",
  format: "cjs",
  external: ["vscode", "mocha"],
});
const workspace = join(mkdtempSync(join(tmpdir(), "fim-electron-")), "lean-workspace");
cpSync(join(repo, "lean-env"), workspace, {
  recursive: true,
  filter: (p) => !/[/\\](\.lake|\.fim-rlvr)([/\\]|$)/.test(p),
});
mkdirSync(join(workspace, ".vscode"), { recursive: true });
writeFileSync(
  join(workspace, ".vscode", "settings.json"),
  JSON.stringify({
    "fimRlvr.verifier.mode": "simulator",
    "fimRlvr.trainer.python":
      process.env.FIM_TRAINER_PYTHON ?? join(repo, "trainer", ".venv", "bin", "python"),
    "fimRlvr.trainer.steps": 3,
    "fimRlvr.trainer.groupSize": 2,
    "fimRlvr.trainer.config": {
      sft_steps: 0,
      max_new_tokens: 24,
      batch_size: 1,
      eval_limit: 4,
      checkpoint_every: 1,
    },
  }),
);
await runTests({
  extensionDevelopmentPath: repo,
  extensionTestsPath: suite,
  launchArgs: [workspace, "--disable-extensions", "--disable-workspace-trust"],
});
