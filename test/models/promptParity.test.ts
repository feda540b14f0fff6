/**
 * Prompt parity: the TypeScript prompt building (lean-bridge/models/prompts.ts) and cleaning (clean.ts) against
 * the trainer's own Python (trainer/fim_rlvr/tasks/prompts.py, clean.py), byte for byte, on golden tasks and raw
 * completions, for every style: FIM per family (Qwen, StarCoder, DeepSeek with BOS, Codestral suffix-first),
 * chat through a ChatML template, a prover-style chat with BOS in its template, thinking, instruction, templates,
 * goals, and budgets small enough to exercise the prefix fitting. The tokenizers are byte-level BPEs trained by
 * the Python fixture (test/fixtures/models/prompt_parity.py) and loaded by both sides from the same folders, so a
 * change to either side's prompts fails here. Skipped, with the reason, where trainer/.venv is missing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers";
import { toolSkip } from "../toolSkip";
import type { PromptOptions, PromptParts, PromptStyleName } from "../../lean-bridge/models/backend";
import { buildPrompt, chooseStyle } from "../../lean-bridge/models/prompts";
import { promptHeader } from "../../lean-bridge/models/promptContext";
import { candidateText, styleName } from "../../lean-bridge/models/style";
import { LoadedTokenizer } from "../../lean-bridge/models/tokenizer";
import { tempDir } from "../tempDirs";

const PYTHON = join(REPO, "trainer", ".venv", "bin", "python");
const FIXTURE = join(REPO, "test", "fixtures", "models", "prompt_parity.py");
/** The trainer sources to compare with (default: this checkout's). */
const TRAINER = process.env.FIM_PARITY_TRAINER ?? join(REPO, "trainer");

function why(): string | undefined {
  if (!existsSync(PYTHON)) return `${PYTHON} is missing (npm run test:setup creates it)`;
  const probe = spawnSync(PYTHON, ["-c", "from fim_rlvr.tasks.prompts import choose_style"], {
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: TRAINER },
  });
  if (probe.status !== 0)
    return `the trainer in ${TRAINER} has no prompt styles (fim_rlvr.tasks.prompts.choose_style)`;
  return undefined;
}
const missing = why();
toolSkip("prompt parity test", missing);

const CHATML =
  "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}" +
  "{% if add_generation_prompt %}<|im_start|>assistant\n" +
  "{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n{% endif %}{% endif %}";
const PROVER =
  "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}### Instruction:\n{{ m['content'] }}\n" +
  "{% else %}### Response:\n{{ m['content'] }}{{ eos_token }}\n{% endif %}{% endfor %}" +
  "{% if add_generation_prompt %}### Response:\n{% endif %}";

/**
 * DeepSeek's chat template as DeepSeek-Prover-V1.5's tokenizer (DeepSeek-LLM's) writes it: an answer is
 * `'Assistant: ' + content`, the generation prompt `Assistant:` (no space: the model writes it).
 */
const DEEPSEEK_CHAT =
  "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{{ bos_token }}" +
  "{% for message in messages %}{% if message['role'] == 'user' %}{{ 'User: ' + message['content'] + '\n\n' }}" +
  "{% elif message['role'] == 'assistant' %}{{ 'Assistant: ' + message['content'] + eos_token }}" +
  "{% elif message['role'] == 'system' %}{{ message['content'] + '\n\n' }}{% endif %}{% endfor %}" +
  "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}";

const TOKENIZERS = [
  {
    name: "qwen-base",
    eos: "<|endoftext|>",
    specials: [
      "<|endoftext|>",
      "<|fim_prefix|>",
      "<|fim_suffix|>",
      "<|fim_middle|>",
      "<|fim_pad|>",
      "<|file_sep|>",
    ],
  },
  {
    name: "qwen-instruct",
    eos: "<|im_end|>",
    specials: [
      "<|endoftext|>",
      "<|im_end|>",
      "<|im_start|>",
      "<|fim_prefix|>",
      "<|fim_suffix|>",
      "<|fim_middle|>",
    ],
    chat_template: CHATML,
  },
  {
    name: "starcoder",
    eos: "<|endoftext|>",
    specials: ["<|endoftext|>", "<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<fim_pad>", "<file_sep>"],
  },
  {
    name: "deepseek",
    eos: "<｜end▁of▁sentence｜>",
    bos: "<｜begin▁of▁sentence｜>",
    specials: [
      "<｜begin▁of▁sentence｜>",
      "<｜end▁of▁sentence｜>",
      "<｜fim▁begin｜>",
      "<｜fim▁hole｜>",
      "<｜fim▁end｜>",
      "<|EOT|>",
    ],
  },
  { name: "codestral", eos: "</s>", bos: "<s>", specials: ["<s>", "</s>", "[PREFIX]", "[SUFFIX]"] },
  { name: "plain", eos: "<|endoftext|>", specials: ["<|endoftext|>"] },
  {
    name: "prover",
    eos: "<｜end▁of▁sentence｜>",
    bos: "<｜begin▁of▁sentence｜>",
    specials: ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"],
    chat_template: PROVER,
  },
  {
    name: "deepseek-prover",
    eos: "<｜end▁of▁sentence｜>",
    bos: "<｜begin▁of▁sentence｜>",
    specials: ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"],
    chat_template: DEEPSEEK_CHAT,
  },
];

