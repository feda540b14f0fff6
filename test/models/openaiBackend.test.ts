/**
 * The OpenAI-compatible backend against a stub server on 127.0.0.1 (openaiStub.ts): the FIM prompt the trainer
 * writes, sent as a plain `prompt`; `n` honoured, or emulated with parallel requests (distinct seeds) when the
 * server returns one choice; streaming with interleaved choices; chat completions; llama.cpp's /infill found by a
 * probe; a server that refuses `suffix`; and one cause per failure (connection refused, 401, 404 model, 400
 * parameter, timeout, aborted).
 */
import { test } from "node:test";
import { getEventListeners } from "node:events";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import type {
  BackendOptions,
  GenerateResult,
  ModelBackend,
  PromptParts,
  SamplingSettings,
} from "../../lean-bridge/models/backend";
import { parseModelSpec } from "../../lean-bridge/models/backend";
import { openBackend } from "../../lean-bridge/models/open";
import { startStub, type StubOptions } from "./openaiStub";
import { writeTinyTokenizer } from "./tinyTokenizer";

const PARTS: PromptParts = {
  kind: "tactic",
  prefix: "theorem t (n : Nat) : n + 0 = n := by\n  ",
  suffix: "\n  done",
  indent: 2,
  goal: "n : Nat\n⊢ n + 0 = n",
};
const SAMPLING: SamplingSettings = { temperature: 0.6, topP: 0.95, maxNewTokens: 32, seed: 7 };

function options(
  extra: Partial<BackendOptions> = {},
  prompt: Partial<BackendOptions["prompt"]> = {},
): BackendOptions {
  return {
    prompt: { style: "fim", fimFamily: "qwen", showGoal: false, maxPromptTokens: 256, ...prompt },
    maxRetries: 0,
    ...extra,
  };
}

async function open(baseUrl: string, model: string, opts: BackendOptions): Promise<ModelBackend> {
  const spec = parseModelSpec(`openai:${baseUrl}#${model}`);
  assert.equal(spec.kind, "ok");
  const opened = await openBackend((spec as { spec: Parameters<typeof openBackend>[0] }).spec, opts);
  assert.equal(opened.kind, "ok", opened.kind === "error" ? opened.message : "");
  return (opened as { backend: ModelBackend }).backend;
}

async function withStub(
  stubOptions: StubOptions,
  body: (stub: Awaited<ReturnType<typeof startStub>>) => Promise<void>,
) {
  const stub = await startStub(stubOptions);
  try {
    await body(stub);
  } finally {
    await stub.close();
  }
}

function ok(result: GenerateResult) {
  assert.equal(result.kind, "ok", result.kind === "error" ? `${result.cause}: ${result.message}` : "");
  return result as Extract<GenerateResult, { kind: "ok" }>;
}

function failed(result: GenerateResult) {
  assert.equal(result.kind, "error");
  return result as Extract<GenerateResult, { kind: "error" }>;
}

for (const stream of [false, true]) {
  test(`FIM as a plain prompt, n honoured, candidates cleaned (stream ${stream})`, async () => {
    await withStub({ answer: (_p, i) => `simp [h${i}]\n  rfl<|endoftext|>junk` }, async (stub) => {
      const backend = await open(stub.baseUrl, "tiny", options({ stream }));
      const result = ok(await backend.generate(PARTS, 3, SAMPLING));
      assert.equal(stub.requests.length, 1);
      const body = stub.requests[0]!.body;
      assert.equal(body.prompt, `<|fim_prefix|>${PARTS.prefix}<|fim_suffix|>${PARTS.suffix}<|fim_middle|>`);
      assert.equal(result.prompt, body.prompt);
      assert.equal(body.n, 3);
      assert.equal(body.max_tokens, 32);
      assert.equal(body.temperature, 0.6);
      assert.equal(body.top_p, 0.95);
      assert.equal(body.seed, 7);
      assert.ok((body.stop as string[]).includes("<|fim_prefix|>"));
      assert.equal(body.stream, stream);
      assert.deepEqual(
        result.candidates.map((c) => c.text),
        ["simp [h0]\n  rfl", "simp [h1]\n  rfl", "simp [h2]\n  rfl"],
      );
      assert.equal(result.candidates[0]!.raw, "simp [h0]\n  rfl<|endoftext|>junk");
      assert.ok(result.candidates.every((c) => c.finishReason === "stop" && c.latencyMs >= 0));
      assert.equal(backend.identity.promptStyle, "qwen (approximate budget: no tokenizer)");
      assert.equal(backend.identity.spec, `openai:${stub.baseUrl}#tiny`);
    });
  });
}

