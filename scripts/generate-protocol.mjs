// `npm run protocol:generate`: the host <-> trainer message types, generated from their one source,
// lean-bridge/protocol/trainer.schema.json: TypeScript with json-schema-to-typescript (lean-bridge/protocol/trainerWire.ts),
// Python with datamodel-code-generator (trainer/fim_rlvr/core/wire.py, through scripts/generate_wire.py and the trainer's
// Python). `--check` writes nothing and exits 1 when either file differs from what the schema gives.
// test/unit/protocolGenerated.test.ts and trainer/tests/test_protocol_generated.py run the same checks.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";
import prettier from "prettier";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");
export const SCHEMA = join(REPO, "lean-bridge", "protocol", "trainer.schema.json");
export const TS_OUTPUT = join(REPO, "lean-bridge", "protocol", "trainerWire.ts");

const BANNER = `/**
 * Generated from lean-bridge/protocol/trainer.schema.json by json-schema-to-typescript (scripts/generate-protocol.mjs):
 * do not edit; change the schema and run \`npm run protocol:generate\`. The hand-written rest of the protocol (method
 * names, error codes, message lists, isMaskedVerdict) is lean-bridge/protocol/trainer.ts.
 */
`;

/**
 * A reference to another definition, written as that definition's name (json-schema-to-typescript's `tsType`): a
 * `$ref` beside a description would otherwise become a copy of the referenced type under a new name, while the
 * description is what documents the field.
 */
function namedReferences(node) {
  if (Array.isArray(node)) return node.map(namedReferences);
  if (node === null || typeof node !== "object") return node;
  if (typeof node.$ref === "string") {
    const { $ref, ...rest } = node;
    if (!$ref.startsWith("#/$defs/")) throw new Error(`unsupported $ref ${$ref} in ${SCHEMA}`);
    return { ...rest, tsType: $ref.slice("#/$defs/".length) };
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, namedReferences(value)]));
}

/** The text trainerWire.ts must hold: one declaration per `$defs` entry, in the schema's order. */
export async function generateTypeScript() {
  const schema = JSON.parse(readFileSync(SCHEMA, "utf8"));
  const parts = [];
  for (const [name, definition] of Object.entries(namedReferences(schema.$defs))) {
    parts.push(
      await compile({ ...definition, title: name }, name, {
        bannerComment: "",
        additionalProperties: false,
        strictIndexSignatures: false,
        format: false,
      }),
    );
  }
  const config = (await prettier.resolveConfig(TS_OUTPUT)) ?? {};
  return prettier.format(BANNER + parts.join("\n"), { ...config, parser: "typescript" });
}

/** Runs scripts/generate_wire.py with the trainer's Python; its exit code. */
function python(check) {
  const interpreter = process.env.FIM_TRAINER_PYTHON ?? join(REPO, "trainer", ".venv", "bin", "python");
  if (!existsSync(interpreter)) {
    console.error(
      `${interpreter} is missing: run \`npm run test:setup\` (it installs trainer[test], the generator)`,
    );
    return 1;
  }
  const args = [join(REPO, "scripts", "generate_wire.py"), ...(check ? ["--check"] : [])];
  return spawnSync(interpreter, args, { stdio: "inherit" }).status ?? 1;
}

async function main() {
  const check = process.argv.includes("--check");
  const text = await generateTypeScript();
  const current = existsSync(TS_OUTPUT) ? readFileSync(TS_OUTPUT, "utf8") : "";
  let status = 0;
  if (check) {
    const same = current === text;
    console.log(
      `lean-bridge/protocol/trainerWire.ts is ${same ? "up to date" : "stale: run `npm run protocol:generate`"}`,
    );
    if (!same) status = 1;
  } else {
    writeFileSync(TS_OUTPUT, text);
    console.log("wrote lean-bridge/protocol/trainerWire.ts");
  }
  return python(check) === 0 ? status : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => (process.exitCode = code),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
