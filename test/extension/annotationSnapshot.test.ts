/** Saved hole annotations (extension/state/annotationSnapshot.ts): what comes back after a reload, and what not. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { TrainSampleParams, VerdictKind } from "../../lean-bridge/protocol/trainer";
import {
  SAVED_ATTEMPTS,
  makeSnapshot,
  readSnapshot,
  textHash,
} from "../../extension/state/annotationSnapshot";
import { HoleStore } from "../../extension/state/holeStore";
import { trainSample } from "./trainSamples";

function sample(taskId: string, file: string, verdict: VerdictKind, step: number): TrainSampleParams {
  return trainSample(taskId, verdict, step, {
    file,
    diagnostics: [{ severity: 1, message: "unsolved goals", candidateRange: null }],
  });
}

const TEXTS: Record<string, string> = {
  "/w/A.lean": "theorem a : True := by\n  trivial\n",
  "/w/B.lean": "theorem b : 1 = 1 := by\n  rfl\n",
};

function filledStore(): HoleStore {
  const store = new HoleStore();
  for (let step = 1; step <= 8; step++)
    store.record(sample("a1", "/w/A.lean", step === 8 ? "proved" : "failed", step), "/w/A.lean");
  store.record(sample("b1", "/w/B.lean", "incomplete", 3), "/w/B.lean");
  return store;
}

test("a snapshot read back with the same file texts gives the holes back, newest attempts only", () => {
  const store = filledStore();
  const saved = JSON.parse(JSON.stringify(makeSnapshot(store.records(), (f) => TEXTS[f])));
  const back = readSnapshot(saved, (f) => TEXTS[f]);
  assert.deepEqual(back.changed, []);
  assert.equal(back.malformed, 0);
  const a = back.records.find((r) => r.taskId === "a1")!;
  assert.equal(a.attempts.length, SAVED_ATTEMPTS);
  assert.deepEqual(
    a.attempts.map((x) => x.step),
    [4, 5, 6, 7, 8],
  );
  assert.equal(a.total, 8);
  assert.equal(a.best, "proved");
  assert.deepEqual(a.latest, store.get("a1")!.latest);
  const fresh = new HoleStore();
  const heard: string[][] = [];
  fresh.onDidChange((files) => heard.push([...files].sort()));
  assert.equal(fresh.restore(back.records), 2);
  assert.deepEqual(heard, [["/w/A.lean", "/w/B.lean"]], "one change event for the restored files");
  assert.deepEqual(fresh.files(), ["/w/A.lean", "/w/B.lean"]);
  assert.equal(fresh.get("b1")!.best, "incomplete");
});

test("a file whose text changed, or that is gone, gets none of its annotations back", () => {
  const saved = makeSnapshot(filledStore().records(), (f) => TEXTS[f]);
  const back = readSnapshot(saved, (f) => (f === "/w/A.lean" ? TEXTS[f] + "-- edited\n" : undefined));
  assert.deepEqual(back.records, []);
  assert.deepEqual(back.changed.sort(), ["/w/A.lean", "/w/B.lean"]);
  // A file whose text is unknown when saving is left out of the snapshot.
  const partial = makeSnapshot(filledStore().records(), (f) => (f === "/w/B.lean" ? TEXTS[f] : undefined));
  assert.deepEqual(Object.keys(partial.files), ["/w/B.lean"]);
});

test("malformed saved data is ignored entry by entry, never thrown", () => {
  const good = makeSnapshot(filledStore().records(), (f) => TEXTS[f]);
  const a = good.files["/w/A.lean"]!;
  const broken = {
    version: 1,
    files: {
      "/w/A.lean": {
        sha256: a.sha256,
        holes: [
          a.holes[0],
          { ...a.holes[0], taskId: "bad-range", range: { start: { line: -1, character: 0 }, end: {} } },
          { ...a.holes[0], taskId: "bad-verdict", best: "maybe" },
          { ...a.holes[0], taskId: "other-file", file: "/w/B.lean" },
          { ...a.holes[0], taskId: "no-attempts", attempts: [] },
          "not a record",
        ],
      },
      "/w/B.lean": { sha256: 42, holes: [] },
    },
  };
  const back = readSnapshot(broken, (f) => TEXTS[f]);
  assert.deepEqual(
    back.records.map((r) => r.taskId),
    ["a1"],
  );
  assert.equal(back.malformed, 6);
  for (const garbage of ["text", null, 7, { version: 2, files: {} }, { version: 1 }])
    assert.deepEqual(
      readSnapshot(garbage, (f) => TEXTS[f]),
      { records: [], changed: [], malformed: 1 },
    );
  assert.deepEqual(
    readSnapshot(undefined, () => ""),
    { records: [], changed: [], malformed: 0 },
  );
});

test("restoring never replaces a hole the store already has (a newer run's sample wins)", () => {
  const saved = readSnapshot(
    makeSnapshot(filledStore().records(), (f) => TEXTS[f]),
    (f) => TEXTS[f],
  );
  const store = new HoleStore();
  store.record(sample("a1", "/w/A.lean", "timeout", 99), "/w/A.lean");
  assert.equal(store.restore(saved.records), 1, "only b1 is added");
  assert.equal(store.get("a1")!.latest.step, 99);
  assert.equal(textHash("x"), textHash("x"));
  assert.notEqual(textHash("x"), textHash("y"));
});
