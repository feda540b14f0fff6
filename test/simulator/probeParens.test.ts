/**
 * The simulator reads the verifier's after-candidate goal probe as Lean does: the candidate wrapped in Lean's
 * `(tacs)` tactic runs on the goals as they are, so the sentinel after it reports the goals left, for a hole
 * on lines of its own and for one on the `by` line alike.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { afterCandidateProbe, sentinelCount } from "../../lean-bridge/verify/goals";
import { DEFAULT_POLICY } from "../../lean-bridge/verify/policy";
import { prepareCheck } from "../../lean-bridge/verify/prepareCheck";
import { TaskFiles } from "../../lean-bridge/verify/taskFiles";
import { featuresOfToolchain } from "../../lean-bridge/verify/toolchain";
import { inMemory } from "../harness";
import { EXAMPLE, proofHole } from "../helpers";

const TEXT = `theorem two : True ∧ True := by
  constructor
  trivial
  trivial

theorem one : True := by skip; trivial
`;

test("the simulator counts the goals after a candidate wrapped in ( … ) by the probe", async () => {
  const h = await inMemory({
    oracle: {
      alternatives: {
        two: ["by\n  constructor\n  trivial\n  trivial"],
        one: ["by skip; trivial"],
      },
    },
  });
  try {
    for (const [name, candidate] of [
      ["two", "constructor\ntrivial"],
      ["one", "skip"],
    ] as const) {
      const prepared = prepareCheck(
        new TaskFiles(EXAMPLE),
        { file: "Probe.lean", text: TEXT, hole: proofHole(TEXT, name) },
        candidate,
        { policy: DEFAULT_POLICY, features: featuresOfToolchain(undefined) },
      );
      assert.equal(prepared.kind, "ok");
      if (prepared.kind !== "ok") continue;
      const probe = afterCandidateProbe(prepared.doc);
      assert.match(probe.text, /\(\n\s*/, "the candidate is wrapped");
      const uri = `file:///probe-${name}.lean`;
      const opened = await h.server.openDocument(uri, probe.text);
      assert.equal(opened.kind, "ok");
      if (opened.kind !== "ok") continue;
      const result = await h.server.waitForDiagnostics(uri, opened.version, 5_000);
      assert.equal(result.kind, "ready");
      if (result.kind !== "ready") continue;
      assert.equal(
        sentinelCount(probe, prepared.doc.declarationStart, result.diagnostics),
        1,
        `${name}: ${JSON.stringify(result.diagnostics)}`,
      );
    }
  } finally {
    await h.close();
  }
});
