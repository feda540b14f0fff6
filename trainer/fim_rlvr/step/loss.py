"""The loss of one optimiser step: verdicts scored into rewards, advantages and a token mask (`score`), the batch as
tensors (`BatchView`), and the algorithm's loss over its micro-batches, each backward as it goes (`accumulate`,
nano-aha-moment's `compute_pg_loss` with the backward inside so a micro-batch's activations are freed at once).

Every loss is divided by the counts of the whole optimiser batch on every rank (`Totals`, TRL's `num_items_in_batch`):
the micro-batches' gradients add up to the gradient of one pass over the batch, and under DDP (which averages the
ranks' gradients) to the gradient of the whole batch of every rank. DAPO's token mean is then the mean over every
rank's tokens, not a mean of per-rank means.

The forward pass runs with every dropout rate at 0 (model.generation.dropout_off): the log-probs it computes are
those of the distribution the completions were sampled from, at equal weights. Only completion positions get logits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import torch

from ..algorithms.base import Algorithm, Totals
from ..algorithms.config import AlgorithmConfig
from ..algorithms.importance import importance_weights, mismatch_metrics
from ..core.outcomes import training_reward
from ..core.protocol import Verdict
from ..model.adapters import is_lora, reference_mode
from ..model.generation import dropout_off
from ..model.precision import compute
from ..model.rollout import Rollout, token_logprobs
from .batch import Group

_SUMMED_METRICS = ("dpo_pairs", "policy_loss", "dpo_loss", "informative_sequences")
"""Metrics that are parts of a sum over micro-batches (the others are averages)."""
_CLIP_KEYS = ("clip_fraction", "clip_fraction_low", "clip_fraction_high")
"""Averages over GSPO's informative sequences, when a part reports how many it had."""


def score(
    algorithm: Algorithm,
    verdicts: Sequence[Verdict],
    mask: torch.Tensor,
    group_ids: torch.Tensor,
    *,
    lengths: Sequence[int],
    truncated: Sequence[bool],
    timeout_reward: str,
    discounts: Sequence[float] | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """What the loss needs from the verdicts: rewards [B] (discounted for repair turns, shaped; NaN where masked),
    advantages [B] and the token mask [B, T] with masked samples (fim_rlvr.core.outcomes) and the algorithm's own
    filtering taken out. `discounts[B]`: repair_discount ** turn per sample (None: all 1). Pure: the masking bandit
    test runs the trainer's loss through it."""
    device = mask.device
    masked = torch.tensor([v.masked(timeout_reward) for v in verdicts], dtype=torch.bool)  # [B]
    rewards = torch.tensor(
        [training_reward(v.kind, v.cause, v.reward, timeout_reward) for v in verdicts], dtype=torch.float32
    )  # [B], NaN where masked
    if discounts is not None:
        rewards = rewards * torch.tensor(list(discounts), dtype=torch.float32)  # [B], NaN stays NaN
    rewards = algorithm.shape_rewards(rewards, torch.tensor(lengths, dtype=torch.float32))  # [B], NaN stays NaN
    advantages = algorithm.advantages(rewards, group_ids).to(device)  # [B]
    mask = mask * (~masked).to(mask.dtype).to(device).unsqueeze(1)  # [B, T]
    mask = algorithm.completion_mask(mask, torch.tensor(truncated, dtype=torch.bool, device=device))  # [B, T]
    return rewards, advantages, mask


@dataclass
class BatchView:
    """One optimiser step's completions as tensors over the whole (local) batch; micro-batches are row slices."""

    rollouts: list[Rollout]
    group_ids: torch.Tensor  # [B]
    group_sizes: list[int]
    rewards: torch.Tensor  # [B], NaN: masked
    advantages: torch.Tensor  # [B]
    mask: torch.Tensor  # [B, T] float: the tokens that count
    old_logp: torch.Tensor  # [B, T]
    is_weights: torch.Tensor | None  # [B, T] or [B, 1]
    tis_metrics: dict[str, float]
    prompt_ids: torch.Tensor | None = None  # [B]
    """Which prompt each sample answers (None: its group's): a group's first attempts share their task's prompt, and
    each repair turn has a prompt of its own (its last attempt and diagnostics), though it is scored in the group.
    The loss's `group_ids` (dgpo's preference pairs) are these."""

    @property
    def loss_group_ids(self) -> torch.Tensor:
        return self.prompt_ids if self.prompt_ids is not None else self.group_ids

    @staticmethod
    def build(
        algorithm: Algorithm,
        groups: Sequence[Group],
        device: torch.device,
        timeout_reward: str = "failure",
        repair_discount: float = 1.0,
    ) -> BatchView:
        rollouts = [r for g in groups for r in g.rollouts]
        verdicts = [v for g in groups for v in g.verdicts]
        lengths = [len(r.completion_ids) for r in rollouts]
        group_ids = torch.tensor([i for i, g in enumerate(groups) for _ in g.rollouts])  # [B]
        width = max(1, max(lengths, default=1))
        mask = (torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]).float().to(device)  # [B, T]
        rewards, advantages, mask = score(
            algorithm,
            verdicts,
            mask,
            group_ids,
            lengths=lengths,
            truncated=[r.truncated for r in rollouts],
            timeout_reward=timeout_reward,
            discounts=[repair_discount**turn for g in groups for turn in g.sample_turns()],
        )
        old_logp = pad_rows([r.old_logp for r in rollouts], width, device)  # [B, T]
        is_weights, tis_metrics = _importance_weights(algorithm.config, rollouts, old_logp, mask)
        sizes = [len(g.rollouts) for g in groups]
        turns = [turn for g in groups for turn in g.sample_turns()]
        pairs_of = zip(group_ids.tolist(), turns, strict=True)
        # [B]: a repair turn's own number lies past every group's
        prompt_ids = torch.tensor([group if turn == 0 else len(groups) + k for k, (group, turn) in enumerate(pairs_of)])
        return BatchView(
            rollouts, group_ids, sizes, rewards, advantages, mask, old_logp, is_weights, tis_metrics, prompt_ids
        )

    def totals(self, algorithm: Algorithm) -> Totals:
        return algorithm.totals(self.mask, self.loss_group_ids, self.rewards)

    def micro_batches(self, size: int | None, whole_groups: bool) -> Iterator[slice]:
        """Row slices of at most `size` completions (whole groups when `whole_groups`: at least one group)."""
        rows = len(self.rollouts)
        if size is None or size >= rows:
            yield slice(0, rows)
            return
        bounds = [0]
        for group_size in self.group_sizes:
            bounds.append(bounds[-1] + group_size)
        start = 0
        while start < rows:
            end = min(start + size, rows)
            if whole_groups:
                ends = [b for b in bounds if start < b <= end]
                end = ends[-1] if ends else next(b for b in bounds if b > start)
            yield slice(start, end)
            start = end


