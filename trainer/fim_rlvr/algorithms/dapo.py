"""DAPO (arXiv 2503.14476): decoupled clip and token-level averaging over the whole batch.

    ℓ_i,t = -min(ρ_i,t A_i, clip(ρ_i,t, 1 - ε_low, 1 + ε_high) A_i)    ε_low 0.2, ε_high 0.28
    L     = (sum of ℓ_i,t over every unmasked token of the batch) / (number of unmasked tokens)
with GRPO's group-normalised A and no KL term. Dynamic sampling, overlong reward shaping and
overlong filtering act on the sampling side: see sampling.py and the Algorithm hooks.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .base import Totals
from .grpo import TokenClipped


class Dapo(TokenClipped):
    name = "dapo"

    def aggregate(self, terms: Tensor, mask: Tensor, totals: Totals | None = None) -> Tensor:
        total = torch.where(mask, terms, 0.0).sum()
        if totals is not None:  # every rank's tokens (TRL: num_items_in_batch), not this part's alone
            return total / (totals.tokens if totals.tokens > 0 else 1.0)
        return total / mask.sum().clamp(min=1)
