/**
 * A model folder's tokenizer files written by hand for tests that need no Python: a byte-level BPE with one token
 * per byte (no merges), the given special tokens, and optionally a BOS the tokenizer adds and a chat template.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../tempDirs";

/** GPT-2's printable form of each byte, as byte-level BPE vocabularies write them. */
function byteChars(): string[] {
  const printable = new Set<number>();
  for (let b = 33; b <= 126; b++) printable.add(b);
  for (let b = 161; b <= 172; b++) printable.add(b);
  for (let b = 174; b <= 255; b++) printable.add(b);
  let extra = 0;
  return Array.from({ length: 256 }, (_, b) => String.fromCodePoint(printable.has(b) ? b : 256 + extra++));
}

export interface TinyTokenizerSpec {
  specials: string[];
  eos: string;
  bos?: string;
  chatTemplate?: string;
}

export function writeTinyTokenizer(spec: TinyTokenizerSpec): string {
  const dir = tempDir("fim-tiny-tokenizer-");
  mkdirSync(dir, { recursive: true });
  const specials = spec.specials.map((content, id) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const vocab: Record<string, number> = {};
  for (const s of specials) vocab[s.content] = s.id;
  byteChars().forEach((char, b) => (vocab[char] = specials.length + b));
  const bosId = spec.bos === undefined ? undefined : vocab[spec.bos];
  const single = [
    ...(bosId === undefined ? [] : [{ SpecialToken: { id: spec.bos, type_id: 0 } }]),
    { Sequence: { id: "A", type_id: 0 } },
  ];
  const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: specials,
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: {
      type: "TemplateProcessing",
      single,
      pair: [...single, { Sequence: { id: "B", type_id: 1 } }],
      special_tokens:
        bosId === undefined ? {} : { [spec.bos!]: { id: spec.bos, ids: [bosId], tokens: [spec.bos] } },
    },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: [],
    },
  };
  writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(tokenizer));
  const config: Record<string, unknown> = {
    tokenizer_class: "PreTrainedTokenizerFast",
    eos_token: spec.eos,
    bos_token: spec.bos ?? null,
    clean_up_tokenization_spaces: false,
    additional_special_tokens: spec.specials.filter((s) => s !== spec.eos && s !== spec.bos),
  };
  if (spec.chatTemplate) config.chat_template = spec.chatTemplate;
  writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify(config));
  return dir;
}
