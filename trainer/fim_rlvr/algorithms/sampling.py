"""DAPO's sampling-side techniques (arXiv 2503.14476) as pure functions the training loop calls.

- Dynamic sampling: a group whose rewards are all equal has all-zero advantages and adds nothing
  but noise and cost to the step, so the loop over-samples, drops such groups (`informative`,
  `is_informative`) and refills the batch from the next round of generation (`refill`).
- Overlong reward shaping (`overlong_penalty`, `shape_overlong`): a length penalty that is 0 up to
  L_max - L_cache tokens, falls linearly to -1 at L_max, and is -1 beyond.
- Overlong filtering (`mask_truncated`): completions cut off by the budget leave the loss.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import torch
from torch import Tensor

from .groups import GroupIds, group_statistics

G = TypeVar("G")


def informative(rewards: Tensor, group_ids: GroupIds) -> Tensor:
    """Bool [B]: true for samples whose group has at least two valid (non-NaN) rewards that differ."""
    _, std, _ = group_statistics(rewards, group_ids)  # [B]; NaN for groups of fewer than two
    return std > 0  # NaN > 0 is false


def is_informative(rewards: Sequence[float]) -> bool:
    """Whether one group's rewards carry a learning signal (two valid rewards that differ)."""
    valid = [r for r in rewards if not math.isnan(r)]
    return len(valid) >= 2 and any(r != valid[0] for r in valid)


@dataclass(frozen=True)
class Refill(Generic[G]):
    """The batch after one round of dynamic sampling."""

    batch: tuple[G, ...]
    """The informative groups kept so far, oldest first, at most `target` of them."""
    dropped: int
    """Groups of this round dropped because their rewards were all equal (or fewer than two valid)."""
    surplus: int
    """Informative groups of this round left over once the batch was full."""
    missing: int
    """How many more informative groups the batch needs (0 when full)."""

    @property
    def full(self) -> bool:
        return self.missing == 0


def refill(
    kept: Sequence[G],
    fresh: Sequence[G],
    rewards_of: Callable[[G], Sequence[float]],
    target: int,
) -> Refill[G]:
    """Add this round's informative `fresh` groups to those `kept` from earlier rounds, up to `target`.

    The loop calls this after each generation round and stops when `full` (or after
    max_sampling_rounds, then training on the partial batch).
    """
    batch = list(kept[:target])
    dropped = surplus = 0
    for group in fresh:
        if not is_informative(rewards_of(group)):
            dropped += 1
        elif len(batch) < target:
            batch.append(group)
        else:
            surplus += 1
    return Refill(batch=tuple(batch), dropped=dropped, surplus=surplus, missing=target - len(batch))


def overlong_penalty(lengths: Tensor, max_len: int, cache_len: int) -> Tensor:
    """DAPO's R_length per completion length [B]: 0 when |y| <= L_max - L_cache,
    ((L_max - L_cache) - |y|) / L_cache up to L_max, -1 beyond. float [B]"""
    if cache_len < 1 or cache_len > max_len:
        raise ValueError(f"overlong cache length must be in 1..{max_len} (max_len), got {cache_len}")
    lengths = lengths.reshape(-1).to(torch.get_default_dtype())  # [B]
    start = float(max_len - cache_len)
    linear = (start - lengths) / cache_len  # [B]
    penalty = torch.where(lengths <= start, torch.zeros_like(lengths), linear)  # [B]
    return torch.where(lengths > max_len, torch.full_like(lengths, -1.0), penalty)


def shape_overlong(rewards: Tensor, lengths: Tensor, max_len: int, cache_len: int) -> Tensor:
    """rewards [B] + overlong_penalty(lengths) [B] (a NaN reward stays NaN)."""
    penalty = overlong_penalty(lengths, max_len, cache_len).to(rewards.device)
    return rewards.reshape(-1) + penalty.to(rewards.dtype if rewards.is_floating_point() else penalty.dtype)


def mask_truncated(mask: Tensor, truncated: Tensor) -> Tensor:
    """mask [B, T] with the rows of truncated completions (truncated [B], bool) zeroed; same dtype."""
    keep = ~truncated.reshape(-1, 1).bool().to(mask.device)  # [B, 1]
    return (mask.bool() & keep).to(mask.dtype)
