/**
 * Checks a TrainConfig's values against the protocol schema before anything starts, so a bad value in `--config`
 * is a usage error (exit 2) that says what to write, not a trainer error after the model has loaded. The schema
 * is the one source: this file reads its keywords (type, enum, bounds, items, references) and knows no option by
 * name, except the few rules the schema cannot say (a GRPO group needs two completions).
 */
import schema from "../protocol/trainer.schema.json";

/** One property's schema, as trainer.schema.json writes them (the keywords this checker reads). */
interface PropertySchema {
  type?: string | string[];
  enum?: unknown[];
  $ref?: string;
  oneOf?: PropertySchema[];
  items?: PropertySchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  additionalProperties?: boolean;
  description?: string;
}

/** The keywords `describe` and `matches` understand; a test checks the schema uses no other. */
export const UNDERSTOOD_KEYWORDS: readonly string[] = [
  "type",
  "enum",
  "$ref",
  "oneOf",
  "items",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "additionalProperties",
  "description",
  // What the trainer fills in when the key is absent: nothing to check (the portfolio's tactics live there).
  "default",
];

const DEFS = schema.$defs as unknown as Record<string, PropertySchema>;
export const TRAIN_CONFIG_PROPERTIES = schema.$defs.TrainConfig.properties as unknown as Record<
  string,
  PropertySchema
>;

/**
 * The algorithm options (`algo_config` keys) the trainer's AlgorithmConfig has, each with the values it takes; a
 * Python test keeps the keys equal and the values the trainer's own check accepts.
 */
export const ALGORITHM_OPTIONS = schema["x-algorithmOptions"] as unknown as Record<string, PropertySchema>;
export const ALGORITHM_OPTION_KEYS: readonly string[] = Object.keys(ALGORITHM_OPTIONS);

function resolved(s: PropertySchema): PropertySchema {
  return s.$ref ? DEFS[s.$ref.slice("#/$defs/".length)]! : s;
}

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "boolean":
      return typeof value === "boolean";
    case "string":
      return typeof value === "string";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    default:
      return false;
  }
}

/** Whether `value` satisfies the property's schema. */
export function matches(raw: PropertySchema, value: unknown): boolean {
  const s = resolved(raw);
  if (s.oneOf) return s.oneOf.filter((option) => matches(option, value)).length === 1;
  if (s.enum && !s.enum.includes(value)) return false;
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((t) => typeMatches(t, value))) return false;
  }
  if (typeof value === "number") {
    if (s.minimum !== undefined && value < s.minimum) return false;
    if (s.maximum !== undefined && value > s.maximum) return false;
    if (s.exclusiveMinimum !== undefined && value <= s.exclusiveMinimum) return false;
    if (s.exclusiveMaximum !== undefined && value >= s.exclusiveMaximum) return false;
  }
  if (Array.isArray(value) && s.items) return value.every((item) => matches(s.items!, item));
  return true;
}

/** What the property accepts, in words: "an integer of at least 1, or null", "one of: sft, rft". */
export function describe(raw: PropertySchema): string {
  const s = resolved(raw);
  if (s.oneOf) return s.oneOf.map(describe).join(", or ");
  if (s.enum) return `one of: ${s.enum.map(String).join(", ")}`;
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  const bounds = [
    s.minimum !== undefined ? `at least ${s.minimum}` : "",
    s.exclusiveMinimum !== undefined ? `above ${s.exclusiveMinimum}` : "",
    s.maximum !== undefined ? `at most ${s.maximum}` : "",
    s.exclusiveMaximum !== undefined ? `below ${s.exclusiveMaximum}` : "",
  ].filter(Boolean);
  const words = types
    .filter((t) => t !== "null")
    .map((t) => {
      if (t === "array") return `a list${s.items ? ` of ${describe(s.items)}` : ""}`;
      if (t === "integer" || t === "number")
        return `${t === "integer" ? "a whole number" : "a number"}${bounds.length ? ` ${bounds.join(" and ")}` : ""}`;
      return t === "object" ? "a mapping" : `a ${t}`;
    });
  if (types.includes("null")) words.push("null");
  return words.join(", or ");
}

export type CheckResult = { kind: "ok" } | { kind: "error"; message: string };

/**
 * Every value of `config` against the schema, then the rules the schema cannot say. `source` names where the
 * values came from ("--config run.yaml"), so the message points at the line to change.
 */
export function checkTrainConfig(config: Record<string, unknown>, source: string): CheckResult {
  for (const [key, value] of Object.entries(config)) {
    const property = TRAIN_CONFIG_PROPERTIES[key];
    if (!property) continue; // unknown keys are refused where they are read, with the list of valid ones
    if (!matches(property, value))
      return {
        kind: "error",
        message: `${source}: ${key} must be ${describe(property)}; got ${JSON.stringify(value)}`,
      };
  }
  const group = checkGroupSize(config.group_size, `${source}: group_size`, "group_size: 4");
  if (group.kind === "error") return group;
  return checkAlgorithmOptions(config.algo_config, source);
}

/** A GRPO group of one completion has no advantage to learn from; the schema's bound (1) is the wire's. */
export function checkGroupSize(value: unknown, label: string, example: string): CheckResult {
  if (typeof value !== "number" || value >= 2) return { kind: "ok" };
  return {
    kind: "error",
    message: `${label} must be at least 2: GRPO-family advantages compare the completions of one prompt with each other, so a group of ${value} teaches nothing (e.g. ${example})`,
  };
}

/**
 * `algo_config` against the trainer's AlgorithmConfig: its keys, each value (type and range, from the schema), and
 * a group of at least two completions (num_generations is TRL's name for group_size). Rules between options (the
 * clip bounds' order, the cache within the budget) are the trainer's to check.
 */
export function checkAlgorithmOptions(algo: unknown, source: string): CheckResult {
  if (typeof algo !== "object" || algo === null) return { kind: "ok" };
  const unknown = Object.keys(algo).filter((k) => !ALGORITHM_OPTION_KEYS.includes(k));
  if (unknown.length)
    return {
      kind: "error",
      message: `${source}: unknown algorithm option${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; valid options: ${ALGORITHM_OPTION_KEYS.join(", ")} (see \`fim-rlvr algorithms\`)`,
    };
  for (const [key, value] of Object.entries(algo)) {
    const option = ALGORITHM_OPTIONS[key]!;
    if (!matches(option, value))
      return {
        kind: "error",
        message: `${source}: algorithm option ${key} must be ${describe(option)}; got ${JSON.stringify(value)}`,
      };
  }
  return checkGroupSize(
    (algo as Record<string, unknown>).num_generations,
    `${source}: num_generations`,
    "group_size 4, with num_generations left out",
  );
}
