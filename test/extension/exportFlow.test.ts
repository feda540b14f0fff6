/**
 * The export command's flow with a fake editor UI: pickers, progress, cancel, summary, card. The export
 * runs as the editor runs it: in a child process (the bundled dist/exportWorker.js).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  OPEN_CARD,
  editorMessage,
  runExportFlow,
  type ExportUi,
  type VerifyChoice,
} from "../../extension/exportFlow";
import { childProcessRunner, ExportChild } from "../../extension/exportProcess";
import { EXAMPLE, REPO } from "../helpers";
import { generateCorpusFile, mulberry32 } from "../../bench/corpus";
import { tempDir } from "../tempDirs";

const WORKER = join(REPO, "dist", "exportWorker.js");
const run = childProcessRunner(WORKER);

function fakeUi(
  workspace: string | undefined,
  output: (suggested: string) => string | undefined,
  cancelAt?: number,
  /** null: the user backs out of the verification pick. */
  verify: VerifyChoice | null = "none",
) {
  const log: {
    progress: [string, number][];
    infos: string[];
    errors: string[];
    details: string[];
    opened: string[];
    suggested: string[];
  } = { progress: [], infos: [], errors: [], details: [], opened: [], suggested: [] };
  const ui: ExportUi = {
    pickWorkspace: async () => workspace,
    pickOutput: async (suggested) => {
      log.suggested.push(suggested);
      return output(suggested);
    },
    pickVerification: async () => verify ?? undefined,
    withProgress: async (_title, task) => {
      const abort = new AbortController();
      return task((message, fraction) => {
        log.progress.push([message, fraction]);
        if (cancelAt !== undefined && log.progress.length >= cancelAt) abort.abort();
      }, abort.signal);
    },
    info: async (message, ...actions) => {
      log.infos.push(message);
      return actions.includes(OPEN_CARD) ? OPEN_CARD : undefined;
    },
    error: (message, detail) => {
      log.errors.push(message);
      log.details.push(detail ?? "");
    },
    openFile: async (path) => {
      log.opened.push(path);
    },
  };
  return { ui, log };
}

function workspaceCopy(): string {
  const ws = join(tempDir("fim-flow-"), "ws");
  cpSync(EXAMPLE, ws, { recursive: true });
  return ws;
}

test("export flow: default output, growing progress, a summary with counts, and the card opened", async () => {
  const ws = workspaceCopy();
  const { ui, log } = fakeUi(ws, (s) => s);
  assert.equal(await runExportFlow(ui, run), "exported");
  assert.deepEqual(log.suggested, [join(ws, ".fim-rlvr", "dataset")]);
  const fractions = log.progress.map((p) => p[1]);
  assert.ok(fractions.length > 1);
  assert.deepEqual(
    fractions,
    [...fractions].sort((a, b) => a - b),
    "progress only moves forward",
  );
  assert.equal(fractions.at(-1), 1);
  assert.match(
    log.infos[0]!,
    /^Exported \d+ tasks \(proof \d+, .*\) from 10 files to .*Skipped: 0 files, 4 declarations without tactic proofs/,
  );
  assert.deepEqual(log.opened, [join(ws, ".fim-rlvr", "dataset", "README.md")]);
  assert.ok(existsSync(join(ws, ".fim-rlvr", "dataset", "tasks.jsonl")));
});

test("export flow: cancel leaves the previous dataset intact and says so", async () => {
  const ws = workspaceCopy();
  const out = join(ws, "..", "out");
  assert.equal(await runExportFlow(fakeUi(ws, () => out).ui, run), "exported");
  const before = readFileSync(join(out, "tasks.jsonl"), "utf8");
  // Enough source that the export is still mining when the cancel reaches the child process.
  const rand = mulberry32(3);
  for (let k = 0; k < 40; k++) writeFileSync(join(ws, `Gen${k}.lean`), generateCorpusFile(rand, 200));
  const { ui, log } = fakeUi(ws, () => out, 1);
  assert.equal(await runExportFlow(ui, run), "cancelled");
  assert.match(log.infos[0]!, /cancelled: nothing was written/);
  assert.equal(readFileSync(join(out, "tasks.jsonl"), "utf8"), before);
});

