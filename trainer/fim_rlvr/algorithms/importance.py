"""Truncated importance sampling (TIS) for rollouts sampled by another engine (vLLM), as TRL does.

vLLM's kernels and the trainer's forward pass give the same tokens slightly different log-probs, so
completions sampled by vLLM are slightly off-policy for the trainer. The trainer recomputes the old
log-probs with its own model at generation time (`old_logp`, the ratio's denominator, as always) and
weights each token's policy term by how much likelier the trainer finds it than vLLM did:

    Δ_i,t = old_logp_i,t - sampling_logp_i,t           (0 on masked tokens and where vLLM gave no log-prob)
    token modes:     w_i,t = exp(Δ_i,t)                  [B, T]
    sequence modes:  w_i   = exp(Σ_t Δ_i,t)              [B, 1]
    *_truncate:      w ← clamp(w, clip_min, clip_max)
    *_mask:          w ← 0 where w < clip_min or w > clip_max

This follows TRL 1.16, `GRPOTrainer._generate_and_score_completions` (trl/trainer/grpo_trainer.py, the
"importance sampling ratio when using vLLM" block), option for option: `vllm_importance_sampling_mode`,
`vllm_importance_sampling_clip_min`/`_clip_max` (defaults "sequence_mask", None, 3.0 in GRPOConfig). The
weights are constants (no gradient); `_compute_loss` multiplies the per-token policy loss by them before
the KL term is added, which is what every algorithm's `loss(..., is_weights=...)` does here.
The metrics carry TRL's names ("sampling/sampling_logp_difference/mean" ...) in snake case.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from .config import TIS_MODES

MISMATCH_KEYS: tuple[str, ...] = (
    "sampling_logp_difference_mean",
    "sampling_logp_difference_max",
    "importance_sampling_ratio_min",
    "importance_sampling_ratio_mean",
    "importance_sampling_ratio_max",
    "importance_sampling_clipped_fraction",
)
"""The metrics.jsonl keys `mismatch_metrics` adds on steps trained on vLLM rollouts."""


@dataclass(frozen=True)
class ImportanceWeights:
    """The per-token or per-sequence weights and what they did."""

    weights: Tensor
    """[B, T] (token modes) or [B, 1] (sequence modes); detached."""
    outside: Tensor
    """Bool, same shape: the raw ratio fell outside [clip_min, clip_max] (truncated or masked)."""


def importance_weights(
    old_logp: Tensor,
    sampling_logp: Tensor,
    mask: Tensor,
    mode: str = "sequence_mask",
    clip_min: float | None = None,
    clip_max: float | None = 3.0,
) -> ImportanceWeights:
    """TRL's vLLM importance-sampling ratio. old_logp, sampling_logp, mask [B, T]; NaN in sampling_logp
    means vLLM gave no log-prob for that token (its difference counts as 0, so its ratio is 1)."""
    if mode not in TIS_MODES:
        raise ValueError(f"unknown vllm_importance_sampling_mode {mode!r}; choose one of: {', '.join(TIS_MODES)}")
    m = mask.to(old_logp.dtype)  # [B, T]
    diff = torch.nan_to_num((old_logp.detach() - sampling_logp.to(old_logp.dtype)) * m, nan=0.0)  # [B, T]
    if mode.startswith("sequence"):
        diff = diff.sum(dim=-1, keepdim=True)  # [B, 1]
    ratio = torch.exp(diff)  # [B, T] or [B, 1]
    low = -math.inf if clip_min is None else clip_min
    high = math.inf if clip_max is None else clip_max
    outside = (ratio < low) | (ratio > high)
    if mode.endswith("truncate"):
        weights = ratio if clip_min is None and clip_max is None else torch.clamp(ratio, min=clip_min, max=clip_max)
    else:
        weights = ratio.masked_fill(outside, 0.0)
    return ImportanceWeights(weights, outside)


def mismatch_metrics(
    old_logp: Tensor, sampling_logp: Tensor, mask: Tensor, result: ImportanceWeights
) -> dict[str, float]:
    """How far vLLM and the trainer disagree, TRL's metrics (snake case) plus the share of weights clipped:

    sampling_logp_difference_mean/max   |old_logp - sampling_logp| over unmasked tokens vLLM scored
    importance_sampling_ratio_min/mean/max   the weights over unmasked tokens (token modes) or over the
                                        sequences with an unmasked token (sequence modes; TRL takes every row)
    importance_sampling_clipped_fraction   share of those tokens or sequences truncated or masked (ours)
    """
    m = mask.bool()  # [B, T]
    delta = (old_logp.detach() - sampling_logp.to(old_logp.dtype)).abs()  # [B, T]
    delta = delta[m & ~torch.isnan(delta)]
    if result.weights.shape[-1] == 1 and m.shape[-1] != 1:
        active = m.any(-1)  # [B]
        flat, outside = result.weights[active].flatten(), result.outside[active].flatten()
    else:
        flat, outside = result.weights[m], result.outside[m]

    def stat(values: Tensor, op: str) -> float:
        if values.numel() == 0:
            return 0.0
        return float(getattr(values.to(torch.float64), op)().item())

    return {
        "sampling_logp_difference_mean": stat(delta, "mean"),
        "sampling_logp_difference_max": stat(delta, "max"),
        "importance_sampling_ratio_min": stat(flat, "min"),
        "importance_sampling_ratio_mean": stat(flat, "mean"),
        "importance_sampling_ratio_max": stat(flat, "max"),
        "importance_sampling_clipped_fraction": stat(outside.float(), "mean"),
    }
