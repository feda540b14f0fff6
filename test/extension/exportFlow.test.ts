/** The export command's flow with a fake editor UI: pickers, progress, cancel, summary, card. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OPEN_CARD, runExportFlow, type ExportUi } from "../../extension/exportFlow";
import { EXAMPLE } from "../helpers";

function fakeUi(
  workspace: string | undefined,
  output: (suggested: string) => string | undefined,
  cancelAt?: number,
) {
  const log: {
    progress: [string, number][];
    infos: string[];
    errors: string[];
    opened: string[];
    suggested: string[];
  } = { progress: [], infos: [], errors: [], opened: [], suggested: [] };
  const ui: ExportUi = {
    pickWorkspace: async () => workspace,
    pickOutput: async (suggested) => {
      log.suggested.push(suggested);
      return output(suggested);
    },
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
    error: (message) => log.errors.push(message),
    openFile: async (path) => {
      log.opened.push(path);
    },
  };
  return { ui, log };
}

function workspaceCopy(): string {
  const ws = join(mkdtempSync(join(tmpdir(), "fim-flow-")), "ws");
  cpSync(EXAMPLE, ws, { recursive: true });
  return ws;
}

test("export flow: default output, growing progress, a summary with counts, and the card opened", async () => {
  const ws = workspaceCopy();
  const { ui, log } = fakeUi(ws, (s) => s);
  assert.equal(await runExportFlow(ui), "exported");
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
    /^Exported \d+ tasks \(proof \d+, .*\) from 8 files to .*Skipped: 0 files, 3 declarations without tactic proofs/,
  );
  assert.deepEqual(log.opened, [join(ws, ".fim-rlvr", "dataset", "README.md")]);
  assert.ok(existsSync(join(ws, ".fim-rlvr", "dataset", "tasks.jsonl")));
});

test("export flow: cancel leaves the previous dataset intact and says so", async () => {
  const ws = workspaceCopy();
  const out = join(ws, "..", "out");
  assert.equal(await runExportFlow(fakeUi(ws, () => out).ui), "exported");
  const before = readFileSync(join(out, "tasks.jsonl"), "utf8");
  const { ui, log } = fakeUi(ws, () => out, 1);
  assert.equal(await runExportFlow(ui), "cancelled");
  assert.match(log.infos[0]!, /cancelled: nothing was written/);
  assert.equal(readFileSync(join(out, "tasks.jsonl"), "utf8"), before);
});

test("export flow: backing out of a picker does nothing; a bad folder gives an error saying what to do", async () => {
  assert.equal(await runExportFlow(fakeUi(undefined, (s) => s).ui), "backed-out");
  assert.equal(await runExportFlow(fakeUi(workspaceCopy(), () => undefined).ui), "backed-out");
  const ws = workspaceCopy();
  const { ui, log } = fakeUi(ws, () => join(ws, "FimExamples"));
  assert.equal(await runExportFlow(ui), "failed");
  assert.match(log.errors[0]!, /not a dataset written by fim-rlvr; choose another folder or remove it/);
});
