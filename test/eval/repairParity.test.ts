/**
 * Repair prompt parity: the repair block `fim-rlvr eval --repair` puts in a prompt (lean-bridge/eval/repair.ts)
 * and the one training's repair turns put there (trainer/fim_rlvr/tasks/repair.py, `repair_turns`), byte for byte, on
 * the same wire verdicts: several errors, duplicates, warnings, ranges outside the candidate, goals in the first
 * error or a later one, long messages and candidates, trailing whitespace, tabs and CRs, non-BMP characters, and
 * the verdicts without a Lean message (timeout; rejected, crashed, environment as serve/wire.ts sends them).
 * Skipped, with the reason, where trainer/.venv is missing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers";
import { toolSkip } from "../toolSkip";
import { repairPrefix, repairVerdict, type RepairVerdict } from "../../lean-bridge/eval/repair";
import type { CandidateDiagnostic } from "../../lean-bridge/protocol/trainer";
import type { Verdict } from "../../lean-bridge/verify/verdict";

const PYTHON = join(REPO, "trainer", ".venv", "bin", "python");
const FIXTURE = join(REPO, "test", "fixtures", "models", "repair_parity.py");
const TRAINER = join(REPO, "trainer");

const missing = existsSync(PYTHON) ? undefined : `${PYTHON} is missing (npm run test:setup creates it)`;
toolSkip("repair prompt parity test", missing);

const SIM = { kind: "simulator" as const, version: "0", label: "simulator (not Lean)" };

function at(line: number, character: number) {
  return { start: { line, character }, end: { line, character: character + 2 } };
}

const DIAGNOSTICS: CandidateDiagnostic[][] = [
  [{ severity: 1, message: "unsolved goals\nn : Nat\n⊢ n + 0 = n", candidateRange: at(0, 0) }],
  [
    { severity: 2, message: "unused variable `h`", candidateRange: at(0, 4) },
    { severity: 1, message: "unknown identifier 'foo'", candidateRange: at(1, 8) },
    { severity: 1, message: "unsolved goals\nh : a\n⊢ b", candidateRange: at(0, 0) },
    { severity: 1, message: "unknown identifier 'foo'", candidateRange: at(1, 8) },
    { severity: 1, message: "declaration uses 'sorry'", candidateRange: null },
    { severity: 1, message: "a fourth error", candidateRange: at(3, 0) },
  ],
  [
    {
      severity: 1,
      message: [
        "linarith failed to find a contradiction",
        "case a",
        ...Array.from({ length: 20 }, (_, i) => `h${i} : x${i} ≤ 𝔸`),
        "⊢ False",
      ].join("\n"),
      candidateRange: at(2, 17),
    },
  ],
  [
    {
      severity: 1,
      message: ["type mismatch", ...Array.from({ length: 15 }, (_, i) => `  line ${i}\t`)].join("\n"),
      candidateRange: at(0, 3),
    },
    { severity: 1, message: "", candidateRange: null },
  ],
  [{ severity: 3, message: "Try this: simp only [Nat.add_zero]", candidateRange: at(0, 0) }],
  [],
];

const CANDIDATES = [
  "simp",
  "intro h  \n  exact h\t\n  rfl\r",
  "",
  "  omega\n\n  done",
  Array.from({ length: 45 }, (_, i) => `have h${i} : 𝔸 = 𝔸 := rfl`).join("\n"),
  "exact ⟨fun x => x, 😀⟩ ",
];

const PREFIXES: { prefix: string; indent: number }[] = [
  { prefix: "theorem t (n : Nat) : n + 0 = n := by\n  ", indent: 2 },
  { prefix: "example : True := by ", indent: 0 },
  { prefix: "theorem 𝔸_comm (x y : 𝔸) : x * y = y * x := by\n  intro h\n    ", indent: 4 },
  { prefix: "lemma l : 1 = 1 := by\r\n  ", indent: 2 },
];

/** Pool verdicts without a Lean message, as the wire (serve/wire.ts) carries them to the trainer. */
const BARE: RepairVerdict[] = (
  [
    { kind: "timeout", timeoutMs: 1000, cause: "candidate" },
    { kind: "rejected", rule: "sorry", reason: "the candidate uses `sorry`" },
    { kind: "crashed", reason: "the worker crashed twice", cause: "candidate" },
    { kind: "incomplete", reason: "sorry", goalsLeft: 0 },
  ] as const
).map((extra) =>
  repairVerdict({ elapsedMs: 3, verifier: SIM, diagnostics: [], ...extra } as unknown as Verdict),
);

interface Case {
  prefix: string;
  indent: number;
  candidate: string;
  verdict: RepairVerdict;
}

const CASES: Case[] = [];
DIAGNOSTICS.forEach((diagnostics, d) =>
  CANDIDATES.forEach((candidate, c) => {
    const { prefix, indent } = PREFIXES[(d + c) % PREFIXES.length]!;
    CASES.push({ prefix, indent, candidate, verdict: { kind: d === 5 ? "timeout" : "failed", diagnostics } });
  }),
);
BARE.forEach((verdict, b) =>
  PREFIXES.forEach(({ prefix, indent }, p) =>
    CASES.push({ prefix, indent, candidate: CANDIDATES[(b + p) % CANDIDATES.length]!, verdict }),
  ),
);

test("the repair block is the same in eval and in training, byte for byte", { skip: missing }, () => {
  const run = spawnSync(PYTHON, [FIXTURE], {
    input: JSON.stringify({ cases: CASES }),
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: TRAINER },
    maxBuffer: 16 * 1024 * 1024,
    timeout: 120_000,
  });
  assert.equal(run.status, 0, run.stderr);
  const { prefixes } = JSON.parse(run.stdout) as { prefixes: string[] };
  assert.equal(prefixes.length, CASES.length);
  CASES.forEach((c, i) => {
    const ours = repairPrefix(c.prefix, c.indent, c.candidate, c.verdict);
    assert.equal(prefixes[i], ours, `case ${i}: ${JSON.stringify(c).slice(0, 300)}`);
  });
  // The cases exercised what they claim: goals under their heading, the rejection's reason, the cut candidate.
  const all = CASES.map((c) => repairPrefix(c.prefix, c.indent, c.candidate, c.verdict)).join("\n");
  for (const expected of [
    "goals at the first error:",
    "error outside the attempt: the candidate uses `sorry`",
    "no answer within the time limit",
    "have h39 ",
    "error at 3:18: linarith failed",
  ])
    assert.ok(all.includes(expected), expected);
  assert.ok(!all.includes("have h40 "), "a candidate is cut at 40 lines");
});
