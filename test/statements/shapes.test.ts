/**
 * Each row shape of `fim-rlvr import` against golden Lean files of our own (test/fixtures/import): lean-grpo
 * statements with and without `theorem name`, with `:= by …` and bare `:=`; miniF2F/Workbook rows with a
 * header and an informal prefix; NuminaMath-LEAN rows whose ground truth proves the statement (kept) or another
 * one (not used); a column mapping. FIM_UPDATE_GOLDEN=1 rewrites the golden files.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { generatedFile, statementKey } from "../../lean-bridge/statements/leanFile";
import { parseColumnMap, shapeRow } from "../../lean-bridge/statements/shapes";
import { REPO } from "../helpers";

const DIR = join(REPO, "test", "fixtures", "import");
const rows = readFileSync(join(DIR, "rows.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Record<string, unknown>);

const columns = parseColumnMap("statement=problem,name=id,header=preamble");

test("every row shape becomes the golden Lean file", () => {
  assert.equal(columns.kind, "ok");
  const shapes: string[] = [];
  rows.forEach((raw, k) => {
    const mapped = "problem" in raw && columns.kind === "ok" ? columns.columns : undefined;
    const shaped = shapeRow(raw, k + 1, mapped);
    assert.equal(shaped.kind, "ok", `row ${k + 1}: ${JSON.stringify(shaped)}`);
    if (shaped.kind !== "ok") return;
    shapes.push(
      `${shaped.row.shape}${shaped.row.proved ? "+proof" : ""}${shaped.row.proofNote ? `(${shaped.row.proofNote})` : ""}`,
    );
    const golden = join(DIR, `row${k + 1}.lean`);
    const text = generatedFile(shaped.row).text;
    if (process.env.FIM_UPDATE_GOLDEN === "1" || !existsSync(golden)) writeFileSync(golden, text);
    assert.equal(text, readFileSync(golden, "utf8"), `row ${k + 1} differs from ${golden}`);
  });
  assert.deepEqual(shapes, [
    "lean-grpo",
    "lean-grpo",
    "lean-grpo+proof",
    "lean-grpo",
    "formal-statement",
    "formal-statement",
    "numina+proof",
    "numina(ground-truth-differs)",
    "columns",
  ]);
});

test("a statement's key ignores its name, layout and comments, not its header or its type", () => {
  const key = (statement: string, imports: string[] = []) => {
    const s = shapeRow({ statement, imports }, 1);
    assert.equal(s.kind, "ok");
    return s.kind === "ok" ? statementKey(s.row) : "";
  };
  const base = key("theorem a (n : Nat) : n + 0 = n");
  assert.equal(key("theorem b (n : Nat) :\n    n + 0 = n -- same"), base);
  assert.equal(key("(n : Nat) : n + 0 = n"), base);
  assert.notEqual(key("theorem a (n : Nat) : 0 + n = n"), base);
  assert.notEqual(key("theorem a (n : Nat) : n + 0 = n", ["Mathlib"]), base);
});

test("rows without a statement, or not objects, are malformed with a reason", () => {
  const missing = shapeRow({ question: "x" }, 3);
  assert.equal(missing.kind, "malformed");
  if (missing.kind === "malformed") assert.match(missing.reason, /no statement column.*--columns/);
  assert.equal(shapeRow([1, 2], 4).kind, "malformed");
  assert.equal(shapeRow({ statement: "   " }, 5).kind, "malformed");
  assert.equal(parseColumnMap("name=id").kind, "error");
  assert.equal(parseColumnMap("statement=a,bogus=b").kind, "error");
});
