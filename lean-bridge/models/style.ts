/**
 * Prompt styles as the trainer resolves them (trainer/fim_rlvr/tasks/prompts.py `PromptStyle`, `FIM_CONVENTIONS`):
 * the FIM family's special tokens, the stop strings, and how a raw completion becomes a candidate.
 */
import { cleanCompletion, finalLeanBlock } from "./clean";
import type { FimFamily } from "./backend";

/** The special tokens of one FIM family, and the tokens that end a middle. */
export interface FimConvention {
  name: FimFamily;
  prefix: string;
  suffix: string;
  /** The token after which the model writes the middle ("" for suffix-first Codestral, which has none). */
  middle: string;
  stops: readonly string[];
  /** Codestral: `[SUFFIX]S[PREFIX]P`, the middle follows the prefix. */
  suffixFirst: boolean;
}

/** In the order the trainer tries them (the first whose tokens the vocabulary holds wins). */
export const FIM_CONVENTIONS: readonly FimConvention[] = [
  {
    name: "qwen",
    prefix: "<|fim_prefix|>",
    suffix: "<|fim_suffix|>",
    middle: "<|fim_middle|>",
    stops: ["<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|repo_name|>", "<|fim_prefix|>", "<|im_end|>"],
    suffixFirst: false,
  },
  {
    name: "starcoder",
    prefix: "<fim_prefix>",
    suffix: "<fim_suffix>",
    middle: "<fim_middle>",
    stops: ["<|endoftext|>", "<fim_pad>", "<file_sep>", "<fim_prefix>"],
    suffixFirst: false,
  },
  {
    name: "deepseek",
    prefix: "<｜fim▁begin｜>",
    suffix: "<｜fim▁hole｜>",
    middle: "<｜fim▁end｜>",
    stops: ["<｜end▁of▁sentence｜>", "<|EOT|>", "<｜fim▁begin｜>"],
    suffixFirst: false,
  },
  {
    name: "codestral",
    prefix: "[PREFIX]",
    suffix: "[SUFFIX]",
    middle: "",
    stops: ["</s>", "[SUFFIX]", "[PREFIX]"],
    suffixFirst: true,
  },
];

/** The convention's special tokens (the ones a vocabulary must hold for the family to apply). */
export function conventionTokens(convention: FimConvention): string[] {
  return [convention.prefix, convention.suffix, convention.middle].filter((t) => t !== "");
}

export const INSTRUCTION_STOPS: readonly string[] = ["```"];

/** How prompts are written for one model, and how completions become candidates. */
export interface PromptStyle {
  mode: "fim" | "instruction";
  /** The FIM family (mode fim without a template). */
  fim: FimConvention | null;
  /** Instruction prompts go through the model's chat template. */
  chat: boolean;
  /** Text that ends a completion (generation stops there; cleaning cuts there). */
  stopStrings: readonly string[];
  /** prompt_template: the whole prompt (fim, instruction) or the user's message (chat). */
  template: string | null;
  /** The model reasons first: no pre-filled fence, the candidate is the last ```lean block. */
  thinking: boolean;
  /** Text put before every prompt: the tokenizer's BOS when it adds one, else "". */
  bos: string;
}

/** The style's name, as recorded (prompts.py `PromptStyle.name`). */
export function styleName(style: PromptStyle): string {
  if (style.mode === "fim") return style.fim ? style.fim.name : "fim-template";
  const base = style.chat ? "chat" : "instruction";
  return style.thinking ? `${base}-thinking` : base;
}

/** The candidate the verifier checks for a raw completion (prompts.py `PromptStyle.candidate`). */
export function candidateText(style: PromptStyle, raw: string, indent: number): string {
  if (style.thinking) return finalLeanBlock(raw, indent);
  return cleanCompletion(raw, indent, style.stopStrings, style.mode === "fim");
}

/** A FIM style of a known family with no tokenizer at hand (tests, endpoints named with `fimFamily`). */
export function fimStyle(family: FimFamily, eos?: string): PromptStyle {
  const fim = FIM_CONVENTIONS.find((c) => c.name === family)!;
  const stops = eos && !fim.stops.includes(eos) ? [eos, ...fim.stops] : [...fim.stops];
  return { mode: "fim", fim, chat: false, stopStrings: stops, template: null, thinking: false, bos: "" };
}
