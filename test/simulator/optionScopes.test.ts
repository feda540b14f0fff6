/**
 * `set_option NAME VALUE in tacs`: Lean runs `tacs` with the option set, so where the option cannot change what
 * Lean accepts (a limit raised to at least its default, a linter off, a printing option) the simulator judges
 * `tacs` against its references, in candidates and in the references themselves; anything else stays in the
 * text and matches no reference. test/real-lean/agreement.test.ts measures the same cases against Lean.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { proofHole } from "../helpers";
import { inMemory } from "../harness";

const FILE = "Options.lean";
const TEXT = `prelude

theorem imp_self (p : Prop) : p → p := by
  intro hp
  exact hp

theorem under_option (p : Prop) (hp : p) : p := by
  set_option maxHeartbeats 400000 in
  exact hp
`;

test("the simulator judges tactics through set_option … in only where the option keeps what Lean accepts", async () => {
  const root = mkdtempSync(join(tmpdir(), "fim-options-"));
  cpSync(join(__dirname, "..", "fixtures", "conformance", "lean-toolchain"), join(root, "lean-toolchain"));
  writeFileSync(join(root, FILE), TEXT);
  const h = await inMemory({ cwd: root }, { projectRoot: root });
  try {
    const imp = { file: FILE, hole: proofHole(TEXT, "imp_self") };
    for (const [candidate, proved] of [
      ["intro hp\nexact hp", true],
      ["set_option maxHeartbeats 400000 in\nintro hp\nexact hp", true],
      ["set_option maxRecDepth 512 in\nintro hp\nexact hp", true],
      ["set_option linter.unusedVariables false in\nintro hp\nexact hp", true],
      ["set_option pp.all true in\nintro hp\nexact hp", true],
      // A limit below Lean's default can make a proof run out; a linter switched on is not an allowed value.
      ["set_option maxHeartbeats 100 in\nintro hp\nexact hp", false],
      ["set_option maxRecDepth 1 in\nintro hp\nexact hp", false],
      ["set_option linter.unusedVariables true in\nintro hp\nexact hp", false],
      ["set_option maxHeartbeats 400000\nintro hp\nexact hp", false],
    ] as const) {
      const v = await h.pool.verify(imp, candidate);
      assert.equal(v.kind === "proved", proved, `${candidate}: ${JSON.stringify(v)}`);
    }
    // A reference written under an option is matched with or without it.
    const under = { file: FILE, hole: proofHole(TEXT, "under_option") };
    for (const candidate of ["exact hp", "set_option maxHeartbeats 400000 in\nexact hp"]) {
      const v = await h.pool.verify(under, candidate);
      assert.equal(v.kind, "proved", `${candidate}: ${JSON.stringify(v)}`);
    }
  } finally {
    await h.close();
    rmSync(root, { recursive: true, force: true });
  }
});
