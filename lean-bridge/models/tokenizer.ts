/**
 * The model's tokenizer as prompt building needs it: the vocabulary (which FIM family), BOS/EOS, the chat
 * template, token counts and token offsets (to fit the prompt budget as the trainer does). Loaded from a model
 * folder's tokenizer.json and tokenizer_config.json with @huggingface/tokenizers (pure JS, nothing downloaded);
 * chat templates are rendered with @huggingface/jinja, as transformers renders them.
 *
 * `approximateTokenizer` stands in when no tokenizer is at hand (an endpoint given without one): three UTF-16
 * units a token, no special tokens. Its prompts are not the trainer's, and the identity says so.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Template } from "@huggingface/jinja";
import { Tokenizer } from "@huggingface/tokenizers";

/** One chat message. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface PromptTokenizer {
  /** The folder or model name (transformers' `name_or_path`; the chat-model name rule reads it). */
  readonly name: string;
  /** Every token text: the vocabulary, added and special tokens. */
  readonly vocab: ReadonlySet<string>;
  readonly eosToken: string | null;
  /** The BOS token's text when encoding with special tokens puts it first (prompts.py `bos_text`), else "". */
  readonly bosText: string;
  /** The chat template(s) as the tokenizer config holds them; null when there is none. */
  readonly chatTemplate: string | null;
  /** Tokens in `text` (no special tokens added). */
  count(text: string): number;
  /** Ids of `text` (no special tokens added). */
  encode(text: string): number[];
  /** Text of ids (special tokens kept, so stops can be seen). */
  decode(ids: readonly number[]): string;
  /** Each token's [start, end) in `text`, in UTF-16 units (transformers' offset_mapping). */
  offsets(text: string): [number, number][];
  /** The chat template applied (transformers `apply_chat_template(..., tokenize=False)`). */
  applyChatTemplate(messages: ChatMessage[], addGenerationPrompt: boolean, enableThinking: boolean): string;
}

export type LoadTokenizerResult =
  { kind: "ok"; tokenizer: LoadedTokenizer } | { kind: "error"; message: string; hint: string };

type Json = Record<string, unknown>;

function readJson(path: string): Json | null {
  try {
    const value: unknown = JSON.parse(readFileSync(path, "utf8"));
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

/** A token field of tokenizer_config.json: a string or an AddedToken object `{ content }`. */
function tokenText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (value && typeof value === "object" && typeof (value as Json).content === "string")
    return (value as Json).content as string;
  return null;
}

/** The chat template: chat_template.jinja (transformers ≥ 4.43 saves it apart), else the config's field. */
function readChatTemplate(dir: string, config: Json): string | null {
  const file = join(dir, "chat_template.jinja");
  if (existsSync(file)) return readFileSync(file, "utf8");
  const template = config.chat_template;
  if (typeof template === "string") return template;
  if (Array.isArray(template)) {
    const named = template.filter((t): t is Json => !!t && typeof t === "object");
    const main = named.find((t) => t.name === "default") ?? named[0];
    return main && typeof main.template === "string" ? main.template : null;
  }
  return null;
}

/** GPT-2's byte ↔ printable character table, which byte-level BPE token strings are written in. */
function byteDecoder(): Map<string, number> {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const table = new Map<string, number>();
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const code = printable.includes(b) ? b : 256 + extra++;
    table.set(String.fromCodePoint(code), b);
  }
  return table;
}

const BYTE_DECODER = byteDecoder();

function isByteLevel(json: Json): boolean {
  const text = JSON.stringify([json.pre_tokenizer, json.decoder]);
  return text.includes('"ByteLevel"');
}

/** A tokenizer read from a model folder. */
export class LoadedTokenizer implements PromptTokenizer {
  readonly vocab: ReadonlySet<string>;
  readonly eosToken: string | null;
  readonly bosText: string;
  readonly chatTemplate: string | null;
  private readonly added: Set<string>;
  private readonly byteLevel: boolean;
  private readonly specialTokens: Record<string, unknown>;

  private constructor(
    readonly name: string,
    private readonly core: Tokenizer,
    json: Json,
    config: Json,
    chatTemplate: string | null,
  ) {
    const vocab = new Set(core.get_vocab(true).keys());
    this.added = new Set([...core.get_added_tokens_decoder().values()].map((t) => t.content));
    const special: Record<string, unknown> = {};
    for (const key of ["bos_token", "eos_token", "unk_token", "pad_token"]) {
      const text = tokenText(config[key]);
      special[key] = text;
      if (text) vocab.add(text);
    }
    const additional = Array.isArray(config.additional_special_tokens)
      ? config.additional_special_tokens
      : [];
    special.additional_special_tokens = additional.map(tokenText).filter((t): t is string => t !== null);
    for (const t of special.additional_special_tokens as string[]) vocab.add(t);
    this.specialTokens = special;
    this.vocab = vocab;
    this.eosToken = tokenText(config.eos_token);
    this.chatTemplate = chatTemplate;
    this.byteLevel = isByteLevel(json);
    const bos = tokenText(config.bos_token);
    const bosId = bos === null ? undefined : core.token_to_id(bos);
    const first = core.encode("x", { add_special_tokens: true }).ids[0];
    this.bosText = bos !== null && bosId !== undefined && first === bosId ? bos : "";
  }

