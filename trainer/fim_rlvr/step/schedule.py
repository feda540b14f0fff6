"""The RL learning-rate schedule: a linear warm-up, then constant, linear or cosine decay to 0 (TRL's
`lr_scheduler_type` values and their shapes), as a factor of `learning_rate` per optimiser step.

Stateless on purpose: the factor is a function of the optimiser step's index, so a resumed run continues the
schedule exactly without a scheduler state to save.
"""

from __future__ import annotations

import math


def learning_rate_factor(update: int, total: int, warmup_ratio: float, kind: str) -> float:
    """The factor for optimiser step `update` (0-based) of `total`."""
    warmup = math.ceil(total * warmup_ratio)
    if update < warmup:
        return (update + 1) / (warmup + 1)
    if kind == "constant":
        return 1.0
    progress = (update - warmup) / max(1, total - warmup)
    if kind == "linear":
        return max(0.0, 1.0 - progress)
    if kind == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))
    raise ValueError(f"unknown lr_scheduler {kind!r}")