def pad_rows(rows: list[list[float]], width: int, device: torch.device) -> torch.Tensor:
    out = torch.zeros((len(rows), width), dtype=torch.float32)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=torch.float32)
    return out.to(device)


@dataclass(frozen=True)
class LossModels:
    """What the loss runs through: the model to train (DDP's wrapper under a launcher), the policy's own model (for
    the LoRA reference), and the frozen reference when the KL term has one."""

    train_model: Any
    policy_model: Any
    ref_model: Any
    pad_id: int
    temperature: float
    compute_dtype: torch.dtype | None = None
    """bf16 full fine-tuning: forward passes autocast to it over the float32 master weights (model/precision.py)."""


def accumulate(
    algorithm: Algorithm,
    models: LossModels,
    view: BatchView,
    totals: Totals,
    micro_batch_size: int | None,
    backward: Callable[[torch.Tensor], None],
    no_sync: Callable[[], Any],
) -> tuple[float, dict[str, float], bool]:
    """Forward and backward every micro-batch of `view`, each loss divided by `totals` (the whole batch's counts on
    every rank); (the summed loss, the combined metrics, whether any micro-batch had a token that counts)."""
    slices = [
        rows
        for rows in view.micro_batches(micro_batch_size, whole_groups=algorithm.name == "dgpo")
        if view.mask[rows].sum() > 0  # a micro-batch with no token that counts has no gradient to add
    ]
    loss_sum = 0.0
    parts: list[tuple[float, dict[str, float]]] = []
    for index, rows in enumerate(slices):
        last = index == len(slices) - 1  # the one backward that synchronises gradients across ranks
        rollouts = view.rollouts[rows]
        with dropout_off(models.train_model), compute(models.compute_dtype, models.policy_model):
            logp, _ = token_logprobs(
                models.train_model,
                [r.prompt_ids for r in rollouts],
                [r.completion_ids for r in rollouts],
                models.pad_id,
                models.temperature,
            )  # [b, t]
        width = logp.shape[1]
        mask = view.mask[rows, :width]  # [b, t]
        ref_logp = _reference_logp(algorithm, models, rollouts)
        weights = view.is_weights
        if weights is not None:
            weights = weights[rows, : width if weights.shape[1] != 1 else 1]
        loss, metrics = algorithm.loss(
            logp,
            view.old_logp[rows, :width],
            mask,
            view.advantages[rows],
            ref_logp=ref_logp,
            group_ids=view.loss_group_ids[rows],
            rewards=view.rewards[rows],
            is_weights=weights,
            totals=totals,
        )
        with nullcontext() if last else no_sync():
            backward(loss)
        loss_sum += float(loss.detach().item())
        unit = mask.bool().any(-1).sum() if algorithm.metrics_unit == "sequences" else mask.sum()
        parts.append((float(unit.item()), metrics))
    return loss_sum, combine_metrics(parts), bool(parts)


