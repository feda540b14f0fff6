/**
 * The evaluation loop over a scripted backend and a scripted verifier: infrastructure failures are retried and
 * then recorded apart (never as misses), failures no retry fixes stop the evaluation, repair turns carry Lean's
 * messages, Ctrl-C keeps only whole tasks; and the summary's figures from those lines.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PromptParts } from "../../lean-bridge/models/backend";
import { FakeBackend, type Script } from "../../lean-bridge/models/fakeBackend";
import { outcomeOf, retryable } from "../../lean-bridge/eval/outcomes";
import type { EvalIdentity, ResultLine } from "../../lean-bridge/eval/records";
import {
  REPAIR_HEADER,
  feedbackLines,
  repairParts,
  repairVerdict,
  withoutRepairFeedback,
} from "../../lean-bridge/eval/repair";
import { readResults, resumeMismatch } from "../../lean-bridge/eval/resultsFile";
import { runEvalLoop, type EvalTask } from "../../lean-bridge/eval/runEval";
import { summarise } from "../../lean-bridge/eval/summary";
import { summaryText } from "../../lean-bridge/eval/summaryText";
import type { Verdict } from "../../lean-bridge/verify/verdict";
import { tempDir } from "../tempDirs";

const SIM = { kind: "simulator" as const, version: "0", label: "simulator (not Lean)" };

function verdict(kind: Verdict["kind"], extra: Record<string, unknown> = {}): Verdict {
  const base = { elapsedMs: 5, verifier: SIM, diagnostics: [] };
  const defaults: Record<Verdict["kind"], Record<string, unknown>> = {
    proved: { axioms: [], axiomsChecked: true },
    failed: { reason: "error" },
    incomplete: { reason: "sorry", goalsLeft: 0 },
    rejected: { rule: "sorry", reason: "sorry" },
    timeout: { timeoutMs: 1000 },
    crashed: { reason: "died" },
    environment: { reason: "stale imports", action: "lake build" },
  };
  return { ...base, kind, ...defaults[kind], ...extra } as unknown as Verdict;
}

const RUN: EvalIdentity = {
  model: { spec: "fake:t", backend: "fake", name: "t" },
  prompt: { style: "qwen", asked: "auto", showGoal: false, maxPromptTokens: 256 },
  sampling: { n: 3, temperature: 0.4, topP: 1, maxNewTokens: 48 },
  seed: 0,
  repair: 0,
  verifier: SIM,
  dataset: { id: "ds", workspace: null, sha256: "abc" },
  selection: { split: "test", kinds: ["proof"] },
};

function task(id: string, novel: boolean | null = null): EvalTask {
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
    novel,
    heldOut: null,
    middle: "good",
    range: { start: { line: 1, character: 2 }, end: { line: 1, character: 9 } },
    parts,
  };
}

/** A verifier that judges by the candidate's text: "good" proves, "hang" times out, "infra" is an infrastructure timeout. */
function judge(counts: Map<string, number> = new Map()) {
  return async (_task: EvalTask, candidate: string): Promise<Verdict> => {
    counts.set(candidate, (counts.get(candidate) ?? 0) + 1);
    if (candidate === "good") return verdict("proved");
    if (candidate === "hang") return verdict("timeout", { cause: "candidate" });
    if (candidate === "infra") return verdict("timeout", { cause: "infrastructure" });
    if (candidate === "sorry") return verdict("rejected");
    return verdict("failed", {
      diagnostics: [
        {
          severity: 1,
          message: "unsolved goals\nn : Nat\n⊢ n = n",
          range: { start: { line: 9, character: 2 }, end: { line: 9, character: 5 } },
          candidateRange: { start: { line: 0, character: 0 }, end: { line: 0, character: 3 } },
        },
      ],
    });
  };
}

function options(script: Script, extra: Partial<Parameters<typeof runEvalLoop>[0]> = {}) {
  const dir = tempDir("fim-eval-loop-");
  const backend = new FakeBackend(script);
  return {
    backend,
    resultsPath: join(dir, "results.jsonl"),
    loop: {
      backend,
      verify: judge(),
      tasks: [task("a", true), task("b", false)],
      n: 3,
      sampling: { temperature: 0.4, topP: 1, maxNewTokens: 48 },
      run: RUN,
      resultsPath: join(dir, "results.jsonl"),
      concurrency: 2,
      retries: 2,
      signal: new AbortController().signal,
      ...extra,
    },
  };
}

