"""Group statistics and group-relative advantages (pure functions).

`group_ids[B]` says which prompt each sample answers: a tensor of ints or any hashable labels
(task ids). A NaN reward marks a sample that must not count (a timed-out or crashed check): it
takes no part in its group's statistics and gets advantage 0.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeAlias

import torch
from torch import Tensor

STD_EPSILON = 1e-4
"""Added to the group standard deviation before dividing (GRPO's, and TRL's, constant)."""

GroupIds: TypeAlias = Tensor | Sequence[Hashable]


def group_index(group_ids: GroupIds, size: int) -> Tensor:
    """Dense group numbers 0..G-1 for `group_ids[B]` (a tensor of ints or any hashable labels)."""
    if isinstance(group_ids, Tensor):
        ids = group_ids.reshape(-1)
        if ids.numel() != size:
            raise ValueError(f"group_ids has {ids.numel()} entries for {size} rewards")
        index: Tensor = torch.unique(ids, return_inverse=True)[1]
        return index
    labels = list(group_ids)
    if len(labels) != size:
        raise ValueError(f"group_ids has {len(labels)} entries for {size} rewards")
    numbers: dict[Hashable, int] = {}
    return torch.tensor([numbers.setdefault(label, len(numbers)) for label in labels], dtype=torch.long)


def group_statistics(rewards: Tensor, group_ids: GroupIds) -> tuple[Tensor, Tensor, Tensor]:
    """Per sample: its group's mean reward, unbiased std (`torch.std`'s) and valid member count.

    NaN rewards are left out of their group. The std of a group with fewer than two valid members
    is NaN (as `torch.std` of one value is).
    """
    rewards = rewards.reshape(-1).to(torch.get_default_dtype() if not rewards.is_floating_point() else rewards.dtype)
    index = group_index(group_ids, rewards.numel()).to(rewards.device)  # [B]
    groups = int(index.max().item()) + 1 if rewards.numel() else 0
    valid = ~torch.isnan(rewards)  # [B]
    zero = rewards.new_zeros(groups)  # [G]
    counts = zero.index_add(0, index, valid.to(rewards.dtype))  # [G]
    sums = zero.index_add(0, index, torch.where(valid, rewards, 0.0))  # [G]
    means = sums / counts  # [G]
    deviations = torch.where(valid, rewards - means[index], 0.0)  # [B]
    squares = zero.index_add(0, index, deviations * deviations)  # [G]
    stds = torch.where(counts > 1, (squares / (counts - 1).clamp(min=1)).sqrt(), float("nan"))  # [G]
    return means[index], stds[index], counts[index]


def group_normalised_advantages(rewards: Tensor, group_ids: GroupIds) -> Tensor:
    """GRPO's A = (r - mean_g) / (std_g + 1e-4); 0 for NaN rewards and groups of one."""
    rewards = rewards.reshape(-1)
    mean, std, _ = group_statistics(rewards, group_ids)  # [B] each
    advantages = (rewards - mean) / (std + STD_EPSILON)  # [B]
    return torch.nan_to_num(advantages, nan=0.0)


def group_centred_advantages(rewards: Tensor, group_ids: GroupIds) -> Tensor:
    """Dr. GRPO's A = r - mean_g (no std); 0 for NaN rewards."""
    rewards = rewards.reshape(-1)
    mean, _, _ = group_statistics(rewards, group_ids)  # [B]
    return torch.nan_to_num(rewards - mean, nan=0.0)
