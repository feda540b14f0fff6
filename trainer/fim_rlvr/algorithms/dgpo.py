"""dgpo: GRPO plus a DPO term over the ordered pairs of each group. OUR definition: no paper owns
the name (other projects ship a "DGPO" with different maths).

    L     = L_grpo + dpo_coef × mean over pairs (w, l) of -log σ(dpo_beta × (m_w - m_l))
    m_i   = Σ_t logp_i,t - Σ_t ref_i,t      over i's unmasked tokens (ref = old_logp without a reference model)
    pairs = every (w, l) in the same group with r_w > r_l (both rewards valid, both sequences non-empty)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .base import Metrics
from .groups import GroupIds, group_index
from .grpo import Grpo


def dpo_pair_loss(
    logp: Tensor, ref_logp: Tensor, mask: Tensor, rewards: Tensor, group_ids: GroupIds, dpo_beta: float
) -> tuple[Tensor, Metrics]:
    """Mean DPO loss over the (better, worse) pairs of each group (0 with no pairs), and its metrics."""
    m = mask.bool()  # [B, T]
    margin = torch.where(m, logp - ref_logp.detach(), 0.0).sum(-1)  # [B]: Σlogp − Σref
    r = rewards.reshape(-1).to(margin.device)  # [B]
    group = group_index(group_ids, r.numel()).to(margin.device)  # [B]
    valid = ~torch.isnan(r) & m.any(-1)  # [B]
    pairs = (group[:, None] == group[None, :]) & (r[:, None] > r[None, :])  # [B, B]: row better than column
    pairs = pairs & valid[:, None] & valid[None, :]
    logits = dpo_beta * (margin[:, None] - margin[None, :])  # [B, B]
    count = int(pairs.sum().item())
    loss = torch.where(pairs, F.softplus(-logits), 0.0).sum() / max(count, 1)  # −log σ(x) = softplus(−x)
    right = int((pairs & (logits > 0)).sum().item())
    return loss, {"dpo_pairs": float(count), "dpo_accuracy": right / count if count else 0.0}


class Dgpo(Grpo):
    name = "dgpo"

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
        if group_ids is None or rewards is None:
            raise ValueError("dgpo's DPO term pairs samples by reward within a group; pass group_ids and rewards")
        # The importance weights correct the GRPO term's sampling distribution; the DPO term compares whole
        # sequences against an anchor and takes none (no TRL counterpart to follow).
        policy, metrics = super().loss(logp, old_logp, mask, advantages, ref_logp, is_weights=is_weights)
        anchor = ref_logp if ref_logp is not None else old_logp
        dpo, dpo_metrics = dpo_pair_loss(logp, anchor, mask, rewards, group_ids, self.config.dpo_beta)
        metrics.update(dpo_metrics)
        metrics["policy_loss"] = float(policy.detach().item())
        metrics["dpo_loss"] = float(dpo.detach().item())
        return policy + self.config.dpo_coef * dpo, metrics
