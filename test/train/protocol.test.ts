/**
 * The TypeScript declarations of everything that crosses the language line (the host <-> trainer protocol and the
 * verifier service's) agree with the JSON Schema, the source of truth: the same types, field names, required-ness,
 * nullability, primitive types and enums, and the same methods and error codes.
 * The declarations are read with the TypeScript compiler's own type checker, not by pattern matching: the generated
 * message types (trainerWire.ts, `npm run protocol:generate`) and the hand-written rest (trainer.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import Ajv2020 from "ajv/dist/2020";
import { REPO } from "../helpers";
import {
  MODEL_MESSAGES,
  SERVICE_BUSY,
  SERVICE_INVALID_PARAMS,
  SERVICE_MESSAGES,
  SERVICE_UNAUTHORIZED,
  TRAINER_MESSAGES,
  TRAINER_PROTOCOL_VERSION,
  TRAINER_ERROR_CODE,
} from "../../lean-bridge/protocol/trainer";

const SCHEMA_PATH = join(REPO, "lean-bridge", "protocol", "trainer.schema.json");
const TS_PATH = join(REPO, "lean-bridge", "protocol", "trainer.ts");
const WIRE_PATH = join(REPO, "lean-bridge", "protocol", "trainerWire.ts");

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  $ref?: string;
  oneOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  description?: string;
}

const schema = JSON.parse(readFileSync(SCHEMA_PATH, "utf8")) as {
  $defs: Record<string, JsonSchema>;
  "x-messages": unknown[];
  "x-serviceMessages": unknown[];
  "x-modelMessages": unknown[];
  "x-protocolVersion": number;
  "x-errorCodes": Record<string, number>;
};

function refName(ref: string): string {
  return ref.replace("#/$defs/", "");
}

/** What values a schema admits, coarsely: primitive type names and literal values (`"lit:x"`). */
function schemaShape(s: JsonSchema): Set<string> {
  if (s.$ref) return schemaShape(schema.$defs[refName(s.$ref)]!);
  if (s.oneOf) return new Set(s.oneOf.flatMap((o) => [...schemaShape(o)]));
  if (s.enum) return new Set(s.enum.map((v) => `lit:${String(v)}`));
  if (s.const !== undefined) return new Set([`lit:${String(s.const)}`]);
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  return new Set(types.map((t) => (t === "integer" ? "number" : t)));
}

const program = ts.createProgram([TS_PATH, WIRE_PATH], { strict: true, skipLibCheck: true, noEmit: true });
const checker = program.getTypeChecker();
const source = program.getSourceFile(TS_PATH)!;
const declared = new Map<string, ts.Type>();
const docs = new Map<string, string>();
for (const file of [source, program.getSourceFile(WIRE_PATH)!]) {
  ts.forEachChild(file, (node) => {
    if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.name) {
      assert.ok(!declared.has(node.name.text), `${node.name.text} is declared once`);
      const symbol = checker.getSymbolAtLocation(node.name)!;
      declared.set(node.name.text, checker.getDeclaredTypeOfSymbol(symbol));
      docs.set(node.name.text, ts.displayPartsToString(symbol.getDocumentationComment(checker)));
    }
  });
}

/** The same coarse shape for a TypeScript type. */
function tsShape(type: ts.Type): Set<string> {
  const parts = type.isUnion() ? type.types : [type];
  const out = new Set<string>();
  for (const t of parts) {
    if (t.isStringLiteral()) out.add(`lit:${t.value}`);
    else if (t.isNumberLiteral()) out.add(`lit:${t.value}`);
    else if (t.flags & ts.TypeFlags.BooleanLiteral) out.add("boolean");
    else if (t.flags & ts.TypeFlags.String) out.add("string");
    else if (t.flags & ts.TypeFlags.Number) out.add("number");
    else if (t.flags & ts.TypeFlags.Boolean) out.add("boolean");
    else if (t.flags & ts.TypeFlags.Null) out.add("null");
    else if (t.flags & ts.TypeFlags.Undefined)
      continue; // optional property
    else if (checker.isArrayType(t)) out.add("array");
    else if (t.flags & ts.TypeFlags.Object) out.add("object");
    else out.add(`unknown:${checker.typeToString(t)}`);
  }
  return out;
}

