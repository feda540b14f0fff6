/**
 * Prompts from holes, exactly as the trainer writes them (trainer/fim_rlvr/tasks/prompts.py, whose docstring explains
 * each style): raw fill-in-the-middle per model family, a chat conversation through the model's own template, or
 * an instruction with the hole marked `<HOLE>`. `auto` decides from the tokenizer as the trainer does, so a model
 * is prompted at evaluation and in the editor as it was in training. The parity test
 * (test/models/promptParity.test.ts) runs the Python on golden tasks and compares byte for byte.
 */
import type { PromptOptions, PromptParts, PromptStyleName } from "./backend";
import { fitPrefix } from "./promptContext";
import { pySplitlines } from "../text/pyText";
import {
  conventionTokens,
  FIM_CONVENTIONS,
  type FimConvention,
  INSTRUCTION_STOPS,
  type PromptStyle,
} from "./style";
import type { ChatMessage, PromptTokenizer } from "./tokenizer";

export const HOLE_MARK = "<HOLE>";
export const TEMPLATE_FIELDS = ["prefix", "suffix", "goal", "hole", "kind"] as const;
const PROMPT_STYLES: readonly PromptStyleName[] = ["auto", "fim", "chat", "instruction"];

export const DEFAULT_INSTRUCTION =
  "Fill in the hole marked {hole} in this Lean 4 proof. Answer with only the Lean code that " +
  "replaces {hole}, in one ```lean block.\n\n```lean\n{prefix}{hole}{suffix}\n```\n";
export const THINKING_INSTRUCTION =
  "Fill in the hole marked {hole} in this Lean 4 proof. Think it through first; then give the Lean code that " +
  "replaces {hole}, and only that code, in a final ```lean block.\n\n```lean\n{prefix}{hole}{suffix}\n```\n";
const CHAT_MODEL_NAME = /instruct|chat|prover|(^|[-_/])it($|[-_/])/i;

export type StyleResult = { kind: "ok"; style: PromptStyle } | { kind: "error"; message: string };

/** The FIM family whose tokens the tokenizer knows, if any. */
export function fimConvention(tokenizer: PromptTokenizer): FimConvention | null {
  return FIM_CONVENTIONS.find((c) => conventionTokens(c).every((t) => tokenizer.vocab.has(t))) ?? null;
}

/** Whether the model was tuned to answer conversations (prompts.py `is_chat_model`). */
export function isChatModel(tokenizer: PromptTokenizer, modelName?: string): boolean {
  const template = tokenizer.chatTemplate;
  if (!template) return false;
  const eos = tokenizer.eosToken;
  if (eos && (template.includes(eos) || template.includes("eos_token"))) return true;
  return CHAT_MODEL_NAME.test(modelName || tokenizer.name || "");
}

type TemplatePiece = { text: string } | { field: string };

/** A prompt_template read as Python's str.format reads it; an error message when it is not one. */
function parseTemplate(template: string): TemplatePiece[] | string {
  const pieces: TemplatePiece[] = [];
  let text = "";
  for (let i = 0; i < template.length; i++) {
    const char = template[i]!;
    if (char === "{" && template[i + 1] === "{") {
      text += "{";
      i++;
    } else if (char === "}" && template[i + 1] === "}") {
      text += "}";
      i++;
    } else if (char === "}") {
      return "Single '}' encountered in format string";
    } else if (char === "{") {
      const close = template.indexOf("}", i);
      if (close < 0) return "expected '}' before end of string";
      if (text) pieces.push({ text });
      text = "";
      pieces.push({ field: template.slice(i + 1, close) });
      i = close;
    } else {
      text += char;
    }
  }
  if (text) pieces.push({ text });
  return pieces;
}

/** Null when `template` uses only TEMPLATE_FIELDS by name; else the trainer's PromptError message. */
export function checkTemplate(template: string): string | null {
  const pieces = parseTemplate(template);
  if (typeof pieces === "string") {
    return `prompt_template is not a valid template (${pieces}); write {{ and }} for literal braces`;
  }
  const fields = pieces.flatMap((p) => ("field" in p ? [p.field] : []));
  const known: readonly string[] = TEMPLATE_FIELDS;
  const bad = [...new Set(fields.filter((f) => !known.includes(f)))].sort();
  if (bad.length === 0) return null;
  return (
    `prompt_template uses unknown field(s) ${bad.map((b) => `{${b}}`).join(", ")}; ` +
    `the fields are ${TEMPLATE_FIELDS.map((f) => `{${f}}`).join(", ")} (write {{ and }} for braces)`
  );
}

