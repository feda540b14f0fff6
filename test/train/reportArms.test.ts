/**
 * The report's arms and families: what each compute-matched arm generated and trained on, the verifier's and the
 * algorithm's effects apart, and per family pass@1, pass@k and the distinct accepted proofs with their counts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { armsSection, effects, familySection, type ArmStage } from "../../lean-bridge/train/reportArms";

const stage = (passAt1: number, generated: number, trained: number): ArmStage => ({
  pass_at_1: passAt1,
  tasks: 10,
  samples: 2,
  compute: {
    optimizer_steps: 4,
    verifier_calls: generated,
    generated: { sequences: generated, tokens: 7 * generated },
    trained: { sequences: trained, tokens: 5 * trained },
    evaluation: { sequences: 30, tokens: 210 },
  },
});

test("the verifier's and the algorithm's contributions are told apart", () => {
  const { verifier, algorithm } = effects({ rl: 0.5, rft: 0.4, sft: 0.25, sft_data: 0.3 });
  assert.deepEqual(verifier, [
    "RL − SFT +25.0 points",
    "RFT − SFT +15.0 points",
    "RL − SFT+portfolio +20.0 points",
    "RFT − SFT+portfolio +10.0 points",
  ]);
  assert.deepEqual(algorithm, ["RL − RFT +10.0 points"]);
  // An arm not measured gives no difference at all, never a made-up one.
  assert.deepEqual(effects({ rl: 0.5, sft: 0.5 }), { verifier: ["RL − SFT +0.0 points"], algorithm: [] });
});

test("the report shows what each arm generated and trained on, and the two effects", () => {
  const html = armsSection({
    after: stage(0.5, 94, 16),
    "baseline-sft": stage(0.25, 30, 16),
    "baseline-rft": stage(0.4, 94, 16),
  });
  assert.match(html, /94 seq \/ 658 tok/);
  assert.match(html, /16 seq \/ 80 tok/);
  assert.match(html, /What the verifier adds[^<]*RL − SFT \+25\.0 points; RFT − SFT \+15\.0 points/);
  assert.match(html, /What the algorithm adds[^<]*RL − RFT \+10\.0 points/);
  assert.equal(armsSection({ after: stage(0.5, 94, 16) }), "", "no arm beside RL: nothing to compare");
});

test("per family: pass@1, pass@k and each distinct accepted proof with its count", () => {
  const after: ArmStage = {
    ...stage(0.5, 94, 16),
    by_family: {
      "F/A.lean#W": {
        pass_at_1: 0.5,
        pass_at_2: 0.75,
        tasks: 4,
        proofs: [
          { proof: "omega", count: 3 },
          { proof: "simp <b>", count: 1 },
        ],
      },
      "F/B.lean#W": { pass_at_1: 0, pass_at_2: 0, tasks: 2, proofs: [] },
    },
  };
  const html = familySection({ after }, 1);
  assert.match(html, /F\/A\.lean#W<\/code><\/td><td>4<\/td><td>50\.0% \(pass@2 75\.0%\)/);
  assert.match(html, /<code>omega<\/code> ×3<br>\(\+1 more\)/);
  assert.match(familySection({ after }), /<code>simp &lt;b&gt;<\/code> ×1/);
  assert.match(html, /F\/B\.lean#W.*none/);
  assert.equal(familySection({ after: stage(0.5, 94, 16) }), "");
});
