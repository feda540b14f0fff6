/**
 * The `hf:PATH` backend's JSON lines (lean-bridge/models/pythonBackend.ts <-> trainer/fim_rlvr/model/generate_stdio.py)
 * against the schema's `x-modelMessages`: the requests the host builds validate, the answers it accepts are
 * exactly the declared ones, and the trainer's real process answers a load it cannot do and a line that is not a
 * request with declared messages (the Python side's own test is trainer/tests/test_generate_stdio.py). The real
 * process part is skipped, with the reason, where trainer/.venv is missing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { REPO } from "../helpers";
import { toolSkip } from "../toolSkip";
import { generateRequest, parseModelAnswer } from "../../lean-bridge/models/pythonBackend";
import type { ModelLoadRequest } from "../../lean-bridge/protocol/trainer";
import { tempDir } from "../tempDirs";

const schema = JSON.parse(
  readFileSync(join(REPO, "lean-bridge", "protocol", "trainer.schema.json"), "utf8"),
) as Record<string, unknown>;
const ajv = new Ajv2020({ strict: true, allErrors: true });
for (const keyword of [
  "x-messages",
  "x-serviceMessages",
  "x-modelMessages",
  "x-protocolVersion",
  "x-errorCodes",
  "x-algorithmOptions",
])
  ajv.addKeyword(keyword);
ajv.addSchema(schema, "trainer");

function valid(name: string, value: unknown): boolean {
  const check = ajv.getSchema(`trainer#/$defs/${name}`)!;
  return check(value) as boolean;
}

const PYTHON = join(REPO, "trainer", ".venv", "bin", "python");
const missing = existsSync(PYTHON) ? undefined : `${PYTHON} is missing (npm run test:setup creates it)`;
toolSkip("hf: model process protocol test", missing);

test("the host's requests are the schema's", () => {
  const request = generateRequest(
    "3",
    "<|fim_prefix|>by <|fim_suffix|><|fim_middle|>",
    4,
    {
      temperature: 0.4,
      topP: 0.95,
      maxNewTokens: 32,
      seed: 7,
      stop: ["\n\n"],
    },
    ["<|endoftext|>"],
  );
  assert.ok(valid("ModelGenerateRequest", request), JSON.stringify(ajv.errors));
  assert.deepEqual(request.stop, ["<|endoftext|>", "\n\n"]);
  const load: ModelLoadRequest = { type: "load", path: "/runs/run-1", threads: 2 };
  assert.ok(valid("ModelLoadRequest", load));
  assert.ok(!valid("ModelGenerateRequest", { ...request, top_p: 0.95 }), "the check itself can fail");
});

test("the host accepts exactly the declared answers", () => {
  const good = [
    { type: "loaded", engine: "transformers", device: "cpu", tokenizerDir: "/t" },
    { type: "load-failed", message: "no model", hint: "Pass a run folder." },
    {
      type: "result",
      id: "1",
      promptTokens: 9,
      samples: [{ text: "simp", completionTokens: 2, finish: "stop" }],
    },
    { type: "failed", id: "1", message: "out of memory" },
  ];
  for (const answer of good) {
    assert.ok(valid("ModelAnswer", answer), JSON.stringify(answer));
    assert.deepEqual(parseModelAnswer(JSON.stringify(answer)), answer);
  }
  const bad = [
    "Loading checkpoint shards: 100%",
    "[1, 2]",
    JSON.stringify({ type: "loaded", engine: "transformers", device: "cpu", tokenizer_dir: "/t" }),
    JSON.stringify({ type: "result", id: 1, promptTokens: 9, samples: [] }),
    JSON.stringify({ type: "progress", id: "1" }),
  ];
  for (const line of bad) {
    assert.equal(parseModelAnswer(line), null, line);
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    assert.ok(!valid("ModelAnswer", parsed), line);
  }
});

test("the trainer's model process answers with declared messages", { skip: missing }, () => {
  const empty = tempDir("fim-no-model-");
  const lines = [
    "{not json",
    JSON.stringify(generateRequest("1", "by ", 1, { temperature: 0, topP: 1, maxNewTokens: 4 }, [])),
    JSON.stringify({ type: "load", path: empty, threads: 1 } satisfies ModelLoadRequest),
  ];
  const run = spawnSync(PYTHON, ["-m", "fim_rlvr.model.generate_stdio"], {
    input: lines.join("\n") + "\n",
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: join(REPO, "trainer") },
    timeout: 300_000,
  });
  assert.equal(run.status, 0, run.stderr);
  const answers = run.stdout.trim().split("\n").map(parseModelAnswer);
  assert.deepEqual(
    answers.map((a) => a?.type),
    ["failed", "failed", "load-failed"],
    run.stdout,
  );
  for (const answer of answers) assert.ok(valid("ModelAnswer", answer), JSON.stringify(answer));
  assert.match(JSON.stringify(answers[2]), /holds no model/);
});