/** Values of the template fields. */
export type TemplateValues = Record<(typeof TEMPLATE_FIELDS)[number], string>;

function render(template: string, values: TemplateValues): string {
  const pieces = parseTemplate(template);
  if (typeof pieces === "string") throw new Error(`unchecked prompt_template: ${pieces}`);
  return pieces.map((p) => ("text" in p ? p.text : values[p.field as keyof typeof values])).join("");
}

/** The PromptStyle for a tokenizer under the prompt options (prompts.py `choose_style`). */
export function chooseStyle(
  tokenizer: PromptTokenizer,
  options: PromptOptions,
  modelName?: string,
): StyleResult {
  const requested = options.style;
  const thinking = options.thinking ?? false;
  const template = options.template ?? null;
  const fail = (message: string): StyleResult => ({ kind: "error", message });
  if (!PROMPT_STYLES.includes(requested)) {
    return fail(`prompt_style must be one of ${PROMPT_STYLES.join(", ")} (got '${String(requested)}')`);
  }
  if (template !== null) {
    const problem = checkTemplate(template);
    if (problem) return fail(problem);
  }
  const convention = fimConvention(tokenizer);
  const hasTemplate = !!tokenizer.chatTemplate;
  let mode: PromptStyleName = requested;
  if (mode === "auto") {
    if (convention !== null && !isChatModel(tokenizer, modelName) && !thinking) mode = "fim";
    else mode = hasTemplate ? "chat" : "instruction";
  }
  if (mode === "fim" && thinking) {
    return fail("prompt_thinking needs chat or instruction prompts: a FIM answer is the middle itself");
  }
  if (mode === "fim" && convention === null && template === null) {
    return fail(
      "prompt_style fim: this tokenizer has no FIM tokens of a known family (Qwen, StarCoder, DeepSeek-Coder, " +
        "Codestral); write the FIM layout in prompt_template (e.g. '<PRE>{prefix}<SUF>{suffix}<MID>'), or use " +
        "prompt_style chat or instruction",
    );
  }
  if (mode === "chat" && !hasTemplate) {
    return fail(
      "prompt_style chat: this tokenizer has no chat template; use prompt_style instruction or fim",
    );
  }
  const eos = tokenizer.eosToken;
  const bos = tokenizer.bosText;
  if (mode === "fim") {
    let stops = convention ? convention.stops.filter((s) => tokenizer.vocab.has(s)) : [];
    if (eos && !stops.includes(eos)) stops = [eos, ...stops];
    return {
      kind: "ok",
      style: {
        mode: "fim",
        fim: convention,
        chat: false,
        stopStrings: stops,
        template,
        thinking: false,
        bos,
      },
    };
  }
  const eosStops = eos ? [eos] : [];
  const stops = thinking ? eosStops : [...INSTRUCTION_STOPS, ...eosStops];
  return {
    kind: "ok",
    style: {
      mode: "instruction",
      fim: null,
      chat: mode === "chat",
      stopStrings: stops,
      template,
      thinking,
      bos,
    },
  };
}

/** The goal state as a Lean comment block, indented like the hole. */
export function goalComment(goal: string, indent: number): string {
  const pad = " ".repeat(indent);
  const lines = pySplitlines(goal)
    .map((line) => (line ? `${pad}-- ${line}` : `${pad}--`))
    .join("\n");
  return `${pad}-- goal at the hole:\n${lines}\n`;
}

