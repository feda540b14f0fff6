/**
 * The dataset card as 🤗 `datasets` and the Hub read it: its YAML front matter declares one config per file with
 * the fields its rows have (test/python/test_hub_load.py loads an export with `datasets` itself), and the card
 * names the fields present and no path of the machine that wrote it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { exportDataset } from "../../lean-bridge/dataset/exporter";
import { NULLABLE_TASK_FIELDS, TASK_FIELDS, type Field } from "../../lean-bridge/dataset/cardSchema";
import { FIM_TOKEN_SETS } from "../../lean-bridge/dataset/views";
import { EXAMPLE, REPO } from "../helpers";
import { tempDir } from "../tempDirs";
import { exportOptions } from "./exampleExport";

interface Feature {
  name: string;
  dtype?: string;
  list?: string;
  struct?: Feature[];
}

interface FrontMatter {
  configs: { config_name: string; default?: boolean; data_files: { split: string; path: string }[] }[];
  dataset_info: { config_name: string; features: Feature[] }[];
}

function frontMatter(card: string): FrontMatter {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(card);
  assert.ok(m, "the card begins with YAML front matter");
  return parseYaml(m[1]!) as FrontMatter;
}

/** The keys of every row of a JSONL file, and whether all rows have the same ones. */
function rowKeys(path: string): { union: Set<string>; rows: Set<string>[] } {
  const rows = readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((line) => new Set(Object.keys(JSON.parse(line) as object)));
  return { union: new Set(rows.flatMap((r) => [...r])), rows };
}

const dataset = (async () => {
  const out = join(tempDir("fim-card-"), "ds");
  const written = await exportDataset(
    exportOptions(out, { formats: ["native", "lean-grpo", "fim-text"], fimTokens: FIM_TOKEN_SETS.qwen }),
  );
  assert.equal(written.kind, "ok");
  return out;
})();

test("the card's configs name each file once, with a split of its own, tasks the default", async () => {
  const out = await dataset;
  const yaml = frontMatter(readFileSync(join(out, "README.md"), "utf8"));
  const files = yaml.configs.map((c) => c.data_files.map((f) => f.path)).flat();
  assert.deepEqual(files, [
    "tasks.jsonl",
    "contexts.jsonl",
    "files.jsonl",
    "lean-grpo.jsonl",
    "fim-text.jsonl",
  ]);
  assert.deepEqual(
    yaml.configs.filter((c) => c.default).map((c) => c.config_name),
    ["tasks"],
  );
  for (const c of yaml.configs)
    for (const f of c.data_files) assert.match(f.split, /^\w+(\.\w+)*$/, "a split name 🤗 accepts");
  assert.deepEqual(
    yaml.dataset_info.map((i) => i.config_name),
    yaml.configs.map((c) => c.config_name),
  );
});

test("each config's declared fields are the keys of every one of its rows, in order", async () => {
  const out = await dataset;
  const yaml = frontMatter(readFileSync(join(out, "README.md"), "utf8"));
  for (const config of yaml.configs) {
    const file = config.data_files[0]!.path;
    const declared = yaml.dataset_info.find((i) => i.config_name === config.config_name)!.features;
    const names = declared.map((f) => f.name);
    const { union, rows } = rowKeys(join(out, file));
    assert.deepEqual(names, [...union], `${file}: the declared fields, in the rows' order`);
    rows.forEach((row, k) =>
      assert.deepEqual([...row], names, `${file} row ${k}: every row has every field`),
    );
  }
});

test("a value a task lacks is null, and only the nullable fields are ever null", async () => {
  const out = await dataset;
  const tasks = readFileSync(join(out, "tasks.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const nulls = new Set(tasks.flatMap((t) => Object.keys(t).filter((k) => t[k] === null)));
  // Without --verify no task has a goal; training tasks have no novel or heldOut; most tasks have a reference.
  assert.deepEqual([...nulls].sort(), [...NULLABLE_TASK_FIELDS].sort());
  for (const t of tasks) {
    assert.equal(t.goal, null);
    assert.equal(
      t.novel === null,
      t.split === "train",
      `${String(t.id)}: novel is null on training tasks only`,
    );
    assert.equal(t.heldOut === null, t.split === "train", `${String(t.id)}: heldOut likewise`);
    assert.ok(t.reference === null || t.reference === false, `${String(t.id)}: reference is false or null`);
  }
  assert.ok(tasks.some((t) => t.reference === false) && tasks.some((t) => t.split !== "train"));
});

test("the card's list of tasks.jsonl fields names only fields of the rows, and no machine path", async () => {
  const out = await dataset;
  const card = readFileSync(join(out, "README.md"), "utf8");
  const bullet = card.slice(card.indexOf("- `tasks.jsonl`"), card.indexOf("- `contexts.jsonl`"));
  const named = [...bullet.matchAll(/`([a-z][A-Za-z]*)`/g)].map((m) => m[1]!);
  const fields = new Set(TASK_FIELDS.map(([name]: Field) => name));
  assert.deepEqual(
    [...new Set(named)].filter((n) => !fields.has(n) && n !== "sorry" && n !== "false"),
    [],
    "fields the card lists that tasks.jsonl does not have",
  );
  assert.deepEqual(
    [...fields].filter((f) => !named.includes(f)),
    [],
    "fields of tasks.jsonl the card does not list",
  );
  for (const path of [EXAMPLE, REPO, tmpdir(), out])
    assert.ok(!card.includes(path), `the card names ${path}`);
  assert.match(card, /Source workspace: `lean-env`/);
});