test("outcomes: cause decides whether a timeout is a miss; environment is infrastructure", () => {
  assert.equal(outcomeOf(verdict("timeout", { cause: "candidate" })), "timeout");
  assert.equal(outcomeOf(verdict("timeout")), "timeout", "no cause: the candidate's (fail closed)");
  assert.equal(outcomeOf(verdict("timeout", { cause: "infrastructure" })), "infrastructure");
  assert.equal(outcomeOf(verdict("crashed", { cause: "infrastructure" })), "infrastructure");
  assert.equal(outcomeOf(verdict("crashed", { cause: "candidate" })), "lean-error");
  assert.equal(outcomeOf(verdict("environment")), "infrastructure");
  assert.equal(outcomeOf(verdict("rejected")), "sorry");
  assert.equal(outcomeOf(verdict("rejected", { rule: "escape" })), "lean-error");
  assert.equal(
    outcomeOf(verdict("rejected", { rule: "complete-without-hole" })),
    "infrastructure",
    "a hole that skip proves is no task: left out of pass@k, not the model's miss",
  );
  assert.equal(
    retryable(verdict("rejected", { rule: "complete-without-hole" })),
    false,
    "asking again changes nothing",
  );
  assert.equal(outcomeOf(verdict("incomplete", { reason: "unsolved-goals", goalsLeft: 1 })), "lean-error");
});

test("a task's samples, their outcomes, and pass@k that leaves infrastructure out", async () => {
  const answers = ["good", "bad", "hang"];
  const { loop, resultsPath } = options((_p, i) => answers[i]!);
  assert.deepEqual(await runEvalLoop(loop), { kind: "done" });
  const { lines, complete } = readResults(resultsPath, 3);
  assert.equal(complete.size, 2);
  assert.deepEqual(
    lines.filter((l) => l.task_id === "a").map((l) => l.outcome),
    ["proved", "lean-error", "timeout"],
  );
  const summary = summarise(lines, { run: RUN, ks: [1, 3], selected: 2, partial: false, wallSeconds: 1 });
  assert.ok(Math.abs(summary.overall.passAtK["1"]!.value! - 1 / 3) < 1e-12);
  assert.equal(summary.overall.passAtK["3"]!.value, 1);
  assert.equal(summary.byNovelty.novel!.tasks, 1);
  assert.equal(summary.byNovelty.memorised!.tasks, 1);
  assert.equal(summary.verdicts.timeout, 2);
  // Each line carries the run's identity and a reproducible request seed.
  assert.deepEqual(lines[0]!.run, RUN);
  assert.equal(typeof lines[0]!.seed, "number");
});

test("eval's summary splits held-out instances from held-out families, as the quick start's summary does", async () => {
  const held = (id: string, heldOut: "instance" | "family"): EvalTask => ({ ...task(id), heldOut });
  const { loop, resultsPath } = options((_p, i) => (i === 0 ? "good" : "bad"), {
    tasks: [held("a", "instance"), held("b", "family"), held("c", "family")],
  });
  assert.deepEqual(await runEvalLoop(loop), { kind: "done" });
  const { lines } = readResults(resultsPath, 3);
  assert.deepEqual(new Set(lines.map((l) => l.held_out)), new Set(["instance", "family"]));
  const summary = summarise(lines, { run: RUN, ks: [1], selected: 3, partial: false, wallSeconds: 1 });
  assert.equal(summary.byHeldOut?.instance?.tasks, 1);
  assert.equal(summary.byHeldOut?.family?.tasks, 2);
  const text = summaryText(summary, "out");
  assert.match(text, /^ {2}held-out instances: pass@1 33\.3% over 1 task\(s\)$/m, text);
  assert.match(text, /^ {2}held-out families: pass@1 33\.3% over 2 task\(s\)$/m, text);
  // A dataset that marks no task held out prints no such line.
  const plain = summarise(
    lines.map((l) => ({ ...l, held_out: null })),
    { run: RUN, ks: [1], selected: 3, partial: false, wallSeconds: 1 },
  );
  assert.doesNotMatch(summaryText(plain, "out"), /held-out/);
});

