"""The Algorithm interface and the maths the GRPO family shares, as pure tensor functions.

Shapes: B sequences (completions), T completion tokens (padded). `mask[B, T]` is true on the
tokens that count; padding, prompt tokens and masked-out samples are false and never reach a
loss or a metric (they are replaced by zeros with `torch.where` before any arithmetic, so even a
NaN or -inf log-prob under the mask cannot leak into the result).
A reward of NaN marks a sample that must not count (a timed-out or crashed check): it takes no
part in its group's statistics and gets advantage 0.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import Tensor

from . import sampling
from .config import AlgorithmConfig
from .groups import GroupIds, group_normalised_advantages

Metrics = dict[str, float]


def check_shapes(logp: Tensor, old_logp: Tensor, mask: Tensor, advantages: Tensor, ref_logp: Tensor | None) -> Tensor:
    """Validate the loss inputs and return the mask as bool [B, T]."""
    if logp.dim() != 2:
        raise ValueError(f"logp must be [B, T], got shape {tuple(logp.shape)}")
    for label, tensor in (("old_logp", old_logp), ("mask", mask), ("ref_logp", ref_logp)):
        if tensor is not None and tensor.shape != logp.shape:
            raise ValueError(f"{label} has shape {tuple(tensor.shape)}, logp has {tuple(logp.shape)}")
    if advantages.shape != logp.shape[:1]:
        raise ValueError(f"advantages must be [B] = [{logp.shape[0]}], got shape {tuple(advantages.shape)}")
    return mask.bool()


def check_weights(is_weights: Tensor | None, logp: Tensor) -> Tensor | None:
    """Validate the importance weights ([B, T] per token or [B, 1] per sequence) and detach them."""
    if is_weights is None:
        return None
    if is_weights.dim() != 2 or is_weights.shape[0] != logp.shape[0] or is_weights.shape[1] not in (1, logp.shape[1]):
        raise ValueError(
            f"is_weights must be [B, T] or [B, 1] with B, T = {tuple(logp.shape)}, got {tuple(is_weights.shape)}"
        )
    return is_weights.detach().to(logp.dtype)


def masked_log_ratio(logp: Tensor, other: Tensor, mask: Tensor) -> Tensor:
    """logp - other on unmasked tokens, 0 elsewhere (so exp gives ratio 1 there). [B, T]"""
    return torch.where(mask, logp - other.detach(), 0.0)


def clipped_surrogate(ratio: Tensor, advantages: Tensor, low: float, high: float) -> Tensor:
    """PPO's per-term loss -min(ρA, clip(ρ, 1 - low, 1 + high)A). ratio [B, T] or [B, 1]; advantages [B, 1]."""
    clipped = torch.clamp(ratio, 1.0 - low, 1.0 + high)  # same shape as ratio
    return -torch.minimum(ratio * advantages, clipped * advantages)


def k3_kl(logp: Tensor, ref_logp: Tensor, mask: Tensor) -> Tensor:
    """Schulman's k3 estimate of KL(π‖π_ref) per token: exp(ref - logp) - (ref - logp) - 1. [B, T]"""
    delta = torch.where(mask, ref_logp.detach() - logp, 0.0)  # [B, T]
    return torch.exp(delta) - delta - 1.0


def sequence_means(terms: Tensor, mask: Tensor) -> Tensor:
    """Mean of each sequence's unmasked terms (0 for a sequence with none). [B]"""
    counts = mask.sum(-1).clamp(min=1)  # [B]
    return torch.where(mask, terms, 0.0).sum(-1) / counts


def mean_over_sequences(per_sequence: Tensor, mask: Tensor, count: float | None = None) -> Tensor:
    """Mean of per-sequence values over the sequences that have at least one unmasked token (or their sum divided
    by `count`, the batch-wide number, when this is a micro-batch or one rank's share). scalar"""
    active = mask.any(-1)  # [B]
    total = torch.where(active, per_sequence, 0.0).sum()
    if count is not None:
        return total / _positive(count)
    return total / active.sum().clamp(min=1)


def _positive(count: float) -> float:
    """A normaliser that is 0 only when its numerator is too (no unmasked token anywhere): divide by 1 then."""
    return count if count > 0 else 1.0


@dataclass(frozen=True)
class Totals:
    """What an objective divides by, counted over the whole optimiser batch: every micro-batch and every rank
    (TRL's `num_items_in_batch`). On each of W ranks the counts are the global ones divided by W, because DDP
    averages the ranks' gradients: the sum of every rank's terms over the global count is what comes out."""

    sequences: float
    """Sequences with at least one unmasked token."""
    tokens: float
    """Unmasked tokens."""
    pairs: float = 0.0
    """dgpo: (better, worse) pairs within groups."""

    @staticmethod
    def of(mask: Tensor, pairs: float = 0.0) -> Totals:
        """The counts of one batch's mask [B, T]."""
        m = mask.bool()
        return Totals(float(m.any(-1).sum().item()), float(m.sum().item()), pairs)

    def per_rank(self, world: int) -> Totals:
        return Totals(self.sequences / world, self.tokens / world, self.pairs / world)

    def __add__(self, other: Totals) -> Totals:
        return Totals(self.sequences + other.sequences, self.tokens + other.tokens, self.pairs + other.pairs)


