import { test } from "node:test";
import assert from "node:assert/strict";
import { parseFile } from "../../lean-bridge/lean/commands";
import { planPrefix } from "../../lean-bridge/verify/prefixForm";

const HEADER = "prelude\nimport FimPrelude\n\n";
const theorems = (n: number) =>
  Array.from({ length: n }, (_, i) => `theorem t${i} (p : Prop) (h : p) : p := by\n  exact h\n`).join("\n");

function lastDeclaration(text: string) {
  const file = parseFile(text);
  const decls = file.commands.flatMap((c) => (c.declaration ? [c.declaration] : []));
  return { file, decl: decls[decls.length - 1]! };
}

test("prefix form: the declarations above are blanked in place, scope commands kept, lines unchanged", () => {
  const text = `${HEADER}namespace A\nopen B\n${theorems(5)}\nend A\nsection\nvariable (n : Nat)\n${theorems(1).replace("t0", "last")}end\n`;
  const { file, decl } = lastDeclaration(text);
  const plan = planPrefix(file, decl, "salt", 3);
  assert.equal(plan.kind, "import", JSON.stringify(plan));
  if (plan.kind !== "import") return;
  assert.equal(plan.moduleText, text.slice(0, decl.start));
  // Every line stays: the document's lines are the file's, and blanked lines are empty.
  const before = text.slice(0, decl.start).split("\n");
  const blankedLines = plan.blanked.split("\n");
  assert.equal(blankedLines.length, before.length);
  assert.equal(blankedLines.at(-1), before.at(-1), "the declaration's first line keeps its columns");
  assert.ok(plan.blanked.length < text.slice(0, decl.start).length / 2, "blanked lines are empty");
  assert.match(plan.blanked, new RegExp(`^prelude\\nimport ${plan.module}\\n`));
  assert.ok(!plan.blanked.includes("theorem"), "no declaration above is left");
  for (const kept of ["namespace A", "open B", "end A", "section", "variable (n : Nat)"])
    assert.ok(plan.blanked.includes(kept), `${kept} is kept`);
  assert.match(plan.module, /^P[0-9a-f]{8}$/);
});

test("prefix form: the key follows the text above and the salt, not the hole's declaration", () => {
  const a = lastDeclaration(`${HEADER}${theorems(6)}`);
  const b = lastDeclaration(`${HEADER}${theorems(5)}\ntheorem t5 (q : Prop) (h : q) : q := by\n  exact h\n`);
  const pa = planPrefix(a.file, a.decl, "x", 1);
  const pb = planPrefix(b.file, b.decl, "x", 1);
  const pc = planPrefix(a.file, a.decl, "y", 1);
  assert.ok(pa.kind === "import" && pb.kind === "import" && pc.kind === "import");
  if (pa.kind !== "import" || pb.kind !== "import" || pc.kind !== "import") return;
  assert.equal(pa.key, pb.key);
  assert.notEqual(pa.key, pc.key);
});

test("prefix form: whatever an import does not carry keeps the whole file", () => {
  const cases: [string, RegExp][] = [
    [`${HEADER}private theorem hidden : True := True.intro\n${theorems(4)}`, /private/],
    [`${HEADER}local notation "X" => True\n${theorems(4)}`, /local/],
    [`${HEADER}attribute [simp] foo\n${theorems(4)}`, /attribute/],
    [`${HEADER}mutual\n${theorems(2)}end\n${theorems(2)}`, /mutual/],
    [`${HEADER}#eval 1\n${theorems(4)}`, /#eval/],
    [`${HEADER}axiom propext : False\n${theorems(4)}`, /axiom/],
    [`prelude\n${theorems(4)}`, /no import/],
    [`${HEADER}${theorems(2)}`, /declarations above the hole/],
  ];
  for (const [text, reason] of cases) {
    const { file, decl } = lastDeclaration(text);
    const plan = planPrefix(file, decl, "salt", 1 + (reason.source.includes("above") ? 5 : 0));
    assert.equal(plan.kind, "whole", text);
    if (plan.kind === "whole") assert.match(plan.reason, reason, text);
  }
});