test("the schema is valid JSON Schema 2020-12 and every definition compiles", () => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv
    .addKeyword("x-messages")
    .addKeyword("x-serviceMessages")
    .addKeyword("x-modelMessages")
    .addKeyword("x-protocolVersion")
    .addKeyword("x-errorCodes")
    .addKeyword("x-algorithmOptions");
  ajv.addSchema(schema, "trainer");
  for (const name of Object.keys(schema.$defs))
    assert.ok(ajv.getSchema(`trainer#/$defs/${name}`), `$defs/${name} compiles`);
});

test("every schema definition is declared (trainerWire.ts, trainer.ts) and every exported type is in the schema", () => {
  const schemaNames = new Set(Object.keys(schema.$defs));
  const tsNames = new Set([...declared.keys()].filter((n) => n !== "TrainConfigWire"));
  assert.deepEqual([...tsNames].sort(), [...schemaNames].sort());
});

test("objects have the same fields, required-ness, types and enums on both sides", () => {
  let checkedFields = 0;
  for (const [name, def] of Object.entries(schema.$defs)) {
    if (def.type !== "object") continue;
    const type = declared.get(name)!;
    const props = checker.getPropertiesOfType(type);
    const schemaProps = def.properties ?? {};
    assert.deepEqual(
      props.map((p) => p.name).sort(),
      Object.keys(schemaProps).sort(),
      `${name}: field names`,
    );
    assert.equal(def.additionalProperties, false, `${name}: closed in the schema`);
    for (const prop of props) {
      const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
      const required = (def.required ?? []).includes(prop.name);
      assert.equal(!optional, required, `${name}.${prop.name}: required in both or neither`);
      const s = schemaProps[prop.name]!;
      assert.ok(s.description, `${name}.${prop.name}: schema description`);
      assert.ok(
        ts.displayPartsToString(prop.getDocumentationComment(checker)).length > 0,
        `${name}.${prop.name}: TSDoc`,
      );
      const propType = checker.getTypeOfSymbolAtLocation(prop, source);
      assert.deepEqual(
        [...tsShape(propType)].sort(),
        [...schemaShape(s)].sort(),
        `${name}.${prop.name}: type`,
      );
      checkedFields++;
    }
  }
  assert.ok(checkedFields > 50, `checked ${checkedFields} fields`);
});

test("enumerations and the null result agree", () => {
  for (const [name, def] of Object.entries(schema.$defs)) {
    if (def.type === "object") continue;
    assert.deepEqual([...tsShape(declared.get(name)!)].sort(), [...schemaShape(def)].sort(), name);
    assert.ok(def.description && docs.get(name), `${name}: documented on both sides`);
  }
});

test("methods, directions and payload types agree; version and error code agree", () => {
  assert.deepEqual(JSON.parse(JSON.stringify(TRAINER_MESSAGES)), schema["x-messages"]);
  assert.deepEqual(JSON.parse(JSON.stringify(SERVICE_MESSAGES)), schema["x-serviceMessages"]);
  assert.deepEqual(JSON.parse(JSON.stringify(MODEL_MESSAGES)), schema["x-modelMessages"]);
  assert.equal(TRAINER_PROTOCOL_VERSION, schema["x-protocolVersion"]);
  assert.deepEqual(schema["x-errorCodes"], {
    trainerError: TRAINER_ERROR_CODE,
    serviceUnauthorized: SERVICE_UNAUTHORIZED,
    serviceBusy: SERVICE_BUSY,
    serviceInvalidParams: SERVICE_INVALID_PARAMS,
  });
});

test("the comparison itself notices a difference (a field renamed in a copy of the schema)", () => {
  const def = schema.$defs.TrainDoneParams!;
  const renamed = { ...def.properties, state: def.properties!.status! };
  delete (renamed as Record<string, JsonSchema>).status;
  const props = checker.getPropertiesOfType(declared.get("TrainDoneParams")!).map((p) => p.name);
  assert.notDeepEqual(props.sort(), Object.keys(renamed).sort());
  assert.notDeepEqual(
    [...tsShape(declared.get("HoleKind")!)].sort(),
    [...schemaShape({ enum: ["tactic"] })].sort(),
  );
});
