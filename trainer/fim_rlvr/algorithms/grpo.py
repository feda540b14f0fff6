"""GRPO (DeepSeekMath, arXiv 2402.03300), and the token-level clipped objective its variants share.

A_i   = (r_i - mean_g(r)) / (std_g(r) + 1e-4)          std unbiased, as torch.std
ρ_i,t = exp(logp_i,t - old_logp_i,t)
ℓ_i,t = -min(ρ_i,t A_i, clip(ρ_i,t, 1 - ε, 1 + ε_high) A_i) [× w_i,t]  [+ β k3_i,t]
L     = mean over sequences i of (mean over i's unmasked tokens t of ℓ_i,t)
w_i,t: the truncated importance weight of vLLM rollouts (importance.py); absent otherwise.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .base import (
    Algorithm,
    Metrics,
    Totals,
    check_shapes,
    check_weights,
    clipped_surrogate,
    masked_log_ratio,
    masked_mean,
    mean_over_sequences,
    ratio_metrics,
    sequence_means,
)
from .groups import GroupIds


class TokenClipped(Algorithm):
    """The per-token clipped surrogate (+ optional k3 KL); subclasses choose how terms are averaged."""

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
        m = check_shapes(logp, old_logp, mask, advantages, ref_logp)  # [B, T] bool
        w = check_weights(is_weights, logp)  # [B, T], [B, 1] or None
        low, high = self.config.epsilon, self.config.clip_high
        a = advantages.detach().to(logp.dtype).unsqueeze(1)  # [B, 1]
        ratio = torch.exp(masked_log_ratio(logp, old_logp, m))  # [B, T]
        terms = clipped_surrogate(ratio, a, low, high)  # [B, T]
        if w is not None:
            terms = terms * w  # [B, T]: vLLM's truncated importance weights, before the KL term (as TRL)
        kl = self.reference_kl(logp, ref_logp, m)  # [B, T] or None
        if kl is not None:
            terms = terms + self.config.beta * kl  # [B, T]
        metrics = ratio_metrics(ratio, a, m, low, high)
        if kl is not None:
            metrics["kl"] = masked_mean(kl, m)
        return self.aggregate(terms, m, totals), metrics

    def aggregate(self, terms: Tensor, mask: Tensor, totals: Totals | None = None) -> Tensor:
        """GRPO: each sequence's mean over its unmasked tokens, then the mean over sequences. scalar"""
        return mean_over_sequences(sequence_means(terms, mask), mask, totals.sequences if totals else None)


class Grpo(TokenClipped):
    name = "grpo"