def masked_mean(values: Tensor, mask: Tensor) -> float:
    """Mean of `values` over the true entries of `mask` (0.0 when none), as a float for metrics."""
    count = int(mask.sum().item())
    if count == 0:
        return 0.0
    return float(torch.where(mask, values.detach().to(torch.float64), 0.0).sum().item() / count)


def ratio_metrics(ratio: Tensor, advantages: Tensor, mask: Tensor, low: float, high: float) -> Metrics:
    """Clip fractions and mean ratio, TRL's definitions: a term is clipped low when ρ < 1 - low and
    A < 0, high when ρ > 1 + high and A > 0 (exactly where the clip removes the gradient)."""
    clipped_low = (ratio < 1.0 - low) & (advantages < 0)  # [B, T] or [B, 1]
    clipped_high = (ratio > 1.0 + high) & (advantages > 0)
    return {
        "clip_fraction_low": masked_mean(clipped_low.float(), mask),
        "clip_fraction_high": masked_mean(clipped_high.float(), mask),
        "clip_fraction": masked_mean((clipped_low | clipped_high).float(), mask),
        "ratio_mean": masked_mean(ratio, mask),
    }


class Algorithm(ABC):
    """One objective of the GRPO family, configured by an AlgorithmConfig."""

    name: ClassVar[str]
    metrics_unit: ClassVar[str] = "tokens"
    """What the loss's clip metrics are averages over ("tokens", or "sequences" for GSPO): how the metrics of
    several micro-batches are combined."""

    def __init__(self, config: AlgorithmConfig) -> None:
        self.config = config

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config!r})"

    @property
    def needs_reference(self) -> bool:
        """Whether `loss` needs `ref_logp` (the reference model's log-probs): true when beta > 0."""
        return self.config.beta > 0

    def advantages(self, rewards: Tensor, group_ids: GroupIds) -> Tensor:
        """Per-sample advantages [B] from rewards [B] and group ids [B] (group-normalised by default)."""
        return group_normalised_advantages(rewards, group_ids)

    @abstractmethod
    def loss(
        self,
        logp: Tensor,
        old_logp: Tensor,
        mask: Tensor,
        advantages: Tensor,
        ref_logp: Tensor | None = None,
        group_ids: GroupIds | None = None,
        rewards: Tensor | None = None,
        is_weights: Tensor | None = None,
        totals: Totals | None = None,
    ) -> tuple[Tensor, Metrics]:
        """The scalar loss to minimise and its metrics (floats). `is_weights` ([B, T] or [B, 1], or None for
        none) multiply the policy term before the KL term is added: the truncated importance weights of
        rollouts sampled by vLLM (importance.py), applied where TRL's `_compute_loss` applies them. `totals`: the
        counts of the whole optimiser batch when this call sees part of it (a micro-batch, one rank's share), so
        that the parts' losses add up to the whole batch's; None: this call sees the whole batch."""

    def totals(self, mask: Tensor, group_ids: GroupIds | None = None, rewards: Tensor | None = None) -> Totals:
        """This batch's counts (summed over micro-batches and ranks by the optimiser)."""
        return Totals.of(mask)

    def reference_kl(self, logp: Tensor, ref_logp: Tensor | None, mask: Tensor) -> Tensor | None:
        """The k3 KL estimate per token [B, T] when beta > 0 (else None; no reference needed)."""
        if self.config.beta <= 0:
            return None
        if ref_logp is None:
            raise ValueError(
                f"{self.name} with beta={self.config.beta} needs ref_logp (the reference model's log-probs); "
                "pass it, or set beta to 0"
            )
        return k3_kl(logp, ref_logp, mask)

    # The loop's hooks for DAPO's sampling-side techniques; each is a no-op unless its option is on.

    def shape_rewards(self, rewards: Tensor, lengths: Tensor) -> Tensor:
        """Rewards [B] plus the overlong penalty for completion lengths [B] when overlong_shaping is on."""
        if not self.config.overlong_shaping:
            return rewards
        max_len, cache_len = self.config.max_completion_length, self.config.cache_len
        if max_len is None or cache_len is None:
            raise ValueError("overlong_shaping needs max_completion_length (the generation budget); set it")
        return sampling.shape_overlong(rewards, lengths, max_len, cache_len)

    def completion_mask(self, mask: Tensor, truncated: Tensor) -> Tensor:
        """mask [B, T] with truncated completions [B] dropped when mask_truncated_completions is on."""
        if not self.config.mask_truncated_completions:
            return mask
        return sampling.mask_truncated(mask, truncated)

    def informative_groups(self, rewards: Tensor, group_ids: GroupIds) -> Tensor:
        """Bool [B]: samples whose group carries a learning signal (all true unless dynamic_sampling)."""
        if not self.config.dynamic_sampling:
            return torch.ones(rewards.numel(), dtype=torch.bool, device=rewards.device)
        return sampling.informative(rewards, group_ids)