test("a server that ignores n gets parallel requests with distinct seeds, and is remembered", async () => {
  await withStub({ ignoreN: true, answer: (_p, _i, body) => `exact h${String(body.seed)}` }, async (stub) => {
    const backend = await open(stub.baseUrl, "tiny", options({ stream: false }));
    const first = ok(await backend.generate(PARTS, 3, SAMPLING));
    assert.deepEqual(
      first.candidates.map((c) => c.text),
      ["exact h7", "exact h8", "exact h9"],
    );
    assert.equal(stub.requests.length, 3);
    const second = ok(await backend.generate(PARTS, 2, { ...SAMPLING, seed: 100 }));
    assert.equal(second.candidates.length, 2);
    assert.equal(stub.requests.length, 5, "the second call sends n=1 requests only");
    assert.ok(stub.requests.slice(3).every((r) => r.body.n === 1));
  });
});

test("chat models: /v1/chat/completions with the trainer's instruction; a fenced answer is cleaned", async () => {
  await withStub({ answer: () => "Here:\n```lean\nintro h\nexact h\n```\nDone." }, async (stub) => {
    const backend = await open(stub.baseUrl, "tiny", options({}, { style: "chat", showGoal: true }));
    const result = ok(await backend.generate(PARTS, 2, SAMPLING));
    assert.equal(stub.requests[0]!.path, "/v1/chat/completions");
    const messages = stub.requests[0]!.body.messages as { role: string; content: string }[];
    assert.equal(messages.length, 1);
    assert.equal(messages[0]!.role, "user");
    assert.ok(messages[0]!.content.startsWith("Fill in the hole marked <HOLE> in this Lean 4 proof."));
    assert.ok(messages[0]!.content.includes("  -- goal at the hole:\n  -- n : Nat\n"));
    assert.ok(
      !(stub.requests[0]!.body.stop as string[]).includes("```"),
      "the opening fence must not stop the answer",
    );
    // Not pre-filled: the answer's prose around the fence is not part of the candidate.
    assert.deepEqual(
      result.candidates.map((c) => c.text),
      ["intro h\n  exact h", "intro h\n  exact h"],
    );
  });
});

test("llama.cpp /infill found by a probe: prefix and suffix apart, n emulated", async () => {
  await withStub(
    { infill: true, refuseSuffix: true, answer: (prefix) => (prefix.endsWith("by\n  ") ? "omega" : "?") },
    async (stub) => {
      const backend = await open(
        stub.baseUrl,
        "tiny",
        options({ fimRoute: "probe" }, { fimFamily: undefined }),
      );
      assert.equal(backend.identity.promptStyle, "fim-native-infill (approximate budget: no tokenizer)");
      const before = stub.requests.length;
      const result = ok(await backend.generate(PARTS, 2, SAMPLING));
      const sent = stub.requests.slice(before);
      assert.equal(sent.length, 2);
      assert.ok(
        sent.every(
          (r) =>
            r.path === "/infill" &&
            r.body.input_prefix === PARTS.prefix &&
            r.body.input_suffix === PARTS.suffix,
        ),
      );
      assert.deepEqual(
        sent.map((r) => r.body.seed),
        [7, 8],
      );
      assert.deepEqual(
        result.candidates.map((c) => [c.text, c.completionTokens, c.promptTokens]),
        [
          ["omega", 3, 11],
          ["omega", 3, 11],
        ],
      );
    },
  );
});