test("export flow: backing out of a picker does nothing; a bad folder gives an error saying what to do", async () => {
  assert.equal(await runExportFlow(fakeUi(undefined, (s) => s).ui, run), "backed-out");
  assert.equal(await runExportFlow(fakeUi(workspaceCopy(), () => undefined).ui, run), "backed-out");
  const ws = workspaceCopy();
  const { ui, log } = fakeUi(ws, () => join(ws, "FimExamples"));
  assert.equal(await runExportFlow(ui, run), "failed");
  assert.equal(log.errors[0], "FIM-RLVR export failed.", "a short message…");
  assert.match(
    log.details[0]!,
    /not a dataset written by fim-rlvr; choose another folder or remove it$/,
    "…and the whole story",
  );
  assert.match(log.details[0]!, /^The output folder .*FimExamples exists, is not empty/);
  assert.doesNotMatch(log.details[0]!, /--out/, "no CLI flag in the editor");
  assert.equal(
    editorMessage("--out /x exists and is not a folder"),
    "The output folder /x exists and is not a folder",
  );
  assert.equal(await runExportFlow(fakeUi(workspaceCopy(), (s) => s, undefined, null).ui, run), "backed-out");
});

test("export flow: verifying in the editor (the simulator here) keeps only verified holes and the card says so", async () => {
  const ws = workspaceCopy();
  const { ui, log } = fakeUi(ws, (s) => s, undefined, { kind: "simulator" });
  assert.equal(await runExportFlow(ui, run), "exported", log.details.join("\n"));
  assert.ok(
    log.progress.some(([message]) => message.startsWith("verifying")),
    "a verifying phase ran",
  );
  const card = readFileSync(join(ws, ".fim-rlvr", "dataset", "README.md"), "utf8");
  assert.doesNotMatch(card, /were not verified at export time/);
});

test("the export runs in its own process, and a process that dies says so instead of hanging", async () => {
  const ws = workspaceCopy();
  const out = join(ws, "..", "ds");
  const phases = new Set<string>();
  const child = ExportChild.start(
    WORKER,
    { workspace: ws, out, kinds: ["proof"], seed: 0, maxFileBytes: 1 << 20, formats: ["native"] },
    (p) => phases.add(p.phase),
  );
  assert.ok(child.pid !== undefined && child.pid !== process.pid, "a separate process");
  const result = await child.result;
  assert.equal(result.kind, "ok");
  assert.ok(phases.has("mining") && phases.has("writing"));
  const dead = join(tempDir("fim-dead-"), "dies.js");
  writeFileSync(dead, "process.stderr.write('out of memory, say\\n'); process.exit(3);\n");
  const died = await childProcessRunner(dead)(
    { workspace: ws, out, kinds: ["proof"], seed: 0, maxFileBytes: 1 << 20, formats: ["native"] },
    () => {},
    new AbortController().signal,
  );
  assert.equal(died.kind, "error");
  if (died.kind === "error") {
    assert.match(died.message, /ended without a result \(exit code 3\): out of memory, say/);
    assert.match(died.message, /previous dataset, if any, is unchanged/);
  }
});

test("an empty workspace gives an error that says what was found", async () => {
  const ws = tempDir("fim-flow-empty-");
  writeFileSync(join(ws, "T.lean"), "theorem t : True := trivial\n");
  const { ui, log } = fakeUi(ws, (s) => s);
  assert.equal(await runExportFlow(ui, run), "failed");
  assert.equal(log.errors[0], "FIM-RLVR found nothing to export.");
  assert.match(log.details[0]!, /^found 1 Lean file with 1 declaration, but no tactic proofs/);
  assert.deepEqual(readdirSync(join(ws, ".fim-rlvr")), [], "no dataset and no staging folder is left");
});