test("infrastructure verdicts are retried a bounded number of times, then left out of n", async () => {
  const counts = new Map<string, number>();
  const { loop, resultsPath } = options((_p, i) => (i === 0 ? "good" : "infra"), { verify: judge(counts) });
  await runEvalLoop(loop);
  // 2 tasks × 2 infra samples × (1 + 2 retries).
  assert.equal(counts.get("infra"), 12);
  const { lines } = readResults(resultsPath, 3);
  const summary = summarise(lines, { run: RUN, ks: [1, 2], selected: 2, partial: false, wallSeconds: 1 });
  assert.equal(summary.overall.counted, 2);
  assert.equal(summary.overall.outcomes.infrastructure, 4);
  assert.equal(summary.overall.passAtK["1"]!.value, 1, "the infrastructure samples are not misses");
  assert.deepEqual(summary.overall.passAtK["2"], { value: null, tasks: 0, excluded: 2 });
});

test("a transient backend error is retried; a persistent one is recorded apart; auth or a model never reached stops the evaluation", async () => {
  let calls = 0;
  const flaky = options((_p, i) => (calls++ < 1 && i === 0 ? { error: "server" } : "good"), {
    concurrency: 1,
  });
  await runEvalLoop(flaky.loop);
  const flakyLines = readResults(flaky.resultsPath, 3).lines;
  assert.ok(flakyLines.every((l) => l.outcome === "proved"));
  assert.equal(flakyLines.filter((l) => l.attempts === 2).length, 3, "the retried task's samples say so");

  // A model that answered once and then went away: its later tasks are infrastructure, left out of pass@k.
  const down = options((_p, _i, call) => (call === 0 ? "good" : { error: "connection" }), { concurrency: 1 });
  assert.deepEqual(await runEvalLoop(down.loop), { kind: "done" });
  const downLines = readResults(down.resultsPath, 3).lines;
  assert.equal(downLines.length, 6);
  assert.ok(downLines.slice(0, 3).every((l) => l.outcome === "proved"));
  assert.ok(
    downLines
      .slice(3)
      .every(
        (l) => l.outcome === "infrastructure" && l.backendError?.cause === "connection" && l.verdict === null,
      ),
  );
  assert.equal(down.backend.calls.length, 4, "1 call for the first task, 1 + 2 retries for the second");

  // A model never reached is a wrong endpoint or one not started: the evaluation stops at its first request.
  const never = options(() => ({ error: "connection", message: "Cannot reach http://127.0.0.1:9/v1." }), {
    concurrency: 1,
  });
  const unreached = await runEvalLoop(never.loop);
  assert.equal(unreached.kind, "backend-failed");
  assert.match(
    (unreached as { message: string }).message,
    /could not be reached, in 3 attempts: Cannot reach/,
  );
  assert.match((unreached as { hint: string }).hint, /Start the model's server, or check the URL in --model/);
  assert.equal(never.backend.calls.length, 3, "one request, 1 + 2 retries");

  const denied = options(() => ({ error: "auth", message: "401 from the endpoint" }));
  const result = await runEvalLoop(denied.loop);
  assert.equal(result.kind, "backend-failed");
  assert.match((result as { message: string }).message, /401/);
});

test("repair turns: Lean's messages in the prompt, the final turn counted, the proving turn recorded", async () => {
  const seen: PromptParts[] = [];
  const { loop, resultsPath } = options(
    (parts, i) => {
      seen.push(parts);
      if (parts.prefix.includes(REPAIR_HEADER)) return parts.prefix.includes("fixme") ? "good" : "bad";
      return ["good", "fixme", "bad"][i]!;
    },
    { run: { ...RUN, repair: 2 }, tasks: [task("a")] },
  );
  await runEvalLoop(loop);
  const { lines } = readResults(resultsPath, 3);
  const bySample = (s: number) =>
    lines.filter((l) => l.sample === s).map((l) => `${l.turn}:${l.outcome}:${l.final}`);
  assert.deepEqual(bySample(0), ["0:proved:true"]);
  assert.deepEqual(bySample(1), ["0:lean-error:false", "1:proved:true"]);
  assert.deepEqual(bySample(2), ["0:lean-error:false", "1:lean-error:false", "2:lean-error:true"]);
  const repairPrompt = seen.find((p) => p.prefix.includes("fixme"))!;
  assert.match(repairPrompt.prefix, /-- {3}error at 1:1: unsolved goals/);
  assert.match(repairPrompt.prefix, /goals at the first error:\n {2}-- {5}n : Nat\n {2}-- {5}⊢ n = n/);
  assert.equal(withoutRepairFeedback(repairPrompt.prefix), task("a").parts.prefix);
  const summary = summarise(lines, {
    run: { ...RUN, repair: 2 },
    ks: [1],
    selected: 1,
    partial: false,
    wallSeconds: 1,
  });
  assert.deepEqual(summary.provedAtTurn, { "0": 1, "1": 1 });
  assert.ok(Math.abs(summary.overall.passAtK["1"]!.value! - 2 / 3) < 1e-12);
});

test("feedback names the verdict when Lean gave no error message, and the rejection's reason as the wire carries it", () => {
  assert.deepEqual(feedbackLines(repairVerdict(verdict("timeout", { cause: "candidate" }))), [
    "no answer within the time limit",
  ]);
  assert.deepEqual(feedbackLines(repairVerdict(verdict("rejected"))), ["error outside the attempt: sorry"]);
  const parts = repairParts(task("a").parts, "simp\n  rfl", repairVerdict(verdict("rejected")));
  assert.ok(parts.prefix.endsWith("\n  "), "the hole's line stays last");
  assert.match(parts.prefix, /-- {3}simp\n {2}-- {5}rfl/);
});

test("feedback: candidate-relative positions, at most three errors, the goals of the first error only", () => {
  const at = (line: number, character: number) => ({
    start: { line, character },
    end: { line, character: character + 1 },
  });
  const lines = feedbackLines({
    kind: "failed",
    diagnostics: [
      { severity: 2, message: "unused variable", candidateRange: at(0, 0) },
      { severity: 1, message: "unknown identifier 'foo'", candidateRange: at(1, 8) },
      { severity: 1, message: "unsolved goals\nh : a\n⊢ b", candidateRange: at(0, 0) },
      { severity: 1, message: "unknown identifier 'foo'", candidateRange: at(1, 8) },
      { severity: 1, message: "declaration uses 'sorry'", candidateRange: null },
      { severity: 1, message: "a fourth error", candidateRange: at(3, 0) },
    ],
  });
  assert.deepEqual(lines, [
    "error at 2:9: unknown identifier 'foo'",
    "error at 1:1: unsolved goals",
    "  h : a",
    "  ⊢ b",
    "error outside the attempt: declaration uses 'sorry'",
  ]);
  const first = feedbackLines({
    kind: "failed",
    diagnostics: [{ severity: 1, message: "unsolved goals\nx : Nat\n⊢ x = x", candidateRange: at(2, 4) }],
  });
  assert.deepEqual(first, [
    "error at 3:5: unsolved goals",
    "goals at the first error:",
    "  x : Nat",
    "  ⊢ x = x",
  ]);
});

test("Ctrl-C: results that come back after the signal are not written; only whole tasks are", async () => {
  const controller = new AbortController();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const dir = tempDir("fim-eval-abort-");
  const resultsPath = join(dir, "results.jsonl");
  let calls = 0;
  const backend = new FakeBackend(() => "good", {
    // The second task's request waits until the test has pressed Ctrl-C.
    gate: () => (calls++ === 0 ? Promise.resolve() : gate),
  });
  const running = runEvalLoop({
    ...options(() => "good").loop,
    backend,
    resultsPath,
    concurrency: 1,
    signal: controller.signal,
    onTaskDone: () => {
      controller.abort();
      release();
    },
  });
  assert.deepEqual(await running, { kind: "aborted" });
  const { lines, complete } = readResults(resultsPath, 3);
  assert.deepEqual([...complete], ["a"]);
  assert.equal(lines.length, 3);
});

test("a torn last line is dropped with its task; settings that differ are named", () => {
  const dir = tempDir("fim-eval-torn-");
  const path = join(dir, "results.jsonl");
  const line = (taskId: string, sample: number): ResultLine =>
    ({ task_id: taskId, sample, turn: 0, final: true, outcome: "proved", run: RUN }) as ResultLine;
  const whole = [0, 1, 2].map((s) => JSON.stringify(line("a", s))).join("\n");
  writeFileSync(
    path,
    `${whole}\n${JSON.stringify(line("b", 0))}\n${JSON.stringify(line("b", 1)).slice(0, 30)}`,
  );
  const read = readResults(path, 3);
  assert.equal(read.torn, 1);
  assert.deepEqual([...read.complete], ["a"]);
  assert.equal(read.lines.length, 3);
  assert.ok(readFileSync(path, "utf8").length > 0);
  assert.equal(resumeMismatch(RUN, { ...RUN, verifier: { ...SIM, label: "other label" } }), undefined);
  assert.equal(
    resumeMismatch(RUN, { ...RUN, seed: 1, sampling: { ...RUN.sampling, temperature: 0 } }),
    "sampling, seed",
  );
});