interface Config {
  tokenizer: string;
  style: PromptStyleName;
  template?: string;
  thinking?: boolean;
  model_name?: string;
  show_goal: boolean;
  budget: number;
}

const CONFIGS: Config[] = [
  ...TOKENIZERS.flatMap((t) => [
    { tokenizer: t.name, style: "auto" as const, show_goal: true, budget: 256 },
    { tokenizer: t.name, style: "auto" as const, show_goal: false, budget: 40 },
    { tokenizer: t.name, style: "auto" as const, show_goal: true, budget: 12 },
    { tokenizer: t.name, style: "instruction" as const, show_goal: true, budget: 256 },
    { tokenizer: t.name, style: "fim" as const, show_goal: false, budget: 64 },
    { tokenizer: t.name, style: "chat" as const, show_goal: true, budget: 64 },
    { tokenizer: t.name, style: "instruction" as const, thinking: true, show_goal: true, budget: 64 },
  ]),
  { tokenizer: "qwen-instruct", style: "chat", thinking: true, show_goal: true, budget: 256 },
  // Budgets around the header-and-goal task's size: the goal in whole, then out.
  ...[24, 36, 48, 56, 72, 96].map((budget) => ({
    tokenizer: "qwen-base",
    style: "fim" as const,
    show_goal: true,
    budget,
  })),
  { tokenizer: "qwen-instruct", style: "fim", show_goal: true, budget: 256 },
  {
    tokenizer: "qwen-base",
    style: "auto",
    model_name: "Qwen2.5-Coder-1.5B-Instruct",
    show_goal: true,
    budget: 256,
  },
  { tokenizer: "prover", style: "auto", thinking: true, show_goal: true, budget: 256 },
  {
    tokenizer: "plain",
    style: "fim",
    template: "<PRE>{prefix}<SUF>{suffix}<MID>",
    show_goal: true,
    budget: 64,
  },
  {
    tokenizer: "qwen-instruct",
    style: "chat",
    template: "Prove ({kind}) {{braces}}:\n{prefix}{hole}{suffix}\nGoal: {goal}",
    show_goal: true,
    budget: 64,
  },
  {
    tokenizer: "plain",
    style: "instruction",
    template: "{prefix}{hole}{suffix} -- {kind}",
    show_goal: false,
    budget: 64,
  },
  {
    tokenizer: "plain",
    style: "instruction",
    template: "{prefix}{unknown}{oops}",
    show_goal: false,
    budget: 64,
  },
  { tokenizer: "plain", style: "instruction", template: "{prefix", show_goal: false, budget: 64 },
  { tokenizer: "plain", style: "instruction", template: "x } y", show_goal: false, budget: 64 },
  { tokenizer: "qwen-base", style: "fim", thinking: true, show_goal: false, budget: 64 },
];

const LONG_PREFIX =
  "import Mathlib\nimport Aesop\nopen Nat\n\n/-- A doc comment. -/\ntheorem add_zero' (n : Nat) : n + 0 = n := by\n  simp\n\n" +
  "@[simp]\nlemma t (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by\n  omega\n\n-- a comment\nopen Nat in\n" +
  "theorem 𝔸_comm (x y : 𝔸) (h : x = y)\n    (k : y = x) : x * y = y * x := by\n  intro h\n  have : x = x := rfl\n  ";

/** A task as the trainer reads it: the prompt parts, and the file's header as its context row gives it. */
type ParityTask = PromptParts & {
  statement?: string;
  imports?: string[];
  scope?: string[];
  variables?: string[];
};

