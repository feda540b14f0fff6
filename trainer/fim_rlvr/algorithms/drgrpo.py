"""Dr. GRPO ("Understanding R1-Zero-Like Training", arXiv 2503.20783): GRPO without its two biases.

    A_i = r_i - mean_g(r)                                    no division by std
    L   = (sum over sequences and unmasked tokens of ℓ_i,t) / (max_completion_length × #sequences)
with ℓ_i,t GRPO's clipped token term. The constant denominator removes the 1/|o_i| length bias.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .base import Totals
from .groups import GroupIds, group_centred_advantages
from .grpo import TokenClipped


class DrGrpo(TokenClipped):
    name = "drgrpo"

    def advantages(self, rewards: Tensor, group_ids: GroupIds) -> Tensor:
        return group_centred_advantages(rewards, group_ids)

    def aggregate(self, terms: Tensor, mask: Tensor, totals: Totals | None = None) -> Tensor:
        budget = self.config.max_completion_length
        if budget is None:
            raise ValueError("drgrpo divides by max_completion_length; set it to the generation budget in tokens")
        total = torch.where(mask, terms, 0.0).sum()
        if totals is not None:
            return total / (budget * (totals.sequences if totals.sequences > 0 else 1.0))
        sequences = mask.any(-1).sum().clamp(min=1)  # sequences with at least one unmasked token
        return total / (budget * sequences)
