/**
 * The host <-> trainer message types are generated from their one source, lean-bridge/protocol/trainer.schema.json:
 * regenerating lean-bridge/protocol/trainerWire.ts (json-schema-to-typescript, a devDependency: `npm ci` installs it)
 * changes nothing, and trainer.ts declares no message type of its own beside them. The Python side is checked by
 * trainer/tests/test_protocol_generated.py; `npm run protocol:generate` writes both.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generateTypeScript, TS_OUTPUT } from "../../scripts/generate-protocol.mjs";
import { REPO } from "../helpers";

test("trainerWire.ts is what the schema generates (run `npm run protocol:generate` after changing the schema)", async () => {
  const generated = await generateTypeScript();
  assert.ok(generated.includes("export interface BatchVerdict {"), "the generator wrote the message types");
  assert.equal(readFileSync(TS_OUTPUT, "utf8"), generated);
});

test("every $defs entry is a generated type, and trainer.ts writes none of them by hand", () => {
  const schema = JSON.parse(
    readFileSync(join(REPO, "lean-bridge", "protocol", "trainer.schema.json"), "utf8"),
  ) as {
    $defs: Record<string, unknown>;
  };
  const wire = readFileSync(TS_OUTPUT, "utf8");
  const handWritten = readFileSync(join(REPO, "lean-bridge", "protocol", "trainer.ts"), "utf8");
  for (const name of Object.keys(schema.$defs)) {
    assert.match(wire, new RegExp(`^export (interface|type) ${name}\\b`, "m"), `${name} is generated`);
    assert.doesNotMatch(
      handWritten,
      new RegExp(`^export (interface|type) ${name}\\b`, "m"),
      `${name} by hand`,
    );
  }
  assert.match(
    handWritten,
    /^export type \* from "\.\/trainerWire";$/m,
    "trainer.ts re-exports the generated types",
  );
});
