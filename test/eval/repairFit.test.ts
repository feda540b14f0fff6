/**
 * `eval --repair` when a repair prompt does not fit the model's context (vLLM answers 400 "This model's maximum
 * context length is …"): the block is shortened level by level (the attempt cut, then left out, then Lean's
 * messages to their first lines) and asked again; a prompt that fits at no level leaves the sample a miss at its
 * last verified turn, recorded with the cause; the task's own prompt too long is infrastructure; the run never
 * ends for it. Over a scripted backend, and over the OpenAI-compatible backend against a stub that refuses as vLLM
 * does.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ModelBackend, PromptParts } from "../../lean-bridge/models/backend";
import { parseModelSpec } from "../../lean-bridge/models/backend";
import { FakeBackend, type Script } from "../../lean-bridge/models/fakeBackend";
import { openBackend } from "../../lean-bridge/models/open";
import type { EvalIdentity } from "../../lean-bridge/eval/records";
import {
  REPAIR_FITS,
  REPAIR_HEADER,
  repairParts,
  repairVerdict,
  withoutRepairFeedback,
} from "../../lean-bridge/eval/repair";
import { readResults } from "../../lean-bridge/eval/resultsFile";
import { runEvalLoop, type EvalTask } from "../../lean-bridge/eval/runEval";
import { summarise } from "../../lean-bridge/eval/summary";
import { summaryText } from "../../lean-bridge/eval/summaryText";
import type { Verdict } from "../../lean-bridge/verify/verdict";
import { startStub } from "../models/openaiStub";
import { tempDir } from "../tempDirs";

const SIM = { kind: "simulator" as const, version: "0", label: "simulator (not Lean)" };

const RUN: EvalIdentity = {
  model: { spec: "fake:t", backend: "fake", name: "t" },
  prompt: { style: "qwen", asked: "auto", showGoal: false, maxPromptTokens: 4096 },
  sampling: { n: 2, temperature: 0.4, topP: 1, maxNewTokens: 48 },
  seed: 0,
  repair: 1,
  verifier: SIM,
  dataset: { id: "ds", workspace: null, sha256: "abc" },
  selection: { split: "test", kinds: ["proof"] },
};

function task(id: string): EvalTask {
  const parts: PromptParts = {
    prefix: `theorem ${id} : True := by\n  `,
    suffix: "",
    kind: "proof",
    indent: 2,
  };
  return {
    id,
    file: "A.lean",
    kind: "proof",
    split: "test",
    novel: null,
    heldOut: null,
    middle: "good",
    range: { start: { line: 1, character: 2 }, end: { line: 1, character: 9 } },
    parts,
  };
}

/** A long wrong attempt: 30 lines. */
const LONG = Array.from(
  { length: 30 },
  (_, i) => `have h${String(i).padStart(2, "0")} : True := trivial_not_here`,
).join("\n");

const FAILED: Verdict = {
  kind: "failed",
  reason: "error",
  elapsedMs: 5,
  verifier: SIM,
  diagnostics: [
    {
      severity: 1,
      message: `unsolved goals\n${"x : Nat\n".repeat(8)}⊢ True`,
      range: { start: { line: 1, character: 2 }, end: { line: 1, character: 5 } },
      candidateRange: { start: { line: 0, character: 0 }, end: { line: 0, character: 3 } },
    },
  ],
} as unknown as Verdict;

const verify = async (_task: EvalTask, candidate: string): Promise<Verdict> =>
  candidate === "good"
    ? ({
        kind: "proved",
        axioms: [],
        axiomsChecked: true,
        elapsedMs: 5,
        verifier: SIM,
        diagnostics: [],
      } as Verdict)
    : FAILED;

function loop(backend: ModelBackend, tasks: EvalTask[], n = 2) {
  const resultsPath = join(tempDir("fim-eval-fit-"), "results.jsonl");
  return {
    resultsPath,
    options: {
      backend,
      verify,
      tasks,
      n,
      sampling: { temperature: 0.4, topP: 1, maxNewTokens: 48 },
      run: { ...RUN, sampling: { ...RUN.sampling, n } },
      resultsPath,
      concurrency: 1,
      retries: 2,
      signal: new AbortController().signal,
    },
  };
}

