"""A tiny instruct-style tokenizer and model built here (nothing downloaded): Qwen's FIM tokens, `<|im_start|>` /
`<|im_end|>`, a ChatML chat template with Qwen3's `enable_thinking` switch, optionally a BOS the tokenizer adds."""

from __future__ import annotations

from typing import Any

CHAT_TEMPLATE = (
    "{% if bos_token_in_template is defined %}{{ bos_token }}{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n{% endif %}{% endif %}"
)
"""ChatML, as Qwen2.5/Qwen3 instruct tokenizers write it (Qwen3's empty think block when thinking is off)."""

DEEPSEEK_TEMPLATE = (
    "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{{ bos_token }}"
    "{% for message in messages %}{% if message['role'] == 'user' %}{{ 'User: ' + message['content'] + '\n\n' }}"
    "{% elif message['role'] == 'assistant' %}{{ 'Assistant: ' + message['content'] + eos_token }}"
    "{% elif message['role'] == 'system' %}{{ message['content'] + '\n\n' }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)
"""DeepSeek's chat template (DeepSeek-Prover-V1.5's tokenizer, DeepSeek-LLM's): an answer is `'Assistant: ' + content`,
the generation prompt `Assistant:`, the space left for the model to write."""

TEXTS = [
    "import Mathlib\nopen Nat\n\ntheorem add_zero' (n : Nat) : n + 0 = n := by\n  simp\n",
    "theorem t (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by\n  omega\n```lean\nrfl\n```\n",
    "Fill in the hole marked <HOLE> in this Lean 4 proof. Answer with only the Lean code.\n",
]


def tokenizer(
    *, eos: str = "<|im_end|>", chat_template: str | None = CHAT_TEMPLATE, bos: bool = False, name: str = ""
) -> Any:
    """A byte-level BPE trained on TEXTS with the special tokens of a Qwen instruct tokenizer (and `<s>` as BOS,
    added to every encoding, when `bos`)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_end|>", "<|im_start|>", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"]
    specials += ["<|fim_pad|>", "<s>"]
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(TEXTS, trainer=trainer)
    if bos:
        core.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", core.token_to_id("<s>"))]
        )
    result = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token=eos,
        pad_token="<|fim_pad|>",
        bos_token="<s>" if bos else None,
        additional_special_tokens=[s for s in specials if s not in (eos, "<|fim_pad|>", "<s>")],
        clean_up_tokenization_spaces=False,
    )
    if chat_template is not None:
        result.chat_template = chat_template
    result.name_or_path = name
    return result


def model(tok: Any, seed: int = 0, attention_dropout: float = 0.0) -> Any:
    """A 2-layer Llama of width 32 sized to `tok`, seeded."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        attention_dropout=attention_dropout,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(seed)
    built = LlamaForCausalLM(config)
    built.generation_config.eos_token_id = tok.eos_token_id
    built.generation_config.pad_token_id = tok.pad_token_id
    return built
