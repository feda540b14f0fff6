"""Sampling that matches the log-probs the loss records.

The importance ratio exp(logp - old_logp) is only right if `old_logp` is the log-probability of the distribution
the tokens were drawn from. Three things break that silently with transformers' `generate`:
- the model's own generation_config.json (`repetition_penalty`, `no_repeat_ngram_size`, `suppress_tokens`, ...):
  `generate` fills every option the caller leaves unset from it (transformers 5), so a checkpoint's defaults would
  reshape the logits we sample from but not those we score. `sampling_config` sets every option that shapes the
  distribution, and `model_defaults_off` hides the model's own config for the duration of the call;
- dropout: sampling runs in eval mode, so the loss's forward pass must run without dropout too (`dropout_off`
  zeroes every dropout rate while the model stays in train mode: gradient checkpointing still works);
- stop strings that are not single tokens (the instruction style's closing fence): the completion is cut at the
  token that completes one (`cut_at_stop`), so no token after the answer is trained on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

_DROPOUT_ATTRIBUTES = ("attention_dropout", "attn_dropout", "dropout", "dropout_p", "hidden_dropout", "resid_dropout")
"""Float attributes some architectures read as a dropout rate in forward (Llama-family attention's
`attention_dropout`, used as `0.0 if not self.training else self.attention_dropout`)."""


def sampling_config(
    *,
    temperature: float,
    top_p: float,
    max_new_tokens: int,
    eos_token_ids: Sequence[int],
    pad_token_id: int,
    stop_strings: Sequence[str] = (),
) -> Any:
    """A GenerationConfig that samples from softmax(logits / temperature) restricted by top_p, and nothing else;
    temperature <= 0 is greedy."""
    from transformers import GenerationConfig

    greedy = temperature <= 0
    return GenerationConfig(
        do_sample=not greedy,
        temperature=1.0 if greedy else float(temperature),
        top_p=1.0 if greedy else float(top_p),
        top_k=0,
        min_p=None,
        typical_p=1.0,
        epsilon_cutoff=0.0,
        eta_cutoff=0.0,
        repetition_penalty=1.0,
        encoder_repetition_penalty=1.0,
        no_repeat_ngram_size=0,
        min_length=0,
        min_new_tokens=0,
        num_beams=1,
        num_return_sequences=1,
        max_new_tokens=int(max_new_tokens),
        eos_token_id=list(eos_token_ids),
        pad_token_id=int(pad_token_id),
        stop_strings=list(stop_strings) or None,
    )


def _bare_config(config: Any) -> Any:
    """A GenerationConfig that keeps only the model's special token ids."""
    from transformers import GenerationConfig

    keep = ("bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id")
    return GenerationConfig(**{k: getattr(config, k, None) for k in keep if getattr(config, k, None) is not None})


@contextmanager
def model_defaults_off(model: Any) -> Iterator[None]:
    """Every module's generation_config (the model's and a peft wrapper's) replaced by its special token ids alone,
    for the duration: nothing of the checkpoint's sampling defaults can reach `generate`."""
    from transformers import GenerationConfig

    saved: list[tuple[Any, Any]] = []
    for module in model.modules():
        config = getattr(module, "generation_config", None)
        if isinstance(config, GenerationConfig):
            saved.append((module, config))
            module.generation_config = _bare_config(config)
    try:
        yield
    finally:
        for module, config in saved:
            module.generation_config = config


@contextmanager
def dropout_off(model: Any) -> Iterator[None]:
    """Every dropout rate of `model` set to 0 for the duration, its training mode unchanged (so the loss's forward
    pass computes the log-probs sampling used, with gradient checkpointing still on when configured)."""
    modules: list[tuple[torch.nn.modules.dropout._DropoutNd, float]] = []
    attributes: list[tuple[Any, str, float]] = []
    for module in model.modules():
        if isinstance(module, torch.nn.modules.dropout._DropoutNd):
            modules.append((module, module.p))
            module.p = 0.0
        for name in _DROPOUT_ATTRIBUTES:
            value = module.__dict__.get(name)
            if isinstance(value, float) and value > 0:
                attributes.append((module, name, value))
                setattr(module, name, 0.0)
    try:
        yield
    finally:
        for dropout, p in modules:
            dropout.p = p
        for owner, name, value in attributes:
            setattr(owner, name, value)


def multi_token_stops(tokenizer: Any, stop_strings: Sequence[str]) -> tuple[str, ...]:
    """The stop strings that are not one special token (those end generation by id already)."""
    special = set(getattr(tokenizer, "all_special_tokens", []) or [])
    return tuple(s for s in stop_strings if s and s not in special)


def cut_at_stop(
    ids: Sequence[int], tokenizer: Any, stop_ids: Sequence[int], stop_strings: Sequence[str]
) -> tuple[list[int], bool]:
    """(the completion up to and including the token that ends it, whether something ended it): the first stop id,
    or the first token whose decoded prefix holds a stop string, whichever comes first."""
    ids = list(ids)
    stops = set(stop_ids)
    end = next((i + 1 for i, token in enumerate(ids) if token in stops), None)
    limit = end if end is not None else len(ids)
    if stop_strings:
        text = tokenizer.decode(ids[:limit], skip_special_tokens=False)
        if any(s in text for s in stop_strings):
            low, high = 1, limit  # the shortest prefix whose text holds a stop string (binary search: O(log T) decodes)
            while low < high:
                mid = (low + high) // 2
                prefix = tokenizer.decode(ids[:mid], skip_special_tokens=False)
                if any(s in prefix for s in stop_strings):
                    high = mid
                else:
                    low = mid + 1
            end = low
    if end is None:
        return ids, False
    return ids[:end], True
