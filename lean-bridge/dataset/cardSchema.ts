/**
 * The dataset card's YAML front matter: one 🤗 `datasets` config per file of the export, each with its own split
 * and its fields (`dataset_info.features`), so `load_dataset(DIR)` loads tasks.jsonl, `load_dataset(DIR,
 * "contexts")` contexts.jsonl. Every row of a file has every field of its schema, in this order (a value a task
 * lacks, such as `novel` on a training task, is written `null`), whatever rows a block of the file holds. The
 * field lists are the rows' (records.ts, views.ts), in the order the writers write them; a test compares them
 * with an export's rows.
 */
import { stringify } from "yaml";

/** A field's type as `datasets` writes it in a card: a scalar, a struct of fields, or a list of scalars. */
export type FieldType = "string" | "int64" | "bool" | { struct: Field[] } | { list: "string" };
export type Field = [name: string, type: FieldType];

const POSITION: FieldType = {
  struct: [
    ["line", "int64"],
    ["character", "int64"],
  ],
};
const SPAN: FieldType = {
  struct: [
    ["start", "int64"],
    ["end", "int64"],
  ],
};

/** tasks.jsonl: the keys of every row; `novel`, `heldOut`, `goal` and `reference` are `null` on some. */
export const TASK_FIELDS: readonly Field[] = [
  ["id", "string"],
  ["file", "string"],
  ["kind", "string"],
  ["split", "string"],
  ["novel", "bool"],
  ["heldOut", "string"],
  ["decl", "string"],
  ["context", "int64"],
  [
    "range",
    {
      struct: [
        ["start", POSITION],
        ["end", POSITION],
      ],
    },
  ],
  ["middle", "string"],
  ["indent", "int64"],
  ["prefix", "string"],
  ["suffix", "string"],
  ["offsets", SPAN],
  ["offsetsCodePoints", SPAN],
  ["goal", "string"],
  ["reference", "bool"],
];

/**
 * tasks.jsonl of `fim-rlvr import`: an export's task fields with the declaration's context inline instead of a
 * `context` index (statements/importedTasks.ts), in the order the importer writes them.
 */
export const IMPORTED_TASK_FIELDS: readonly Field[] = [
  ...TASK_FIELDS.slice(0, TASK_FIELDS.findIndex(([name]) => name === "decl") + 1),
  ["declKind", "string"],
  ...TASK_FIELDS.filter(([name]) => name === "range" || name === "middle" || name === "indent"),
  ["imports", { list: "string" }],
  ["scope", { list: "string" }],
  ["statement", "string"],
  ...TASK_FIELDS.filter(([name]) => name === "prefix" || name === "suffix"),
  ["declStart", POSITION],
  ["variables", { list: "string" }],
  ...TASK_FIELDS.filter(([name]) => ["offsets", "offsetsCodePoints", "goal", "reference"].includes(name)),
];

/** Fields whose value some rows lack: `null` there (never an absent key). */
export const NULLABLE_TASK_FIELDS: readonly string[] = ["novel", "heldOut", "goal", "reference"];

export const CONTEXT_FIELDS: readonly Field[] = [
  ["context", "int64"],
  ["file", "string"],
  ["decl", "string"],
  ["declKind", "string"],
  ["declStart", POSITION],
  ["offsets", SPAN],
  ["offsetsCodePoints", SPAN],
  ["imports", { list: "string" }],
  ["scope", { list: "string" }],
  ["variables", { list: "string" }],
  ["statement", "string"],
  ["text", "string"],
];

export const FILE_FIELDS: readonly Field[] = [
  ["file", "string"],
  ["sha256", "string"],
  ["text", "string"],
];

/** The views `export --format` adds beside the native files. */
export const VIEW_FIELDS: Readonly<Record<string, readonly Field[]>> = {
  "lean-grpo.jsonl": [
    ["name", "string"],
    ["statement", "string"],
    ["context", "string"],
    ["imports", { list: "string" }],
  ],
  "fim-text.jsonl": [
    ["id", "string"],
    ["split", "string"],
    ["kind", "string"],
    ["text", "string"],
  ],
};

/** One config of the card: a file, the name of its config and split, and its fields. */
export interface CardConfig {
  name: string;
  file: string;
  fields: readonly Field[];
}

/** The configs of an import: its tasks (the default) and files; it writes no contexts.jsonl. */
export function importCardConfigs(): CardConfig[] {
  return [
    { name: "tasks", file: "tasks.jsonl", fields: IMPORTED_TASK_FIELDS },
    { name: "files", file: "files.jsonl", fields: FILE_FIELDS },
  ];
}

/** The configs of an export with these views: tasks (the default), contexts, files, then each view. */
export function cardConfigs(views: readonly string[]): CardConfig[] {
  return [
    { name: "tasks", file: "tasks.jsonl", fields: TASK_FIELDS },
    { name: "contexts", file: "contexts.jsonl", fields: CONTEXT_FIELDS },
    { name: "files", file: "files.jsonl", fields: FILE_FIELDS },
    ...views.flatMap((file) => {
      const fields = VIEW_FIELDS[file];
      return fields ? [{ name: file.replace(/\.jsonl$/, ""), file, fields }] : [];
    }),
  ];
}

/** A config's one split, named after it; 🤗 split names are words (`lean_grpo`), config names may have dashes. */
export function splitName(config: CardConfig): string {
  return config.name.replace(/-/g, "_");
}

function featureYaml([name, type]: Field): Record<string, unknown> {
  if (typeof type === "string") return { name, dtype: type };
  if ("list" in type) return { name, list: type.list };
  return { name, struct: type.struct.map(featureYaml) };
}

/**
 * The front matter, `---` lines included. A config's one split is named after it (`tasks`, `contexts`, …): the
 * rows' own `split` field says train, validation or test, and 🤗 splits must be files.
 */
export function cardFrontMatter(
  views: readonly string[],
  prettyName: string,
  configs: readonly CardConfig[] = cardConfigs(views),
): string {
  const yaml = stringify(
    {
      pretty_name: prettyName,
      tags: ["lean4", "theorem-proving", "fill-in-the-middle", "fim-rlvr"],
      configs: configs.map((c, k) => ({
        config_name: c.name,
        ...(k === 0 ? { default: true } : {}),
        data_files: [{ split: splitName(c), path: c.file }],
      })),
      dataset_info: configs.map((c) => ({
        config_name: c.name,
        features: c.fields.map(featureYaml),
      })),
    },
    { lineWidth: 0 },
  );
  return `---\n${yaml}---\n`;
}