/** A model whose context holds prompts of at most `limit` characters of prefix (the stand-in for tokens). */
function limited(limit: number, firstAttempt: (parts: PromptParts) => string): Script {
  return (parts) => {
    if (parts.prefix.length > limit)
      return { error: "context-length", message: "maximum context length is 1 tokens" };
    return parts.prefix.includes(REPAIR_HEADER) ? "good" : firstAttempt(parts);
  };
}

test("fit levels: the training block at 0; the attempt's start kept and cut by halves; then left out; then first lines", () => {
  const parts = task("a").parts;
  const feedback = repairVerdict(FAILED);
  const at = (fit: (typeof REPAIR_FITS)[number]) => repairParts(parts, LONG, feedback, fit).prefix;
  assert.equal(at(0), repairParts(parts, LONG, feedback).prefix, "level 0 is the training prompt");
  assert.ok(!at(0).includes("to fit the model's context"));
  const lengths = REPAIR_FITS.map((f) => at(f).length);
  for (let i = 1; i < lengths.length; i++) assert.ok(lengths[i]! < lengths[i - 1]!, `level ${i} is shorter`);
  assert.match(
    at(1),
    /-- {3}have h00 : True/,
    "the attempt's first line stays (error positions count from it)",
  );
  assert.doesNotMatch(at(1), /have h29/);
  assert.match(at(1), /\(\d+ more characters cut to fit the model's context\)/);
  assert.ok(at(5).includes(`(${LONG.length} characters left out to fit the model's context)`));
  assert.doesNotMatch(at(5), /have h00/);
  assert.match(at(5), /goals at the first error:\n {2}-- {5}x : Nat/, "level 5 keeps Lean's messages whole");
  assert.match(at(6), /-- {3}error at 1:1: unsolved goals\n {2}$/, "level 6: the first line of each message");
  for (const fit of REPAIR_FITS) {
    assert.ok(at(fit).endsWith("\n  "), "the hole's line stays last");
    assert.equal(
      withoutRepairFeedback(at(fit)),
      parts.prefix,
      "the task's prompt is recoverable at every level",
    );
  }
  // A cut never splits a UTF-16 pair.
  const astral = repairParts(parts, "𝔸𝔸𝔸", feedback, 1).prefix;
  assert.doesNotMatch(astral, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
});

test("a repair prompt too long for the model is asked again shortened, at the first level that fits", async () => {
  const limit = 700;
  const backend = new FakeBackend(limited(limit, () => LONG));
  const { options, resultsPath } = loop(backend, [task("a")]);
  assert.deepEqual(await runEvalLoop(options), { kind: "done" });
  const { lines } = readResults(resultsPath, 2);
  const feedback = repairVerdict(FAILED);
  const fits = REPAIR_FITS.find(
    (f) => repairParts(task("a").parts, LONG, feedback, f).prefix.length <= limit,
  )!;
  assert.ok(fits > 0, "the test's limit needs a cut");
  for (const sample of [0, 1]) {
    const mine = lines.filter((l) => l.sample === sample);
    assert.deepEqual(
      mine.map((l) => `${l.turn}:${l.outcome}:${l.final}:${l.repair_fit ?? 0}`),
      ["0:lean-error:false:0", `1:proved:true:${fits}`],
    );
    assert.equal(mine[1]!.attempts, fits + 1, "one request per level tried");
  }
  const repairs = backend.calls
    .filter((c) => c.parts.prefix.includes(REPAIR_HEADER))
    .map((c) => c.parts.prefix);
  assert.equal(repairs.length, 2 * (fits + 1));
  // Both samples wrote the same attempt: the same fits + 1 prompts each, none twice for one sample.
  assert.equal(new Set(repairs).size, fits + 1);
});

test("a repair prompt that fits at no level: the sample is the miss it was, the cause recorded, the run goes on", async () => {
  // The task's own prompt fits; no repair prompt does (the block's header alone is longer than the room left).
  const backend = new FakeBackend(
    limited(40, (parts) => (parts.prefix.includes("theorem b") ? "good" : LONG)),
  );
  const { options, resultsPath } = loop(backend, [task("a"), task("b")]);
  assert.deepEqual(await runEvalLoop(options), { kind: "done" });
  const { lines, complete } = readResults(resultsPath, 2);
  assert.deepEqual([...complete].sort(), ["a", "b"], "the next task ran");
  const a = lines.filter((l) => l.task_id === "a");
  assert.deepEqual(
    a.map((l) => `${l.sample}:${l.turn}:${l.outcome}:${l.final}`),
    ["0:0:lean-error:false", "0:1:lean-error:true", "1:0:lean-error:false", "1:1:lean-error:true"],
  );
  const unfit = a.find((l) => l.final)!;
  assert.equal(unfit.verdict, null, "nothing was verified on that turn");
  assert.equal(unfit.candidate, "");
  assert.equal(unfit.backendError?.cause, "context-length");
  assert.equal(unfit.attempts, REPAIR_FITS.length, "every level was tried once");
  const summary = summarise(lines, { run: RUN, ks: [1], selected: 2, partial: false, wallSeconds: 1 });
  assert.equal(summary.overall.counted, 4, "the unfit samples are counted, not left out");
  assert.equal(summary.byFile["A.lean"]!.passAtK["1"]!.value, 0.5);
  assert.deepEqual(summary.backendErrors, { "context-length": 2 });
  assert.match(summaryText(summary, "out"), /backend failures: context-length 2/);
  assert.match(summaryText(summary, "out"), /lower --max-prompt-tokens or --max-new-tokens/);
});

test("the task's own prompt too long for the model: infrastructure with its cause, asked once, the run goes on", async () => {
  const backend = new FakeBackend(limited(28, () => "good"));
  const { options, resultsPath } = loop(backend, [task("a"), task("long_name_b")]);
  assert.deepEqual(await runEvalLoop(options), { kind: "done" });
  const { lines } = readResults(resultsPath, 2);
  const long = lines.filter((l) => l.task_id === "long_name_b");
  assert.deepEqual(
    long.map((l) => `${l.outcome}:${l.backendError?.cause}`),
    ["infrastructure:context-length", "infrastructure:context-length"],
  );
  assert.equal(backend.calls.filter((c) => c.parts.prefix.includes("long_name_b")).length, 1, "not retried");
  assert.ok(lines.filter((l) => l.task_id === "a").every((l) => l.outcome === "proved"));
});

test("over an OpenAI-compatible endpoint: vLLM's 400 in its current and its pre-0.10.1 body, then a fitted repair", async () => {
  for (const flatErrors of [false, true]) {
    const stub = await startStub({
      contextTokens: 900,
      flatErrors,
      answer: (prompt) => (prompt.includes(REPAIR_HEADER) ? "good" : LONG),
    });
    try {
      const spec = parseModelSpec(`openai:${stub.baseUrl}#tiny`);
      assert.equal(spec.kind, "ok");
      const opened = await openBackend((spec as Extract<typeof spec, { kind: "ok" }>).spec, {
        prompt: { style: "fim", fimFamily: "qwen", showGoal: false, maxPromptTokens: 4096 },
        maxRetries: 0,
        stream: false,
      });
      assert.equal(opened.kind, "ok");
      const backend = (opened as Extract<typeof opened, { kind: "ok" }>).backend;
      const { options, resultsPath } = loop(backend, [task("a")], 1);
      assert.deepEqual(await runEvalLoop(options), { kind: "done" });
      const { lines } = readResults(resultsPath, 1);
      assert.deepEqual(
        lines.map((l) => `${l.turn}:${l.outcome}`),
        ["0:lean-error", "1:proved"],
        `flat error body: ${flatErrors}`,
      );
      assert.ok((lines[1]!.repair_fit ?? 0) > 0, "the repair prompt was cut to fit");
      const prompts = stub.requests.map((r) => String(r.body.prompt));
      assert.ok(prompts.length > 2, "the refused prompts were asked again shortened");
      const fits = (p: string) => p.length + 48 <= 900;
      assert.ok(fits(prompts[0]!) && prompts.slice(1, -1).every((p) => !fits(p)) && fits(prompts.at(-1)!));
      await backend.close();
    } finally {
      await stub.close();
    }
  }
});
