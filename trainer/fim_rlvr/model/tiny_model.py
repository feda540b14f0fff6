"""The embedded default model: built locally from the workspace, nothing downloaded.

A byte-level BPE tokenizer (2,000 tokens) trained with `tokenizers` on the workspace's Lean text, carrying the
Qwen FIM special tokens so prompts.py picks the FIM convention, and a ~1M-parameter Llama-shaped model built from
a config with seeded initial weights. Small enough to learn lean-env's holes in seconds of SFT on 2 CPU cores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

EOS = "<|endoftext|>"
PAD = "<|fim_pad|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_SUFFIX = "<|fim_suffix|>"
FIM_MIDDLE = "<|fim_middle|>"
SPECIAL_TOKENS = [EOS, PAD, FIM_PREFIX, FIM_SUFFIX, FIM_MIDDLE]

VOCAB_SIZE = 2000
HIDDEN = 128
LAYERS = 4
HEAD_WIDTH = 32
INTERMEDIATE = 352
MAX_POSITIONS = 1024


def train_tokenizer(texts: Sequence[str], vocab_size: int = VOCAB_SIZE) -> Any:
    """A PreTrainedTokenizerFast with a byte-level BPE learnt on `texts` (deterministic for the same texts)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(list(texts), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token=EOS,
        pad_token=PAD,
        additional_special_tokens=[FIM_PREFIX, FIM_SUFFIX, FIM_MIDDLE],
        clean_up_tokenization_spaces=False,
    )
    tokenizer.padding_side = "left"
    return tokenizer


def build_model(tokenizer: Any, seed: int, width: int = HIDDEN, layers: int = LAYERS) -> Any:
    """A LlamaForCausalLM with seeded random weights, sized to the tokenizer: ~1M parameters at the default width
    and depth. Wider models keep the default's shape: a head per HEAD_WIDTH, an MLP INTERMEDIATE / HIDDEN as wide."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    heads = width // HEAD_WIDTH
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=width,
        intermediate_size=INTERMEDIATE * width // HIDDEN,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model