  /** Reads DIR/tokenizer.json and DIR/tokenizer_config.json (chat_template.jinja when present). */
  static load(dir: string, name: string = dir): LoadTokenizerResult {
    const json = readJson(join(dir, "tokenizer.json"));
    if (!json) {
      return {
        kind: "error",
        message: `${join(dir, "tokenizer.json")} is missing or is not JSON.`,
        hint: "Point at a model folder saved by transformers (save_pretrained) or written by `fim-rlvr export-model`.",
      };
    }
    const config = readJson(join(dir, "tokenizer_config.json")) ?? {};
    try {
      return {
        kind: "ok",
        tokenizer: new LoadedTokenizer(
          name,
          new Tokenizer(json, config),
          json,
          config,
          readChatTemplate(dir, config),
        ),
      };
    } catch (error) {
      return {
        kind: "error",
        message: `${join(dir, "tokenizer.json")} could not be read as a tokenizer (${error instanceof Error ? error.message : String(error)}).`,
        hint: "Save the tokenizer again with a recent transformers, or point at another folder.",
      };
    }
  }

  encode(text: string): number[] {
    return this.core.encode(text, { add_special_tokens: false }).ids;
  }

  count(text: string): number {
    return this.encode(text).length;
  }

  decode(ids: readonly number[]): string {
    if (ids.length === 0) return ""; // the library refuses an empty list; a sample may end at once
    return this.core.decode([...ids], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  offsets(text: string): [number, number][] {
    const { ids, tokens } = this.core.encode(text, { add_special_tokens: false });
    return this.byteLevel ? byteLevelOffsets(text, tokens, this.added) : this.decodedOffsets(ids);
  }

  /** Offsets from incremental decoding, for tokenizers that are not byte-level (quadratic, but rare here). */
  private decodedOffsets(ids: number[]): [number, number][] {
    const out: [number, number][] = [];
    let start = 0;
    for (let i = 0; i < ids.length; i++) {
      const end = this.decode(ids.slice(0, i + 1)).length;
      out.push([Math.min(start, end), end]);
      start = end;
    }
    return out;
  }

  applyChatTemplate(messages: ChatMessage[], addGenerationPrompt: boolean, enableThinking: boolean): string {
    if (!this.chatTemplate) throw new Error(`${this.name} has no chat template`);
    return new Template(this.chatTemplate).render({
      ...this.specialTokens,
      messages,
      add_generation_prompt: addGenerationPrompt,
      enable_thinking: enableThinking,
    });
  }
}

/**
 * Offsets of byte-level BPE tokens: each token's bytes are found in the UTF-8 of `text`, and a token that covers
 * part of a character gets that whole character (as the Rust tokenizers library reports it).
 */
function byteLevelOffsets(text: string, tokens: string[], added: ReadonlySet<string>): [number, number][] {
  // UTF-16 index of the character each UTF-8 byte belongs to, and of the character after it.
  const charStart: number[] = [];
  const charEnd: number[] = [];
  let unit = 0;
  for (const char of text) {
    const bytes = Buffer.byteLength(char, "utf8");
    for (let b = 0; b < bytes; b++) {
      charStart.push(unit);
      charEnd.push(unit + char.length);
    }
    unit += char.length;
  }
  const out: [number, number][] = [];
  let at = 0;
  for (const token of tokens) {
    let length = 0;
    if (added.has(token)) length = Buffer.byteLength(token, "utf8");
    else for (const char of token) length += BYTE_DECODER.has(char) ? 1 : Buffer.byteLength(char, "utf8");
    const end = Math.min(at + length, charStart.length);
    out.push(
      length === 0 || at >= charStart.length
        ? [text.length, text.length]
        : [charStart[at]!, charEnd[end - 1]!],
    );
    at = end;
  }
  return out;
}

/** Three UTF-16 units a token, no special tokens and no chat template: for endpoints given no tokenizer. */
export function approximateTokenizer(name: string): PromptTokenizer {
  const UNITS = 3;
  return {
    name,
    vocab: new Set(),
    eosToken: null,
    bosText: "",
    chatTemplate: null,
    count: (text) => Math.ceil(text.length / UNITS),
    encode: () => [],
    decode: () => "",
    offsets: (text) => {
      const out: [number, number][] = [];
      for (let start = 0; start < text.length; start += UNITS)
        out.push([start, Math.min(start + UNITS, text.length)]);
      return out;
    },
    applyChatTemplate: () => {
      throw new Error("approximateTokenizer has no chat template");
    },
  };
}
