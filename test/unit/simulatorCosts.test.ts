/** The verifier's `--sim-*-ms` options reach the simulator as its own cost settings, and only when given. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { verifierSpec } from "../../lean-bridge/cli/pool";

test("--sim-decl-ms, --sim-header-ms and --sim-edit-ms become the simulator's --decl-ms, --header-ms and --edit-ms", () => {
  const spec = verifierSpec(
    { simulator: true, "sim-decl-ms": "6", "sim-header-ms": "65", "sim-edit-ms": "3" },
    1,
  );
  assert.equal(spec.kind, "simulator");
  assert.deepEqual(spec.kind === "simulator" ? spec.extraArgs : undefined, [
    "--decl-ms",
    "6",
    "--header-ms",
    "65",
    "--edit-ms",
    "3",
  ]);
  const free = verifierSpec({ simulator: true }, 1);
  assert.deepEqual(free.kind === "simulator" ? free.extraArgs : undefined, [], "free unless given");
});