/** Prefix (with `goalComment` above the hole's line) and suffix within `budget` tokens together (prompts.py `fit`). */
export function fit(
  tokenizer: PromptTokenizer,
  prefix: string,
  suffix: string,
  budget: number,
  statement?: string,
  goalComment = "",
): [string, string] {
  const suffixOffsets = tokenizer.offsets(suffix);
  const suffixBudget = Math.floor(budget / 4);
  if (suffixOffsets.length > suffixBudget) {
    suffix = suffixBudget > 0 ? suffix.slice(0, suffixOffsets[suffixBudget - 1]![1]) : "";
  }
  const used = Math.min(suffixOffsets.length, suffixBudget);
  const fitted = fitPrefix(
    prefix,
    statement,
    (text) => tokenizer.count(text),
    (text) => tokenizer.offsets(text),
    Math.max(budget - used, 1),
    goalComment,
  );
  return [fitted, suffix];
}

/** The fields of one hole's template: prefix (with the goal comment) and suffix fitted to the budget. */
export function promptFields(
  parts: PromptParts,
  tokenizer: PromptTokenizer,
  options: PromptOptions,
): TemplateValues {
  const showGoal = options.showGoal;
  const [prefix, suffix] = fit(
    tokenizer,
    (parts.header ?? "") + parts.prefix,
    parts.suffix,
    options.maxPromptTokens,
    parts.statement,
    showGoal && parts.goal ? goalComment(parts.goal, parts.indent) : "",
  );
  return {
    prefix,
    suffix,
    goal: showGoal && parts.goal ? parts.goal : "",
    hole: HOLE_MARK,
    kind: parts.kind,
  };
}

/** The instruction of an instruction style (the user's message of a chat prompt). */
export function instructionText(style: PromptStyle, values: TemplateValues): string {
  return render(style.template ?? (style.thinking ? THINKING_INSTRUCTION : DEFAULT_INSTRUCTION), values);
}

/** Stands for an assistant's answer when a chat template is asked how it writes one (`answerGap`). */
const ANSWER_PROBE = "FIMRLVRANSWER";

/**
 * What the chat template writes between its generation prompt and the words of an answer, when that is only
 * whitespace (prompts.py `answer_gap`): DeepSeek's template ends the generation prompt with `Assistant:` and writes an
 * answer as `'Assistant: ' + content`, so the pre-filled fence follows a space; ChatML needs nothing. "" when the
 * template writes an answer some other way or cannot render one.
 */
export function answerGap(tokenizer: PromptTokenizer, messages: ChatMessage[]): string {
  let prompt: string;
  let written: string;
  try {
    prompt = tokenizer.applyChatTemplate(messages, true, false);
    written = tokenizer.applyChatTemplate(
      [...messages, { role: "assistant", content: ANSWER_PROBE }],
      false,
      false,
    );
  } catch {
    return ""; // a template that refuses an assistant turn: nothing to learn from it
  }
  const at = written.indexOf(ANSWER_PROBE, prompt.length);
  if (!written.startsWith(prompt) || at < 0) return "";
  const gap = written.slice(prompt.length, at);
  return gap.length > 0 && gap.trim() === "" ? gap : "";
}

/** The prompt text for one hole (special tokens as text; tokenize without adding special tokens). */
export function buildPrompt(
  parts: PromptParts,
  style: PromptStyle,
  tokenizer: PromptTokenizer,
  options: PromptOptions,
): string {
  const values = promptFields(parts, tokenizer, options);
  const { prefix, suffix } = values;
  if (style.mode === "fim") {
    if (style.template !== null) return style.bos + render(style.template, values);
    const fim = style.fim!;
    if (fim.suffixFirst) return `${style.bos}${fim.suffix}${suffix}${fim.prefix}${prefix}`;
    return `${style.bos}${fim.prefix}${prefix}${fim.suffix}${suffix}${fim.middle}`;
  }
  const instruction = instructionText(style, values);
  if (style.chat) {
    const messages: ChatMessage[] = [{ role: "user", content: instruction }];
    let rendered = tokenizer.applyChatTemplate(messages, true, style.thinking);
    if (style.bos && !rendered.startsWith(style.bos)) rendered = style.bos + rendered;
    return style.thinking ? rendered : `${rendered}${answerGap(tokenizer, messages)}\`\`\`lean\n`;
  }
  if (style.template !== null || style.thinking) return style.bos + instruction;
  return `${style.bos}${instruction}\nLean code for ${HOLE_MARK}:\n\`\`\`lean\n`;
}
