/** Hole annotations without VS Code: ranges through edits, attempts, best verdicts, debounced redraws. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Range } from "../../lean-bridge/protocol/trainer";
import { applyChanges } from "../../lean-bridge/text/edits";
import { LineIndex } from "../../lean-bridge/text/positions";
import { HoleStore } from "../../extension/state/holeStore";
import { shiftRange, shiftRangeThrough, type TextChange } from "../../extension/state/rangeTracking";
import { KeyedDebouncer, type Clock } from "../../extension/state/debounce";
import { hoverMarkdown, fence } from "../../extension/state/hoverText";
import { range as r, trainSample } from "./trainSamples";

function textAt(text: string, range: Range): string {
  const index = new LineIndex(text);
  return text.slice(index.offsetAt(range.start), index.offsetAt(range.end));
}

test("a range keeps covering the same text through edits before, after, inside and at its edges", () => {
  let text = "theorem t : p := by\n  intro h\n  exact h\n";
  let hole = r(2, 2, 2, 9); // "exact h"
  assert.equal(textAt(text, hole), "exact h");
  const edits: TextChange[] = [
    { range: r(0, 0, 0, 0), text: "-- a comment\n" }, // a line above
    { range: r(2, 2, 2, 9), text: "intro h\n  have := 1" }, // a multi-line replacement on the line above
    { range: r(4, 2, 4, 2), text: "  " }, // typed at the hole's start: outside it
    { range: r(4, 11, 4, 11), text: " -- done" }, // typed at its end: outside it
    { range: r(4, 10, 4, 11), text: "hh" }, // its last character replaced: the hole grows
  ];
  for (const change of edits) {
    hole = shiftRange(hole, change);
    text = applyChanges(text, [change]);
  }
  assert.equal(textAt(text, hole), "exact hh");
  assert.match(text, / {2}have := 1\n {4}exact hh -- done\n$/);
});

test("deleting a hole's text collapses its range to a point; a replacement overlapping it joins it", () => {
  assert.deepEqual(shiftRange(r(2, 2, 2, 9), { range: r(2, 0, 2, 12), text: "" }), r(2, 0, 2, 0));
  assert.deepEqual(shiftRange(r(2, 2, 2, 9), { range: r(2, 5, 3, 1), text: "XY" }), r(2, 2, 2, 7));
  // Several changes apply in order, each to the text left by the previous one.
  assert.deepEqual(
    shiftRangeThrough(r(1, 0, 1, 3), [
      { range: r(0, 0, 0, 0), text: "a\n" },
      { range: r(0, 0, 1, 0), text: "" },
    ]),
    r(1, 0, 1, 3),
  );
});

test("the store keeps recent attempts, the best verdict, and moves holes with their file's edits", () => {
  const store = new HoleStore({ maxAttempts: 3 });
  const changed: string[][] = [];
  store.onDidChange((files) => changed.push([...files]));
  store.record(trainSample("t1", "failed", 1), "/w/A.lean");
  store.record(trainSample("t1", "proved", 2), "/w/A.lean");
  store.record(trainSample("t1", "incomplete", 3), "/w/A.lean");
  store.record(trainSample("t1", "timeout", 4), "/w/A.lean");
  store.record(trainSample("t2", "failed", 4, { hole: r(5, 2, 5, 4) }), "/w/B.lean");
  const hole = store.get("t1")!;
  assert.equal(hole.total, 4);
  assert.deepEqual(
    hole.attempts.map((a) => a.step),
    [2, 3, 4],
  );
  assert.equal(hole.best, "proved");
  assert.equal(hole.latest.verdict, "timeout");
  assert.deepEqual(store.files(), ["/w/A.lean", "/w/B.lean"]);
  assert.equal(store.bestIn("/w/B.lean"), "failed");

  store.applyEdits("/w/A.lean", [{ range: r(0, 0, 0, 0), text: "\n\n" }]);
  assert.deepEqual(store.get("t1")!.range, r(4, 2, 4, 7));
  assert.deepEqual(store.get("t2")!.range, r(5, 2, 5, 4), "another file's hole does not move");
  // A sample that arrives after the edit is placed through the edits made since the run began.
  store.record(trainSample("t3", "proved", 5, { hole: r(3, 0, 3, 4) }), "/w/A.lean");
  assert.deepEqual(store.get("t3")!.range, r(5, 0, 5, 4));
  assert.deepEqual(
    store.holesIn("/w/A.lean").map((h) => h.taskId),
    ["t1", "t3"],
  );
  assert.deepEqual(changed.at(-1), ["/w/A.lean"]);

  store.clear();
  assert.equal(store.size, 0);
  assert.deepEqual(changed.at(-1)?.sort(), ["/w/A.lean", "/w/B.lean"]);
});

test("a file whose edit log overflowed no longer places new samples (rather than misplacing them)", () => {
  const store = new HoleStore({ maxEditsPerFile: 2 });
  const edit = { range: r(0, 0, 0, 0), text: "x" };
  store.applyEdits("/w/A.lean", [edit, edit, edit]);
  assert.equal(store.record(trainSample("t1", "proved", 1), "/w/A.lean"), false);
  assert.equal(store.record(trainSample("t2", "proved", 1), "/w/B.lean"), true);
  store.beginRun();
  assert.equal(store.record(trainSample("t1", "proved", 1), "/w/A.lean"), true);
});

class FakeClock implements Clock {
  now = 0;
  private next = 0;
  private readonly timers = new Map<number, { at: number; run: () => void }>();
  setTimeout(callback: () => void, ms: number): unknown {
    this.timers.set(++this.next, { at: this.now + ms, run: callback });
    return this.next;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  advance(ms: number): void {
    this.now += ms;
    for (const [id, timer] of [...this.timers].sort((a, b) => a[1].at - b[1].at))
      if (timer.at <= this.now) {
        this.timers.delete(id);
        timer.run();
      }
  }
}

test("redraws are debounced per file and flushed on demand", () => {
  const clock = new FakeClock();
  const runs: string[] = [];
  const debouncer = new KeyedDebouncer<string>((key) => runs.push(key), 100, clock);
  debouncer.schedule("a");
  clock.advance(60);
  debouncer.schedule("a");
  debouncer.schedule("b");
  clock.advance(60);
  assert.deepEqual(runs, [], "nothing runs while samples keep arriving");
  clock.advance(40);
  assert.deepEqual(runs.sort(), ["a", "b"]);
  debouncer.schedule("c");
  debouncer.flush();
  assert.deepEqual(runs.at(-1), "c");
  clock.advance(500);
  assert.equal(runs.length, 3, "a flushed key does not run again");
});

test("the hover shows the candidate, the verdict with its verifier's messages, reward, step, algorithm and the attempts link", () => {
  const store = new HoleStore();
  store.record(
    { ...trainSample("t1", "failed", 7), candidate: "exact ```h```", diagnostics: [] },
    "/w/A.lean",
    {
      run: "2026-11-24T23-00-00",
      verifier: "simulator (not Lean)",
      decl: "Foo.bar",
    },
  );
  const md = hoverMarkdown(store.get("t1")!, [
    { severity: "Error", line: 0, message: "unknown identifier 'h'" },
  ]);
  assert.match(md, /\*\*failed\*\* · reward 0\.00 · step 7 · grpo/);
  assert.ok(md.includes(fence("exact ```h```", "lean")));
  assert.ok(
    md.includes("````lean\nexact ```h```\n````"),
    "the fence is longer than the candidate's backticks",
  );
  assert.match(md, /Error \(candidate line 1\): unknown identifier 'h'/);
  assert.match(md, /\[Show all attempts \(1\)\]\(command:fimRlvr\.showAttempts\?%5B%22t1%22%5D\)/);
  // The simulator's messages are never called Lean's.
  assert.match(md, /The simulator's messages \(not Lean\):/);
  assert.doesNotMatch(md, /Lean's messages/);
  assert.match(
    md,
    /tactic hole in Foo\.bar · best so far: \*\*failed\*\* · verifier: simulator \(not Lean\)/,
  );
  const messages = [{ severity: "Error", line: 0, message: "x" }];
  store.record(trainSample("t2", "failed", 1), "/w/A.lean", { run: "r", verifier: "Lean", decl: "" });
  assert.match(hoverMarkdown(store.get("t2")!, messages), /in an example[^]*Lean's messages:/);
  store.record(trainSample("t3", "failed", 1), "/w/A.lean");
  assert.match(
    hoverMarkdown(store.get("t3")!, messages),
    /The verifier's messages:/,
    "unknown: no name claimed",
  );
});
