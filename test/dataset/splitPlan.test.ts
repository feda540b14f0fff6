/**
 * Splits that measure generalisation (splitPlan.ts): held-out families are never in training, held-out instances'
 * families are, shares stay near 80/10/10, every hole kind a workspace has keeps training examples, and the plan
 * depends only on the seed and the tasks.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mulberry32 } from "../../bench/corpus";
import { SPLITS, SPLIT_FRACTIONS, type Split } from "../../lean-bridge/dataset/split";
import {
  MIN_FAMILY_DECLARATIONS,
  familyOf,
  planSplits,
  splitWarnings,
  type DeclarationTable,
  type SplitMode,
  type SplitPlan,
} from "../../lean-bridge/dataset/splitPlan";

/** One declaration of a test workspace: its key, family and tasks per kind (KINDS). */
interface DeclarationTasks {
  key: string;
  family: string;
  byKind: number[];
}

function table(decls: readonly DeclarationTasks[]): DeclarationTable {
  return {
    keys: decls.map((d) => d.key),
    families: decls.map((d) => d.family),
    counts: Int32Array.from(decls.flatMap((d) => d.byKind)),
  };
}

function planOf(seed: number, mode: SplitMode, decls: readonly DeclarationTasks[]): SplitPlan {
  return planSplits(seed, mode, KINDS, table(decls));
}

const KINDS = ["proof", "steps", "block", "tactic"];

/**
 * A workspace like lean-env: families of 4 to 14 declarations, most with one `proof` task (a `sorry`), some with a
 * proof cut into holes of every kind; `block` holes only in a few declarations of a few families.
 */
function workspace(seed: number, families = 30): DeclarationTasks[] {
  const rand = mulberry32(seed);
  const out: DeclarationTasks[] = [];
  for (let f = 0; f < families; f++) {
    const size = 4 + Math.floor(rand() * 11);
    const blocky = f % 9 === 0;
    for (let d = 0; d < size; d++) {
      const proved = rand() < 0.25;
      const byKind = proved
        ? [
            1,
            Math.floor(rand() * 3),
            blocky && d < 2 ? 1 + Math.floor(rand() * 3) : 0,
            1 + Math.floor(rand() * 4),
          ]
        : [1, 0, 0, 0];
      out.push({ key: `F${f % 6}.lean\0fam${f}.thm_${d}`, family: `F${f % 6}.lean#Fam${f}`, byKind });
    }
  }
  return out;
}

function total(decls: readonly DeclarationTasks[], pick: (i: number) => boolean, kind?: number): number {
  return decls.reduce(
    (n, d, i) =>
      n + (pick(i) ? (kind === undefined ? d.byKind.reduce((a, b) => a + b, 0) : d.byKind[kind]!) : 0),
    0,
  );
}

/** What every plan must satisfy, whatever the mode. */
function checkPlan(
  decls: readonly DeclarationTasks[],
  plan: SplitPlan,
  mode: SplitMode,
  label: string,
): void {
  assert.equal(plan.splits.length, decls.length);
  const trainFamilies = new Set(decls.filter((_, i) => plan.splits[i] === "train").map((d) => d.family));
  decls.forEach((d, i) => {
    if (plan.splits[i] === "train") assert.equal(plan.heldOut[i], undefined, `${label}: a training task`);
    else
      assert.equal(
        plan.heldOut[i],
        trainFamilies.has(d.family) ? "instance" : "family",
        `${label}: ${d.key} is held out as ${plan.heldOut[i]}`,
      );
  });
  const all = total(decls, () => true);
  const biggest = Math.max(...decls.map((d) => d.byKind.reduce((a, b) => a + b, 0)));
  for (const s of SPLITS) {
    const n = total(decls, (i) => plan.splits[i] === s);
    assert.ok(
      Math.abs(n - SPLIT_FRACTIONS[s] * all) <= biggest + 1,
      `${label}: ${s} has ${n} of ${all} tasks (target ${SPLIT_FRACTIONS[s]})`,
    );
  }
  KINDS.forEach((kind, k) => {
    const having = decls.filter((d) => d.byKind[k]! > 0).length;
    if (having >= 2)
      assert.ok(
        total(decls, (i) => plan.splits[i] === "train", k) > 0,
        `${label}: kind ${kind} keeps training tasks`,
      );
  });
  assert.deepEqual(plan.report.kindsWithoutTraining, [], label);
  if (mode !== "family") assert.deepEqual(plan.report.families.heldOutNames, [], label);
}

