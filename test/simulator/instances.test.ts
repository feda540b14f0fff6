/**
 * An instance's type is a class, and most classes are data (`Inhabited`, `Add`: structures in `Type`), where
 * Lean's proposition check (`#check (type_of% @name : Prop)`) refuses the hole as not a proof. The simulator,
 * which knows no class, takes an instance for data unless its class is one known to be a proposition
 * (`Nonempty`), so it refuses what Lean refuses. test/real-lean/agreement.test.ts measures the same against Lean.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LineIndex } from "../../lean-bridge/text/positions";
import { inMemory } from "../harness";

const FILE = "Instances.lean";
const TEXT = `prelude

instance : Inhabited Nat := by
  exact ⟨0⟩

instance : Nonempty Nat := by
  exact ⟨0⟩

theorem t (p : Prop) (hp : p) : p := by
  exact hp
`;

/** The proof line after the declaration that starts with `head`. */
function holeAfter(head: string) {
  const at = TEXT.indexOf("exact", TEXT.indexOf(head));
  return new LineIndex(TEXT).rangeAt(at, TEXT.indexOf("\n", at));
}

test("the simulator refuses an instance of a data class as not a proposition, as Lean does", async () => {
  const root = mkdtempSync(join(tmpdir(), "fim-instances-"));
  cpSync(join(__dirname, "..", "fixtures", "conformance", "lean-toolchain"), join(root, "lean-toolchain"));
  writeFileSync(join(root, FILE), TEXT);
  const h = await inMemory({ cwd: root }, { projectRoot: root });
  try {
    const data = await h.pool.verify({ file: FILE, hole: holeAfter("instance : Inhabited") }, "exact ⟨0⟩");
    assert.equal(data.kind === "rejected" && data.rule, "not-a-proposition", JSON.stringify(data));
    const prop = await h.pool.verify({ file: FILE, hole: holeAfter("instance : Nonempty") }, "exact ⟨0⟩");
    assert.equal(prop.kind, "proved", JSON.stringify(prop));
    const theorem = await h.pool.verify({ file: FILE, hole: holeAfter("theorem t") }, "exact hp");
    assert.equal(theorem.kind, "proved", JSON.stringify(theorem));
  } finally {
    await h.close();
    rmSync(root, { recursive: true, force: true });
  }
});