const TASKS: ParityTask[] = [
  {
    kind: "tactic",
    prefix: "theorem add_zero' (n : Nat) : n + 0 = n := by\n  ",
    suffix: "",
    indent: 2,
    goal: "n : Nat\n⊢ n + 0 = n",
    statement: "theorem add_zero' (n : Nat) : n + 0 = n",
  },
  {
    kind: "block",
    prefix: LONG_PREFIX,
    suffix: "\n  exact mul_comm x y\n  done",
    indent: 2,
    goal: "x y : 𝔸\n\nh : x = y\n⊢ x * y = y * x",
    statement: "theorem 𝔸_comm (x y : 𝔸) (h : x = y)\n    (k : y = x) : x * y = y * x",
  },
  { kind: "proof", prefix: "example : 2 + 2 = 4 := by ", suffix: "", indent: 0 },
  {
    kind: "steps",
    prefix: LONG_PREFIX.replace("\n  intro h\n  have : x = x := rfl\n  ", "\n  "),
    suffix: "\n  rfl",
    indent: 2,
    goal: "⊢ True",
  },
  {
    kind: "tactic",
    prefix: "  intro h\n    ",
    suffix: " <;> simp {x}",
    indent: 4,
    goal: "h : a ≤ b\n⊢ a < b + 1",
  },
  {
    // A header from the context row, a goal of several hypotheses: small budgets keep the goal whole or drop it.
    kind: "tactic",
    prefix:
      "theorem y (a b : Nat) (hab : a < b) : a ≤ b := by\n  have h : a < b := hab\n  have k : a ≤ a := Nat.le_refl a\n  ",
    suffix: "\n  done",
    indent: 2,
    goal: "a b : Nat\nhab : a < b\nh : a < b\nk : a ≤ a\n⊢ a ≤ b",
    statement: "theorem y (a b : Nat) (hab : a < b) : a ≤ b",
    imports: ["Mathlib", "Aesop"],
    scope: ["namespace Ns", "section Fam", "open Nat"],
    variables: ["variable (n : Nat)"],
  },
  {
    kind: "proof",
    prefix: "theorem z : 𝔸 = 𝔸 := by\n  ",
    suffix: "",
    indent: 2,
    goal: "⊢ 𝔸 = 𝔸",
    statement: "theorem z : 𝔸 = 𝔸",
    scope: ["namespace 𝔸ns"],
  },
];

/** The prompt parts the TypeScript side builds a task's prompt from (evalTasks.ts: the header from the context). */
function partsOf(task: ParityTask): PromptParts {
  const { imports, scope, variables, ...parts } = task;
  return { ...parts, header: promptHeader(imports ?? [], scope ?? [], variables ?? []) };
}

const RAWS = [
  "simp",
  "  simp\n  rfl<|endoftext|>junk",
  "```lean\nintro h\n  exact h\n```\nmore text",
  "\n\n  omega\n",
  "<think>let me see</think>\nSo:\n```lean4\nsimp\n  ring\n```\n",
  "I think ```lean\nfirst\n```\nthen\n```lean\nsecond\n  line\n```",
  "rfl\n```\nexplanation",
  "\tsimp\r\n\trfl\n",
  "",
  "```lean\n    a\n      b\n  c\n```",
  "exact h<|im_end|>",
  "omega<｜end▁of▁sentence｜>x",
  "norm_num</s>",
  "simp [x]  \n   \n  ring   \u00a0",
];

const PROBES = [
  "theorem 𝔸_comm (x y : 𝔸) : x * y = y * x := by\n  simp",
  "<|fim_prefix|>a<|fim_suffix|>b ≤ c\r\n",
  "日本語 😀 done",
];

/** Python string offsets count code points; JavaScript's count UTF-16 units. */
function toUtf16(text: string, codePoints: number): number {
  return [...text].slice(0, codePoints).join("").length;
}

interface Answer {
  error?: string;
  style?: string;
  stops?: string[];
  bos?: string;
  prompts?: string[];
  candidates?: string[][];
}

