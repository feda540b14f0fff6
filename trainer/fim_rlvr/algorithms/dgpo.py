"""dgpo: GRPO plus a DPO term over the ordered pairs of each group. OUR definition: no paper owns
the name (other projects ship a "DGPO" with different maths).

    L     = L_grpo + dpo_coef × mean over pairs (w, l) of -log σ(dpo_beta × (m_w - m_l))
    m_i   = Σ_t logp_i,t - Σ_t ref_i,t      over i's unmasked tokens (ref = old_logp without a reference model)
    pairs = every (w, l) in the same group with r_w > r_l (both rewards valid, both sequences non-empty)

A pair compares two answers to the same prompt: DPO's Bradley-Terry derivation makes the margin m_w - m_l a reward
difference only there (the prompt's partition function cancels). So `group_ids` here say which prompt each sample
answers: with repair turns (TrainConfig repair_turns), a turn's prompt is its own (the last attempt and its
diagnostics), and the optimiser gives it an id of its own (optimiser.BatchView.prompt_ids): repair turns take
part in the GRPO term with their task's group and in no pair.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .base import Metrics, Totals
from .groups import GroupIds, group_index
from .grpo import Grpo


def preference_pairs(mask: Tensor, rewards: Tensor, group_ids: GroupIds) -> Tensor:
    """Bool [B, B]: row i is better than column j, in the same group, both rewards valid, both sequences non-empty."""
    m = mask.bool()  # [B, T]
    r = rewards.reshape(-1).to(m.device)  # [B]
    group = group_index(group_ids, r.numel()).to(m.device)  # [B]
    valid = ~torch.isnan(r) & m.any(-1)  # [B]
    pairs = (group[:, None] == group[None, :]) & (r[:, None] > r[None, :])  # [B, B]
    return pairs & valid[:, None] & valid[None, :]


def dpo_pair_loss(
    logp: Tensor,
    ref_logp: Tensor,
    mask: Tensor,
    rewards: Tensor,
    group_ids: GroupIds,
    dpo_beta: float,
    pairs_total: float | None = None,
) -> tuple[Tensor, Metrics]:
    """Mean DPO loss over the (better, worse) pairs of each group (0 with no pairs), and its metrics; with
    `pairs_total` (the whole batch's pair count) the sum over this part's pairs divided by it."""
    m = mask.bool()  # [B, T]
    margin = torch.where(m, logp - ref_logp.detach(), 0.0).sum(-1)  # [B]: Σlogp − Σref
    pairs = preference_pairs(m, rewards, group_ids).to(margin.device)  # [B, B]
    logits = dpo_beta * (margin[:, None] - margin[None, :])  # [B, B]
    count = int(pairs.sum().item())
    denominator = max(count, 1) if pairs_total is None else (pairs_total if pairs_total > 0 else 1.0)
    loss = torch.where(pairs, F.softplus(-logits), 0.0).sum() / denominator  # −log σ(x) = softplus(−x)
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
        totals: Totals | None = None,
    ) -> tuple[Tensor, Metrics]:
        if group_ids is None or rewards is None:
            raise ValueError("dgpo's DPO term pairs samples by reward within a group; pass group_ids and rewards")
        # The importance weights correct the GRPO term's sampling distribution; the DPO term compares whole
        # sequences against an anchor and takes none (no TRL counterpart to follow).
        policy, metrics = super().loss(logp, old_logp, mask, advantages, ref_logp, is_weights=is_weights, totals=totals)
        anchor = ref_logp if ref_logp is not None else old_logp
        pairs_total = totals.pairs if totals is not None else None
        dpo, dpo_metrics = dpo_pair_loss(logp, anchor, mask, rewards, group_ids, self.config.dpo_beta, pairs_total)
        metrics.update(dpo_metrics)
        metrics["policy_loss"] = float(policy.detach().item())
        metrics["dpo_loss"] = float(dpo.detach().item())
        return policy + self.config.dpo_coef * dpo, metrics

    def totals(self, mask: Tensor, group_ids: GroupIds | None = None, rewards: Tensor | None = None) -> Totals:
        pairs = 0.0
        if group_ids is not None and rewards is not None:
            pairs = float(preference_pairs(mask, rewards, group_ids).sum().item())
        return Totals.of(mask, pairs)
