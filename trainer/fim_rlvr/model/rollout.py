"""Rollouts: one RolloutBackend interface, and its transformers `generate` implementation.

A backend returns, per completion, the prompt and completion token ids, the raw text, whether it was cut by
max_new_tokens, and the log-probabilities of its tokens under the policy *at generation time* (the "old"
log-probs of the importance ratio). vllm_backend.py implements the same interface with vLLM; backends whose
weights live outside the trainer's model also take `sync_weights(model)` after each optimiser step.
`token_logprobs` is shared with the optimiser so old and new log-probs come from the same computation; both backends
compute the old log-probs through `old_logprobs`, in passes whose logits stay within `logprob_memory_mb`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from .generation import cut_at_stop, model_defaults_off, multi_token_stops, sampling_config
from .precision import compute

LOGPROB_BYTES_PER_LOGIT = 16
"""What one logit costs at the peak of a log-prob pass: the model's output (up to 4 bytes), its float32 copy, the
temperature-scaled copy and log_softmax's result (4 bytes each)."""


@dataclass(frozen=True)
class Rollout:
    """One sampled completion."""

    prompt_ids: list[int]
    """The prompt's tokens."""
    completion_ids: list[int]
    """The completion's tokens, up to and including the stop token when one was produced."""
    text: str
    """The completion decoded (special tokens kept, so cleaning can cut at them)."""
    old_logp: list[float]
    """log p(token) per completion token under the generating policy."""
    truncated: bool
    """True when max_new_tokens ended the completion before a stop token."""
    sampling_logp: list[float] | None = None
    """log p(token) per completion token as the sampling engine reported it, when that engine is not the
    trainer's model (vLLM; NaN where it gave none). The optimiser weights tokens by the truncated
    importance ratio exp(old_logp - sampling_logp); None for the transformers backend (no mismatch)."""


class RolloutBackend(Protocol):
    """Anything that samples completions for prompts."""

    @property
    def pad_id(self) -> int:
        """The tokenizer's padding id (the loss pads completions with it)."""
        ...

    def generate(
        self,
        prompts: Sequence[str],
        *,
        num_return: int,
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        seed: int,
    ) -> list[Rollout]:
        """`num_return` completions per prompt, grouped: prompt 0's first, then prompt 1's ...; temperature 0 is
        greedy."""
        ...

    def sync_weights(self, model: Any) -> None:
        """Make the next `generate` sample from `model`'s current weights (called after each optimiser step)."""
        ...