def _reference_logp(algorithm: Algorithm, models: LossModels, rollouts: list[Rollout]) -> torch.Tensor | None:
    if not algorithm.needs_reference:
        return None
    prompts, completions = [r.prompt_ids for r in rollouts], [r.completion_ids for r in rollouts]
    if models.ref_model is not None:
        with torch.no_grad():
            return token_logprobs(models.ref_model, prompts, completions, models.pad_id, models.temperature)[0]
    if is_lora(models.policy_model):
        with reference_mode(models.policy_model):  # LoRA: the reference is the base, the adapters switched off
            return token_logprobs(models.policy_model, prompts, completions, models.pad_id, models.temperature)[0]
    return None


def combine_metrics(parts: list[tuple[float, dict[str, float]]]) -> dict[str, float]:
    """Micro-batch metrics as one: sums stay sums, min/max stay min/max, averages weighted by the micro-batch's
    tokens (sequences for GSPO), dpo_accuracy by its pairs, GSPO's clip fractions by its informative sequences."""
    out: dict[str, float] = {}
    keys = {k for _, metrics in parts for k in metrics}
    for key in keys:
        values = [(w, m[key], _weight_of(key, m)) for w, m in parts if key in m]
        if key in _SUMMED_METRICS:
            out[key] = sum(v for _, v, _ in values)
        elif key.endswith("_min"):
            out[key] = min(v for _, v, _ in values)
        elif key.endswith("_max"):
            out[key] = max(v for _, v, _ in values)
        else:
            weights = [own if own is not None else w for w, _, own in values]
            total = sum(weights)
            out[key] = sum(w * v for w, (_, v, _) in zip(weights, values, strict=True)) / total if total else 0.0
    return out


def _weight_of(key: str, metrics: dict[str, float]) -> float | None:
    """The weight of an average that counts something other than the part's tokens (or sequences): dpo_accuracy its
    pairs, GSPO's clip fractions its informative sequences; None for the part's own unit."""
    if key == "dpo_accuracy":
        return metrics.get("dpo_pairs", 0.0)
    if key in _CLIP_KEYS and "informative_sequences" in metrics:
        return metrics["informative_sequences"]
    return None


def _importance_weights(
    config: AlgorithmConfig, rollouts: list[Rollout], old_logp: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor | None, dict[str, float]]:
    """vLLM rollouts: the truncated importance weights (when the correction is on) and the mismatch metrics.
    Rollouts from the trainer's own model (sampling_logp None) give (None, {}): weight exactly 1."""
    if all(r.sampling_logp is None for r in rollouts):
        return None, {}
    rows = [r.sampling_logp if r.sampling_logp is not None else [math.nan] * len(r.old_logp) for r in rollouts]
    sampling_logp = pad_rows(rows, old_logp.shape[1], old_logp.device)  # [B, T], NaN: no vLLM log-prob
    result = importance_weights(
        old_logp,
        sampling_logp,
        mask,
        config.vllm_importance_sampling_mode,
        config.vllm_importance_sampling_clip_min,
        config.vllm_importance_sampling_clip_max,
    )
    metrics = mismatch_metrics(old_logp, sampling_logp, mask, result)
    return (result.weights if config.vllm_importance_sampling_correction else None), metrics
