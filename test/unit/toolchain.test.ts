import { test } from "node:test";
import assert from "node:assert/strict";
import {
  featuresOfToolchain,
  moduleFilesUncheckable,
  parseToolchain,
} from "../../lean-bridge/verify/toolchain";
import { axiomName, isNativeAxiom } from "../../lean-bridge/verify/classify";

test("lean-toolchain forms: releases, release candidates, nightlies, channels and forks", () => {
  assert.deepEqual(parseToolchain("leanprover/lean4:v4.24.0\n"), {
    kind: "release",
    major: 4,
    minor: 24,
    patch: 0,
    text: "leanprover/lean4:v4.24.0",
  });
  assert.equal(parseToolchain("leanprover/lean4:v4.30.0-rc1").kind, "release");
  assert.equal((parseToolchain("v4.30.0-rc1") as { rc?: number }).rc, 1);
  assert.deepEqual(parseToolchain("leanprover/lean4:nightly-2026-04-02"), {
    kind: "nightly",
    date: "2026-04-02",
    text: "leanprover/lean4:nightly-2026-04-02",
  });
  assert.equal(parseToolchain("leanprover/lean4-nightly:nightly-2026-04-02").kind, "nightly");
  for (const unknown of [
    "stable",
    "leanprover/lean4:stable",
    "my-org/lean4:v4.30.0",
    "",
    undefined,
    "garbage",
  ])
    assert.equal(parseToolchain(unknown).kind, "unknown", String(unknown));
  const fork = parseToolchain("my-org/lean4:v4.30.0");
  if (fork.kind === "unknown") assert.match(fork.reason, /fork/);
});

test("each boundary: the release that has it, nightlies by date, unknown in between and for unreadable toolchains", () => {
  const f = (tc: string) => featuresOfToolchain(tc);
  // lean4#13117 (4.30): `#print axioms` in module files.
  assert.equal(f("leanprover/lean4:v4.29.1").printAxiomsInModule, "no");
  assert.equal(f("leanprover/lean4:v4.30.0-rc1").printAxiomsInModule, "yes");
  assert.equal(f("leanprover/lean4:nightly-2026-03-20").printAxiomsInModule, "no");
  assert.equal(f("leanprover/lean4:nightly-2026-03-29").printAxiomsInModule, "unknown");
  assert.equal(f("leanprover/lean4:nightly-2026-04-01").printAxiomsInModule, "yes");
  assert.equal(f("stable").printAxiomsInModule, "unknown");
  assert.equal(f("leanprover/lean4:v4.19.0").moduleSystem, "no");
  // lean4#12217 (4.29): native axioms per computation; lean4#14953 (4.35): legacy ones removed.
  assert.equal(f("leanprover/lean4:v4.28.0").nativeAxiomNames, "no");
  assert.equal(f("leanprover/lean4:v4.29.0").nativeAxiomNames, "yes");
  assert.equal(f("leanprover/lean4:v4.34.0").legacyNativeRemoved, "no");
  assert.equal(f("leanprover/lean4:v4.35.0-rc1").legacyNativeRemoved, "yes");
  // lean4#13803 (4.31): the option exists; lean4#13955 (4.32): on by default.
  assert.equal(f("leanprover/lean4:v4.30.0").defPropOption, "no");
  assert.equal(f("leanprover/lean4:v4.31.0").defPropOption, "yes");
  assert.equal(f("leanprover/lean4:v4.31.0").defPropOnByDefault, "no");
  assert.equal(f("leanprover/lean4:v4.32.0").defPropOnByDefault, "yes");
  assert.equal(f("leanprover/lean4:nightly-2026-05-24").defPropOption, "unknown");
  // lean4#10034 (4.24): the sorry term in the warning.
  assert.equal(f("leanprover/lean4:v4.23.0").sorryTermWarning, "no");
  assert.equal(f("leanprover/lean4:v4.24.0").sorryTermWarning, "yes");
  assert.equal(f("leanprover/lean4:v5.0.0").printAxiomsInModule, "yes");
});

test("module files are offered as tasks only where Lean is known to axiom-check them, with the reason otherwise", () => {
  assert.equal(moduleFilesUncheckable(featuresOfToolchain("leanprover/lean4:v4.30.0")), undefined);
  assert.match(
    moduleFilesUncheckable(featuresOfToolchain("leanprover/lean4:v4.25.0")) ?? "",
    /refuses.*4\.30/,
  );
  assert.match(moduleFilesUncheckable(featuresOfToolchain("stable")) ?? "", /not known.*pin a release/);
});

test("native axioms: the legacy ones and Lean 4.29's one-per-computation names; `_root_.` stripped", () => {
  for (const a of [
    "Lean.ofReduceBool",
    "Lean.trustCompiler",
    "bv_axiomCheck._native.bv_decide.ax_1_5",
    "N.thm._native.native_decide.ax_1_1",
  ])
    assert.ok(isNativeAxiom(a), a);
  for (const a of ["propext", "Classical.choice", "N._native", "foo._native.bar.axiom", "_native.x.ax_1"])
    assert.ok(!isNativeAxiom(a), a);
  assert.equal(axiomName("_root_.Classical.choice"), "Classical.choice");
  assert.equal(axiomName("Classical.choice"), "Classical.choice");
});