test("prompts and candidates match the trainer's Python byte for byte", { skip: missing }, () => {
  const out = tempDir("fim-prompt-parity-");
  const request = { tokenizers: TOKENIZERS, configs: CONFIGS, tasks: TASKS, raws: RAWS, probes: PROBES };
  const run = spawnSync(PYTHON, [FIXTURE, out], {
    input: JSON.stringify(request),
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: TRAINER },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 300_000,
  });
  assert.equal(run.status, 0, run.stderr);
  const answer = JSON.parse(run.stdout) as {
    folders: Record<string, string>;
    answers: Answer[];
    probes: Record<string, { ids: number[]; offsets: [number, number][] }[]>;
  };
  const tokenizers = new Map(
    Object.entries(answer.folders).map(([name, folder]) => {
      const loaded = LoadedTokenizer.load(folder);
      assert.equal(loaded.kind, "ok", `${name}: ${loaded.kind === "error" ? loaded.message : ""}`);
      return [name, (loaded as { tokenizer: LoadedTokenizer }).tokenizer] as const;
    }),
  );

  for (const [name, probes] of Object.entries(answer.probes)) {
    const tokenizer = tokenizers.get(name)!;
    assert.equal(tokenizer.decode([]), "", "a sample that ends at once decodes to nothing");
    probes.forEach((expected, i) => {
      const text = PROBES[i]!;
      assert.deepEqual(tokenizer.encode(text), expected.ids, `${name} ids of probe ${i}`);
      const offsets = expected.offsets.map(([s, e]) => [toUtf16(text, s), toUtf16(text, e)]);
      assert.deepEqual(tokenizer.offsets(text), offsets, `${name} offsets of probe ${i}`);
    });
  }

  let compared = 0;
  CONFIGS.forEach((config, c) => {
    const expected = answer.answers[c]!;
    const label = `config ${c} ${JSON.stringify(config)}`;
    const tokenizer = tokenizers.get(config.tokenizer)!;
    const options: PromptOptions = {
      style: config.style,
      template: config.template,
      thinking: config.thinking,
      showGoal: config.show_goal,
      maxPromptTokens: config.budget,
    };
    const modelName = config.model_name ?? answer.folders[config.tokenizer];
    const chosen = chooseStyle(tokenizer, options, modelName);
    if (expected.error !== undefined) {
      assert.equal(chosen.kind, "error", `${label}: Python refused (${expected.error})`);
      assert.equal(chosen.kind === "error" ? chosen.message : "", expected.error, label);
      return;
    }
    assert.equal(chosen.kind, "ok", `${label}: ${chosen.kind === "error" ? chosen.message : ""}`);
    const style = (chosen as { style: Parameters<typeof styleName>[0] }).style;
    assert.equal(styleName(style), expected.style, label);
    assert.deepEqual(style.stopStrings, expected.stops, label);
    assert.equal(style.bos, expected.bos, label);
    TASKS.forEach((task, t) => {
      assert.equal(
        buildPrompt(partsOf(task), style, tokenizer, options),
        expected.prompts![t],
        `${label} task ${t}`,
      );
      compared++;
    });
    RAWS.forEach((raw, r) => {
      [0, 2, 4].forEach((indent, k) => {
        assert.equal(
          candidateText(style, raw, indent),
          expected.candidates![r]![k],
          `${label} raw ${r} indent ${indent}`,
        );
        compared++;
      });
    });
  });
  // The fixture must have exercised every style family, not answered errors for everything.
  const names = new Set(answer.answers.map((a) => a.style).filter(Boolean));
  for (const name of [
    "qwen",
    "starcoder",
    "deepseek",
    "codestral",
    "chat",
    "chat-thinking",
    "instruction",
    "instruction-thinking",
    "fim-template",
  ]) {
    assert.ok(names.has(name), `no configuration resolved to ${name}`);
  }
  assert.ok(compared > 1000, `only ${compared} comparisons`);
  // The fence is pre-filled where DeepSeek's template starts an answer: after "Assistant: ", as its answers are written.
  const deepseek = CONFIGS.findIndex((c) => c.tokenizer === "deepseek-prover" && c.style === "chat");
  for (const prompt of answer.answers[deepseek]!.prompts!)
    assert.ok(prompt.endsWith("\n\nAssistant: ```lean\n"), prompt);
  const chatml = CONFIGS.findIndex(
    (c) => c.tokenizer === "qwen-instruct" && c.style === "chat" && !c.thinking,
  );
  // ChatML with Qwen3's empty think block writes an answer without that block: no gap is read from it.
  for (const prompt of answer.answers[chatml]!.prompts!)
    assert.ok(prompt.endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n```lean\n"), prompt);
  assert.ok(readFileSync(join(answer.folders["deepseek"]!, "tokenizer.json"), "utf8").length > 0);
});