test("family splits: whole families out of training, instances of families in it, shares and kinds kept", () => {
  for (let seed = 0; seed < 12; seed++) {
    const decls = workspace(seed);
    const plan = planOf(seed, "family", decls);
    checkPlan(decls, plan, "family", `seed ${seed}`);
    const held = new Set(plan.report.families.heldOutNames);
    assert.ok(held.size >= 1, `seed ${seed}: some family held out whole`);
    for (const family of held) {
      const members = decls.map((d, i) => [d, i] as const).filter(([d]) => d.family === family);
      assert.ok(members.length >= MIN_FAMILY_DECLARATIONS, `${family} is a family`);
      for (const [d, i] of members) {
        assert.notEqual(plan.splits[i], "train", `${d.key} of a held-out family`);
        assert.equal(plan.heldOut[i], "family");
      }
    }
    // Most held-out tasks are instances: families take about a third of each held-out split.
    const instances = total(decls, (i) => plan.heldOut[i] === "instance");
    const families = total(decls, (i) => plan.heldOut[i] === "family");
    assert.ok(instances > families, `seed ${seed}: ${instances} instance tasks, ${families} family tasks`);
    assert.equal(plan.report.families.heldOut.validation + plan.report.families.heldOut.test, held.size);
  }
});

test("declaration and dedup splits: by declaration, no family held out on purpose, the same guarantees", () => {
  for (const mode of ["declaration", "dedup"] as const)
    for (let seed = 0; seed < 6; seed++) {
      const decls = workspace(100 + seed);
      checkPlan(decls, planOf(seed, mode, decls), mode, `${mode} seed ${seed}`);
    }
});

test("a kind only a few declarations have keeps one in training, even when the hash held all of them out", () => {
  let rescued = 0;
  for (let seed = 0; seed < 40; seed++) {
    // Three declarations with `block` holes, in one family of ten, among forty other families.
    const decls = workspace(seed, 40).map((d) => ({
      ...d,
      byKind: [d.byKind[0]!, d.byKind[1]!, 0, d.byKind[3]!],
    }));
    for (let d = 0; d < 10; d++)
      decls.push({
        key: `B.lean\0b.thm_${d}`,
        family: "B.lean#B",
        byKind: [1, 0, d < 3 ? 2 : 0, d < 3 ? 1 : 0],
      });
    const plan = planOf(seed, "family", decls);
    checkPlan(decls, plan, "family", `seed ${seed}`);
    const blockHolders = decls.map((d, i) => [d, i] as const).filter(([d]) => d.byKind[2]! > 0);
    if (blockHolders.some(([, i]) => plan.splits[i] !== "train")) rescued++;
    // The family holding every block hole is never held out whole.
    assert.ok(!plan.report.families.heldOutNames.includes("B.lean#B"), `seed ${seed}`);
  }
  assert.ok(rescued > 0, "some seeds hold block declarations out, and training still has one");
});

test("fewer than five families: none held out whole; the plan depends only on the seed and the tasks", () => {
  const small = workspace(3, 4);
  const plan = planOf(1, "family", small);
  assert.deepEqual(plan.report.families.heldOutNames, []);
  assert.equal(plan.report.families.total, 4);
  checkPlan(small, plan, "family", "four families");
  const decls = workspace(9);
  const a = planOf(5, "family", decls);
  const reversed = [...decls].reverse();
  const b = planOf(5, "family", reversed);
  const byKey = (p: SplitPlan, ds: readonly DeclarationTasks[]) =>
    new Map(ds.map((d, i) => [d.key, `${p.splits[i]}:${p.heldOut[i] ?? ""}`]));
  assert.deepEqual(byKey(a, decls), byKey(b, reversed));
  const c = planOf(6, "family", decls);
  assert.ok(
    decls.some((_, i) => a.splits[i] !== c.splits[i]),
    "another seed moves declarations",
  );
});

test("a family is its file and the named namespaces and sections around it", () => {
  assert.equal(
    familyOf("FimExamples/Arith.lean", ["namespace FimExamples.Arith", "open Nat", "section AddLeAdd"]),
    "FimExamples/Arith.lean#FimExamples.Arith.AddLeAdd",
  );
  assert.equal(familyOf("A.lean", ["section", "universe u", "variable (x : Nat)"]), "A.lean#");
  assert.equal(familyOf("A.lean", []), "A.lean#");
});

test("a kind with tasks but none in training is a warning; one with none at all is not", () => {
  const rows: Record<string, Record<Split, number>> = {
    proof: { train: 8, validation: 1, test: 1 },
    block: { train: 0, validation: 2, test: 1 },
    steps: { train: 0, validation: 0, test: 0 },
  };
  assert.deepEqual(splitWarnings(rows, ["proof", "block", "steps"]), [
    "no training task of kind block (3 held out): a model trained on this dataset never sees one",
  ]);
});
