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


def mean_over_sequences(per_sequence: Tensor, mask: Tensor) -> Tensor:
    """Mean of per-sequence values over the sequences that have at least one unmasked token. scalar"""
    active = mask.any(-1)  # [B]
    count = active.sum().clamp(min=1)
    return torch.where(active, per_sequence, 0.0).sum() / count


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
    ) -> tuple[Tensor, Metrics]:
        """The scalar loss to minimise and its metrics (floats). `is_weights` ([B, T] or [B, 1], or None for
        none) multiply the policy term before the KL term is added: the truncated importance weights of
        rollouts sampled by vLLM (importance.py), applied where TRL's `_compute_loss` applies them."""

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