test("a server that refuses `suffix`: the probe finds no native FIM; a known family falls back to the prompt", async () => {
  await withStub({ refuseSuffix: true }, async (stub) => {
    const spec = parseModelSpec(`openai:${stub.baseUrl}#tiny`);
    assert.equal(spec.kind, "ok");
    const refused = await openBackend(
      (spec as { spec: Parameters<typeof openBackend>[0] }).spec,
      options({ fimRoute: "probe" }, { fimFamily: undefined }),
    );
    assert.equal(refused.kind, "error");
    assert.equal(refused.kind === "error" && refused.cause, "prompt");
    assert.ok(stub.requests.some((r) => r.path === "/v1/completions" && r.body.suffix !== undefined));
    const backend = await open(stub.baseUrl, "tiny", options({ fimRoute: "probe" }));
    assert.equal(backend.identity.promptStyle, "qwen (approximate budget: no tokenizer)");
    ok(await backend.generate(PARTS, 1, SAMPLING));
    // And asked for directly, the refusal is one clear cause naming the parameter.
    const forced = await open(stub.baseUrl, "tiny", options({ fimRoute: "suffix" }));
    const error = failed(await forced.generate(PARTS, 1, SAMPLING));
    assert.equal(error.cause, "unsupported-parameter");
    assert.match(error.message, /suffix/);
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test("one cause per failure: connection refused, 401, 404 model, 400 parameter", async () => {
  const port = await closedPort();
  const down = await open(`http://127.0.0.1:${port}/v1`, "tiny", options());
  const refused = failed(await down.generate(PARTS, 1, SAMPLING));
  assert.equal(refused.cause, "connection");
  assert.match(refused.message, /Cannot reach http:\/\/127\.0\.0\.1:\d+\/v1 \(ECONNREFUSED\)/);
  assert.match(refused.hint, /Start the server/);

  await withStub({ apiKey: "right", refuseParam: "seed" }, async (stub) => {
    const wrongKey = await open(stub.baseUrl, "tiny", options({ apiKey: "wrong" }));
    const auth = failed(await wrongKey.generate(PARTS, 1, SAMPLING));
    assert.equal(auth.cause, "auth");
    assert.equal(stub.requests[0]!.auth, "Bearer wrong");
    assert.match(auth.hint, /OPENAI_API_KEY/);

    const wrongModel = await open(stub.baseUrl, "other", options({ apiKey: "right" }));
    const missing = failed(await wrongModel.generate(PARTS, 1, SAMPLING));
    assert.equal(missing.cause, "model-not-found");
    assert.match(missing.message, /"other"/);

    const backend = await open(stub.baseUrl, "tiny", options({ apiKey: "right" }));
    const param = failed(await backend.generate(PARTS, 1, SAMPLING));
    assert.equal(param.cause, "unsupported-parameter");
    assert.match(param.message, /parameter seed/);
    ok(await backend.generate(PARTS, 1, { ...SAMPLING, seed: undefined }));
  });
});

test("a prompt longer than the model's context: its own cause with the server's words, in vLLM's old and new bodies", async () => {
  for (const flatErrors of [false, true]) {
    await withStub({ contextTokens: 40, flatErrors }, async (stub) => {
      const backend = await open(stub.baseUrl, "tiny", options());
      const refused = failed(await backend.generate(PARTS, 1, SAMPLING));
      assert.equal(refused.cause, "context-length", `flat body: ${flatErrors}`);
      assert.match(refused.message, /This model's maximum context length is 40 tokens/);
      assert.match(refused.hint, /--max-prompt-tokens/);
      // The pre-0.10.1 body's words reach every other cause too.
      const other = await open(stub.baseUrl, "other", options());
      assert.match(failed(await other.generate(PARTS, 1, SAMPLING)).message, /does not exist/);
    });
  }
});

test("timeout and abort: a held request ends with its own cause, and the backend stays usable", async () => {
  await withStub({}, async (stub) => {
    stub.hold();
    const slow = await open(stub.baseUrl, "tiny", options({ timeoutMs: 200 }));
    const timedOut = failed(await slow.generate(PARTS, 1, SAMPLING));
    assert.equal(timedOut.cause, "timeout");

    const backend = await open(stub.baseUrl, "tiny", options());
    const controller = new AbortController();
    const pending = backend.generate(PARTS, 1, SAMPLING, controller.signal);
    await stub.held(2);
    controller.abort();
    const aborted = failed(await pending);
    assert.equal(aborted.cause, "aborted");
    stub.release();
    ok(await backend.generate(PARTS, 1, SAMPLING));
  });
});

test("model specs: the three forms parse; mistakes say what to write", () => {
  assert.deepEqual(parseModelSpec("openai:http://127.0.0.1:8000/v1/#Qwen/Qwen2.5-Coder-1.5B"), {
    kind: "ok",
    spec: { kind: "openai", baseUrl: "http://127.0.0.1:8000/v1", model: "Qwen/Qwen2.5-Coder-1.5B" },
  });
  assert.deepEqual(parseModelSpec("onnx:out/model"), {
    kind: "ok",
    spec: { kind: "onnx", dir: "out/model" },
  });
  assert.deepEqual(parseModelSpec("hf:runs/a/checkpoints/latest"), {
    kind: "ok",
    spec: { kind: "hf", path: "runs/a/checkpoints/latest" },
  });
  for (const bad of [
    "openai:http://x/v1",
    "openai:http://x/v1#",
    "openai:ftp://x#m",
    "openai:http://u:k@x/v1#m",
    "onnx:",
    "gguf:x",
    "model",
  ]) {
    const parsed = parseModelSpec(bad);
    assert.equal(parsed.kind, "error", bad);
    assert.match((parsed as { message: string }).message, /openai:URL#MODEL, onnx:DIR or hf:PATH/);
  }
});

test("with the model's tokenizer: the chat template rendered here, the fence pre-filled, BOS left to the server", async () => {
  const template =
    "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}" +
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
  const tokenizerDir = writeTinyTokenizer({
    specials: ["<s>", "<|im_end|>", "<|im_start|>"],
    eos: "<|im_end|>",
    bos: "<s>",
    chatTemplate: template,
  });
  await withStub({ answer: () => "intro h\nexact h\n```\nThat proves it." }, async (stub) => {
    const backend = await open(
      stub.baseUrl,
      "tiny",
      options({ tokenizerDir, stream: false }, { style: "auto" }),
    );
    assert.equal(
      backend.identity.promptStyle,
      "chat",
      "auto picks chat for a template that ends turns with eos",
    );
    const result = ok(await backend.generate(PARTS, 1, SAMPLING));
    assert.equal(stub.requests[0]!.path, "/v1/completions");
    const sent = String(stub.requests[0]!.body.prompt);
    assert.ok(result.prompt.startsWith("<s><|im_start|>user\nFill in the hole marked <HOLE>"), result.prompt);
    assert.ok(result.prompt.endsWith("<|im_end|>\n<|im_start|>assistant\n```lean\n"));
    assert.equal(sent, result.prompt.slice("<s>".length), "the server adds its own BOS");
    assert.deepEqual(stub.requests[0]!.body.stop, ["```", "<|im_end|>"]);
    assert.equal(result.candidates[0]!.text, "intro h\n  exact h");
    // Token counts from the server's usage (one choice), else from the model's own tokenizer.
    assert.equal(result.candidates[0]!.completionTokens, 5);
    assert.equal(result.candidates[0]!.promptTokens, 17);
  });
});

test("the openai client's retries leave no listener on the run's abort signal, however many calls fail", async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on("warning", onWarning);
  try {
    const port = await closedPort();
    // The client's own retries (maxRetries 2) each add an abort listener to the signal they are given.
    const down = await open(`http://127.0.0.1:${port}/v1`, "tiny", options({ maxRetries: 2 }));
    const run = new AbortController();
    for (let round = 0; round < 3; round++) {
      // Four calls in flight at a time, as eval's workers make them.
      const calls = Array.from({ length: 4 }, () => down.generate(PARTS, 1, SAMPLING, run.signal));
      for (const result of await Promise.all(calls)) assert.equal(failed(result).cause, "connection");
    }
    assert.equal(getEventListeners(run.signal, "abort").length, 0);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings, []);
  } finally {
    process.off("warning", onWarning);
  }
});