def left_pad(sequences: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """[N, L] ids left-padded to the longest, and the attention mask."""
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        if seq:
            ids[row, width - len(seq) :] = torch.tensor(list(seq), dtype=torch.long)
            mask[row, width - len(seq) :] = 1
    return ids, mask


def token_logprobs(
    model: Any,
    prompt_ids: Sequence[Sequence[int]],
    completion_ids: Sequence[Sequence[int]],
    pad_id: int,
    temperature: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """log p(completion token | everything before it) -> ([B, T] log-probs, [B, T] mask of real tokens).

    Prompts are left-padded and completions right-padded, so every completion starts at the same column;
    positions follow the attention mask as in `generate`. Logits are divided by the sampling temperature, the
    distribution the tokens were drawn from. Only the completion positions' logits are computed when the model
    takes `logits_to_keep` (the output head over the prompt would be wasted memory: [B, P, V])."""
    device = next(model.parameters()).device
    prompts, prompt_mask = left_pad(prompt_ids, pad_id)  # [B, P]
    width = max(1, max(len(c) for c in completion_ids))
    completions = torch.full((len(completion_ids), width), pad_id, dtype=torch.long)  # [B, T]
    completion_mask = torch.zeros((len(completion_ids), width), dtype=torch.float32)  # [B, T]
    for row, ids in enumerate(completion_ids):
        completions[row, : len(ids)] = torch.tensor(list(ids), dtype=torch.long)
        completion_mask[row, : len(ids)] = 1.0
    input_ids = torch.cat([prompts, completions], dim=1).to(device)  # [B, P+T]
    attention = torch.cat([prompt_mask, completion_mask.long()], dim=1).to(device)  # [B, P+T]
    positions = (attention.cumsum(-1) - 1).clamp(min=0)  # [B, P+T]
    keep = _keep_argument(model)
    extra = {keep: width + 1} if keep else {}
    logits = model(input_ids=input_ids, attention_mask=attention, position_ids=positions, **extra).logits
    # [B, T+1, V] with logits_to_keep, else [B, P+T, V]; the logits at t predict token t+1
    logits = logits[:, -(width + 1) : -1, :].float()  # [B, T, V]
    if temperature > 0:
        logits = logits / temperature
    logp = torch.log_softmax(logits, dim=-1).gather(-1, completions.to(device).unsqueeze(-1)).squeeze(-1)  # [B, T]
    return logp, completion_mask.to(device)


def _keep_argument(model: Any) -> str | None:
    """The name under which the model's forward takes "logits for the last N positions only", if it does
    (through a DDP or peft wrapper: the innermost model's forward decides)."""
    inner = getattr(model, "module", model)  # DDP
    get_base = getattr(inner, "get_base_model", None)  # peft
    inner = get_base() if callable(get_base) else inner
    cached = _KEEP_CACHE.get(type(inner))
    if cached is not None:
        return cached or None
    import inspect

    try:
        parameters = inspect.signature(inner.forward).parameters
    except (TypeError, ValueError):
        parameters = {}  # type: ignore[assignment]
    name = next((n for n in ("logits_to_keep", "num_logits_to_keep") if n in parameters), "")
    _KEEP_CACHE[type(inner)] = name
    return name or None


_KEEP_CACHE: dict[type, str] = {}


def vocabulary_size(model: Any) -> int:
    """The width of the model's output head (through DDP and peft wrappers)."""
    inner = getattr(model, "module", model)
    head = inner.get_output_embeddings() if callable(getattr(inner, "get_output_embeddings", None)) else None
    weight = getattr(head, "weight", None)
    if weight is not None:
        return int(weight.shape[0])
    return int(inner.config.vocab_size)


def logprob_chunks(widths: Sequence[int], vocab: int, memory_mb: float) -> list[slice]:
    """Consecutive row slices of sequences whose completions are `widths` long, each holding as many sequences as keep
    their logits ((longest + 1) positions x vocab x LOGPROB_BYTES_PER_LOGIT bytes each) within `memory_mb` MiB; one
    sequence at least, so a single long one may exceed a small bound."""
    budget = memory_mb * 2**20
    chunks: list[slice] = []
    start, longest = 0, 0
    for row, width in enumerate(widths):
        longest_with = max(longest, max(1, width))
        if row > start and (row - start + 1) * (longest_with + 1) * vocab * LOGPROB_BYTES_PER_LOGIT > budget:
            chunks.append(slice(start, row))
            start, longest_with = row, max(1, width)
        longest = longest_with
    if start < len(widths):
        chunks.append(slice(start, len(widths)))
    return chunks


@torch.no_grad()
def old_logprobs(
    model: Any,
    prompt_ids: Sequence[Sequence[int]],
    completion_ids: Sequence[Sequence[int]],
    pad_id: int,
    temperature: float,
    *,
    memory_mb: float,
    compute_dtype: torch.dtype | None = None,
) -> list[list[float]]:
    """log p(token) of each completion's tokens under `model` as it is now, in eval mode, one list per completion (its
    real tokens only), computed in passes of `logprob_chunks` (the logits of every completion at once would not fit a
    real vocabulary: 256 completions x 2,049 positions x 152k tokens is 80 GB in float32)."""
    was_training = model.training
    model.eval()
    try:
        out: list[list[float]] = []
        widths = [len(c) for c in completion_ids]
        for rows in logprob_chunks(widths, vocabulary_size(model), memory_mb):
            with compute(compute_dtype, model):
                logp, mask = token_logprobs(model, prompt_ids[rows], completion_ids[rows], pad_id, temperature)
            out.extend(logp[row][mask[row] > 0].tolist() for row in range(logp.shape[0]))
        return out
    finally:
        model.train(was_training)


class TransformersBackend:
    """Sampling with transformers `generate` (seeded), old log-probs (`old_logprobs`) right after."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        stop_token_ids: Sequence[int],
        batch_limit: int = 256,
        stop_strings: Sequence[str] = (),
        *,
        logprob_memory_mb: float = 4096,
        compute_dtype: torch.dtype | None = None,
    ) -> None:
        self.logprob_memory_mb = logprob_memory_mb
        self.compute_dtype = compute_dtype
        """bf16 autocast over float32 master weights (model/precision.py), or None."""
        self.model = model
        self.tokenizer = tokenizer
        self.stop_token_ids = list(dict.fromkeys(stop_token_ids))
        self.batch_limit = batch_limit
        self.stop_strings = multi_token_stops(tokenizer, stop_strings)
        """Stop strings that are not one token: generation stops at them and the completion is cut there."""

    @property
    def pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return int(pad if pad is not None else self.tokenizer.eos_token_id)

    def sync_weights(self, model: Any) -> None:
        """Nothing to do: this backend samples from the trainer's model itself."""

    @torch.no_grad()
    def generate(
        self,
        prompts: Sequence[str],
        *,
        num_return: int,
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        seed: int,
    ) -> list[Rollout]:
        torch.manual_seed(seed)
        prompt_ids = [self.tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
        expanded = [ids for ids in prompt_ids for _ in range(num_return)]
        rollouts: list[Rollout] = []
        was_training = self.model.training
        self.model.eval()
        try:
            for start in range(0, len(expanded), self.batch_limit):
                rollouts.extend(
                    self._generate_chunk(expanded[start : start + self.batch_limit], max_new_tokens, temperature, top_p)
                )
        finally:
            self.model.train(was_training)
        return rollouts

    def _generate_chunk(
        self, prompt_ids: list[list[int]], max_new_tokens: int, temperature: float, top_p: float
    ) -> list[Rollout]:
        device = next(self.model.parameters()).device
        ids, mask = left_pad(prompt_ids, self.pad_id)
        config = sampling_config(
            temperature=temperature,
            top_p=top_p,
            max_new_tokens=max_new_tokens,
            eos_token_ids=self.stop_token_ids,
            pad_token_id=self.pad_id,
            stop_strings=self.stop_strings,
        )
        with model_defaults_off(self.model), compute(self.compute_dtype, self.model):
            output = self.model.generate(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                generation_config=config,
                **({"tokenizer": self.tokenizer} if self.stop_strings else {}),
            )
        new_tokens = output[:, ids.shape[1] :].tolist()  # [N, <=max_new_tokens]
        completions: list[list[int]] = []
        truncated: list[bool] = []
        for row in new_tokens:
            completion, stopped = cut_at_stop(row, self.tokenizer, self.stop_token_ids, self.stop_strings)
            completions.append(completion)
            truncated.append(not stopped)
        logps = old_logprobs(
            self.model,
            prompt_ids,
            completions,
            self.pad_id,
            max(temperature, 0.0) or 1.0,
            memory_mb=self.logprob_memory_mb,
            compute_dtype=self.compute_dtype,
        )
        texts = [self.tokenizer.decode(completion, skip_special_tokens=False) for completion in completions]
        return [Rollout(*row) for row in zip(prompt_ids, completions, texts, logps, truncated, strict=True)]
