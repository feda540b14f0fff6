"""GSPO (Group Sequence Policy Optimization, arXiv 2507.18071): one clipped ratio per sequence.

    s_i = exp(mean over i's unmasked tokens t of (logp_i,t - old_logp_i,t))
    ℓ_i = -min(s_i A_i, clip(s_i, 1 - ε, 1 + ε_high) A_i)                ε 3e-4, ε_high 4e-4
    L   = mean over sequences of ℓ_i
with GRPO's group-normalised A and no KL term (if beta is set, β × i's mean k3 is added to ℓ_i). Clip fractions are
shares of the informative sequences (A ≠ 0), the ones whose gradient the clip can remove.
With vLLM rollouts ℓ_i is scaled by the mean of i's truncated importance weights (one weight per sequence
in the sequence modes), which is what TRL computes for importance_sampling_level="sequence".
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


class Gspo(Algorithm):
    name = "gspo"
    metrics_unit = "sequences"

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
        log_ratio = masked_log_ratio(logp, old_logp, m)  # [B, T]
        tokens = m.sum(-1, keepdim=True).clamp(min=1)  # [B, 1]
        s = torch.exp(log_ratio.sum(-1, keepdim=True) / tokens)  # [B, 1]
        per_sequence = clipped_surrogate(s, a, low, high).squeeze(1)  # [B]
        if w is not None:
            # TRL broadcasts the [B, 1] sequence loss against the weights ([B, T] or [B, 1]) and then averages
            # each sequence's tokens, so the sequence term is scaled by the mean weight of its tokens.
            per_sequence = per_sequence * sequence_means(w.expand_as(logp), m)  # [B]
        kl = self.reference_kl(logp, ref_logp, m)  # [B, T] or None
        if kl is not None:
            per_sequence = per_sequence + self.config.beta * sequence_means(kl, m)  # [B]
        active = m.any(-1, keepdim=True)  # [B, 1]: metrics count sequences, not tokens
        # A sequence with advantage 0 has no gradient to clip: clip fractions are over the informative ones, else a
        # batch of mostly solved (or mostly failed) groups hides that the clip removed most of the signal.
        informative = active & (a != 0)  # [B, 1]
        metrics = ratio_metrics(s, a, informative, low, high)
        metrics["ratio_mean"] = masked_mean(s, active)
        metrics["informative_sequences"] = float(informative.sum().item())
        if kl is not None:
            metrics["kl"] = masked_mean(kl, m)
        return mean_over_sequences(per_sequence, m, totals.sequences if totals else None), metrics
