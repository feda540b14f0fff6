"""One RL step's optimisation: the step's groups, the algorithm's loss, the optimiser.

A step's groups go through `num_iterations` passes; each pass is split into `steps_per_generation` optimiser
steps (by groups, so advantages stay those of whole groups); each optimiser step accumulates the gradients of its
micro-batches (`micro_batch_size` completions per forward/backward). Every loss is divided by the counts of the
whole optimiser batch on every rank (`Totals`, TRL's `num_items_in_batch`): the micro-batches' gradients add up to
the gradient of one pass over the batch, and under DDP (which averages the ranks' gradients) to the gradient of the
whole batch of every rank. DAPO's token mean is then the mean over every rank's tokens, not a mean of per-rank means.

The forward pass runs with every dropout rate at 0 (generation.dropout_off): the log-probs it computes are those of
the distribution the completions were sampled from, at equal weights. Only completion positions get logits.
The learning rate follows `lr_scheduler` with a linear warm-up, per optimiser step (schedule.py).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from ..algorithms.base import Algorithm, Totals
from ..algorithms.config import AlgorithmConfig
from ..algorithms.importance import importance_weights, mismatch_metrics
from ..model.adapters import is_lora, reference_mode
from ..model.generation import dropout_off
from ..model.rollout import Rollout, token_logprobs
from .batch import Group, StepRecord, metrics_line, score
from .schedule import learning_rate_factor

if TYPE_CHECKING:
    from ..run.trainer import Trainer

CLIP_WARNING_SHARE = 0.5
"""A step whose clip removed the gradient of at least this share of its terms gets a warning."""
CLIP_WARNING_EVERY = 10
"""Steps between two repeats of that warning."""

_SUMMED_METRICS = ("dpo_pairs", "policy_loss", "dpo_loss")
"""Metrics that are parts of a sum over micro-batches (the others are averages)."""


@dataclass
class BatchView:
    """One optimiser step's completions as tensors over the whole (local) batch; micro-batches are row slices."""

    rollouts: list[Rollout]
    group_ids: torch.Tensor  # [B]
    group_sizes: list[int]
    rewards: torch.Tensor  # [B], NaN: masked
    advantages: torch.Tensor  # [B]
    mask: torch.Tensor  # [B, T] float: the tokens that count
    old_logp: torch.Tensor  # [B, T]
    is_weights: torch.Tensor | None  # [B, T] or [B, 1]
    tis_metrics: dict[str, float]
    prompt_ids: torch.Tensor | None = None  # [B]
    """Which prompt each sample answers (None: its group's): a group's first attempts share their task's prompt, and
    each repair turn has a prompt of its own (its last attempt and diagnostics), though it is scored in the group.
    The loss's `group_ids` (dgpo's preference pairs) are these."""

    @property
    def loss_group_ids(self) -> torch.Tensor:
        return self.prompt_ids if self.prompt_ids is not None else self.group_ids

    @staticmethod
    def build(
        algorithm: Algorithm,
        groups: Sequence[Group],
        device: torch.device,
        timeout_reward: str = "failure",
        repair_discount: float = 1.0,
    ) -> BatchView:
        rollouts = [r for g in groups for r in g.rollouts]
        verdicts = [v for g in groups for v in g.verdicts]
        lengths = [len(r.completion_ids) for r in rollouts]
        group_ids = torch.tensor([i for i, g in enumerate(groups) for _ in g.rollouts])  # [B]
        width = max(1, max(lengths, default=1))
        mask = (torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]).float().to(device)  # [B, T]
        rewards, advantages, mask = score(
            algorithm,
            verdicts,
            mask,
            group_ids,
            lengths=lengths,
            truncated=[r.truncated for r in rollouts],
            timeout_reward=timeout_reward,
            discounts=[repair_discount**turn for g in groups for turn in g.sample_turns()],
        )
        old_logp = pad_rows([r.old_logp for r in rollouts], width, device)  # [B, T]
        is_weights, tis_metrics = _importance_weights(algorithm.config, rollouts, old_logp, mask)
        sizes = [len(g.rollouts) for g in groups]
        turns = [turn for g in groups for turn in g.sample_turns()]
        pairs_of = zip(group_ids.tolist(), turns, strict=True)
        # [B]: a repair turn's own number lies past every group's
        prompt_ids = torch.tensor([group if turn == 0 else len(groups) + k for k, (group, turn) in enumerate(pairs_of)])
        return BatchView(
            rollouts, group_ids, sizes, rewards, advantages, mask, old_logp, is_weights, tis_metrics, prompt_ids
        )

    def totals(self, algorithm: Algorithm) -> Totals:
        return algorithm.totals(self.mask, self.loss_group_ids, self.rewards)

    def micro_batches(self, size: int | None, whole_groups: bool) -> Iterator[slice]:
        """Row slices of at most `size` completions (whole groups when `whole_groups`: at least one group)."""
        rows = len(self.rollouts)
        if size is None or size >= rows:
            yield slice(0, rows)
            return
        bounds = [0]
        for group_size in self.group_sizes:
            bounds.append(bounds[-1] + group_size)
        start = 0
        while start < rows:
            end = min(start + size, rows)
            if whole_groups:
                ends = [b for b in bounds if start < b <= end]
                end = ends[-1] if ends else next(b for b in bounds if b > start)
            yield slice(start, end)
            start = end


def pad_rows(rows: list[list[float]], width: int, device: torch.device) -> torch.Tensor:
    out = torch.zeros((len(rows), width), dtype=torch.float32)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=torch.float32)
    return out.to(device)


@dataclass(frozen=True)
class LossModels:
    """What the loss runs through: the model to train (DDP's wrapper under a launcher), the policy's own model (for
    the LoRA reference), and the frozen reference when the KL term has one."""

    train_model: Any
    policy_model: Any
    ref_model: Any
    pad_id: int
    temperature: float


def accumulate(
    algorithm: Algorithm,
    models: LossModels,
    view: BatchView,
    totals: Totals,
    micro_batch_size: int | None,
    backward: Callable[[torch.Tensor], None],
    no_sync: Callable[[], Any],
) -> tuple[float, dict[str, float], bool]:
    """Forward and backward every micro-batch of `view`, each loss divided by `totals` (the whole batch's counts on
    every rank); (the summed loss, the combined metrics, whether any micro-batch had a token that counts)."""
    slices = [
        rows
        for rows in view.micro_batches(micro_batch_size, whole_groups=algorithm.name == "dgpo")
        if view.mask[rows].sum() > 0  # a micro-batch with no token that counts has no gradient to add
    ]
    loss_sum = 0.0
    parts: list[tuple[float, dict[str, float]]] = []
    for index, rows in enumerate(slices):
        last = index == len(slices) - 1  # the one backward that synchronises gradients across ranks
        rollouts = view.rollouts[rows]
        with dropout_off(models.train_model):
            logp, _ = token_logprobs(
                models.train_model,
                [r.prompt_ids for r in rollouts],
                [r.completion_ids for r in rollouts],
                models.pad_id,
                models.temperature,
            )  # [b, t]
        width = logp.shape[1]
        mask = view.mask[rows, :width]  # [b, t]
        ref_logp = _reference_logp(algorithm, models, rollouts)
        weights = view.is_weights
        if weights is not None:
            weights = weights[rows, : width if weights.shape[1] != 1 else 1]
        loss, metrics = algorithm.loss(
            logp,
            view.old_logp[rows, :width],
            mask,
            view.advantages[rows],
            ref_logp=ref_logp,
            group_ids=view.loss_group_ids[rows],
            rewards=view.rewards[rows],
            is_weights=weights,
            totals=totals,
        )
        with nullcontext() if last else no_sync():
            backward(loss)
        loss_sum += float(loss.detach().item())
        unit = mask.bool().any(-1).sum() if algorithm.metrics_unit == "sequences" else mask.sum()
        parts.append((float(unit.item()), metrics))
    return loss_sum, combine_metrics(parts), bool(parts)


def _reference_logp(algorithm: Algorithm, models: LossModels, rollouts: list[Rollout]) -> torch.Tensor | None:
    if not algorithm.needs_reference:
        return None
    prompts, completions = [r.prompt_ids for r in rollouts], [r.completion_ids for r in rollouts]
    if models.ref_model is not None:
        with torch.no_grad():
            return token_logprobs(models.ref_model, prompts, completions, models.pad_id, models.temperature)[0]
    if is_lora(models.policy_model):
        with reference_mode(models.policy_model):  # LoRA: the reference is the base, the adapters switched off
            return token_logprobs(models.policy_model, prompts, completions, models.pad_id, models.temperature)[0]
    return None


def combine_metrics(parts: list[tuple[float, dict[str, float]]]) -> dict[str, float]:
    """Micro-batch metrics as one: sums stay sums, min/max stay min/max, averages weighted by the micro-batch's
    tokens (sequences for GSPO), dpo_accuracy by its pairs."""
    out: dict[str, float] = {}
    keys = {k for _, metrics in parts for k in metrics}
    for key in keys:
        values = [(w, m[key], m.get("dpo_pairs", 0.0)) for w, m in parts if key in m]
        if key in _SUMMED_METRICS:
            out[key] = sum(v for _, v, _ in values)
        elif key.endswith("_min"):
            out[key] = min(v for _, v, _ in values)
        elif key.endswith("_max"):
            out[key] = max(v for _, v, _ in values)
        else:
            weights = [pairs if key == "dpo_accuracy" else w for w, _, pairs in values]
            total = sum(weights)
            out[key] = sum(w * v for w, (_, v, _) in zip(weights, values, strict=True)) / total if total else 0.0
    return out


def _importance_weights(
    config: AlgorithmConfig, rollouts: list[Rollout], old_logp: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor | None, dict[str, float]]:
    """vLLM rollouts: the truncated importance weights (when the correction is on) and the mismatch metrics.
    Rollouts from the trainer's own model (sampling_logp None) give (None, {}): weight exactly 1."""
    if all(r.sampling_logp is None for r in rollouts):
        return None, {}
    rows = [r.sampling_logp if r.sampling_logp is not None else [math.nan] * len(r.old_logp) for r in rollouts]
    sampling_logp = pad_rows(rows, old_logp.shape[1], old_logp.device)  # [B, T], NaN: no vLLM log-prob
    result = importance_weights(
        old_logp,
        sampling_logp,
        mask,
        config.vllm_importance_sampling_mode,
        config.vllm_importance_sampling_clip_min,
        config.vllm_importance_sampling_clip_max,
    )
    metrics = mismatch_metrics(old_logp, sampling_logp, mask, result)
    return (result.weights if config.vllm_importance_sampling_correction else None), metrics


def make_optimizer(parameters: list[torch.nn.Parameter], config: Any) -> torch.optim.Optimizer:
    """AdamW at the run's learning rate with its weight decay (the schedule sets each step's rate in `optimise`)."""
    return torch.optim.AdamW(parameters, lr=config.learning_rate, weight_decay=config.weight_decay)


def split_groups(groups: list[Group], parts: int) -> list[list[Group]]:
    """`groups` in `parts` consecutive slices of near-equal size (some empty when there are fewer groups)."""
    size, extra = divmod(len(groups), parts)
    out, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        out.append(groups[start:end])
        start = end
    return out


def optimise(trainer: Trainer, record: StepRecord, step: int) -> dict[str, Any]:
    """The RL step's optimiser steps on the record's training groups; returns the metrics.jsonl line."""
    config, algorithm, policy, ranks = trainer.config, trainer.algorithm, trainer.policy, trainer.ranks
    started = time.perf_counter()
    models = LossModels(
        trainer.train_model,
        policy.model,
        trainer.ref_model,
        trainer.backend.pad_id,
        config.temperature if config.temperature > 0 else 1.0,
    )
    per_step = config.num_iterations * config.steps_per_generation
    total_updates = max(1, config.steps * per_step)
    losses: list[float] = []
    parts: list[tuple[float, dict[str, float]]] = []
    tis: dict[str, float] = {}
    slices = split_groups(record.groups, config.steps_per_generation)
    for iteration in range(config.num_iterations):
        for index, groups in enumerate(slices):
            update = (step - 1) * per_step + iteration * config.steps_per_generation + index
            factor = learning_rate_factor(update, total_updates, config.warmup_ratio, config.lr_scheduler)
            view = (
                BatchView.build(algorithm, groups, policy.device, config.timeout_reward, config.repair_discount)
                if groups
                else None
            )
            local = view.totals(algorithm) if view is not None else Totals(0.0, 0.0)
            shares = ranks.all_gather(local)
            totals = sum(shares[1:], shares[0]).per_rank(ranks.world)
            if totals.tokens == 0:  # no rank has a token that counts: nothing to optimise in this slice
                continue
            assert trainer.optimizer is not None
            for group in trainer.optimizer.param_groups:
                group["lr"] = config.learning_rate * factor
            trainer.optimizer.zero_grad(set_to_none=True)
            trained = False
            if view is not None:
                loss, metrics, trained = accumulate(
                    algorithm,
                    models,
                    view,
                    totals,
                    config.micro_batch_size,
                    ranks.backward,
                    lambda: ranks.no_sync(trainer.train_model),
                )
                tis = tis or view.tis_metrics
                if trained:
                    losses.append(loss)
                    parts.append((local.sequences if algorithm.metrics_unit == "sequences" else local.tokens, metrics))
            if not trained:  # every rank takes part in each synchronised backward, with a zero gradient here
                ranks.backward(_zero_loss(trainer))
            torch.nn.utils.clip_grad_norm_(policy.model.parameters(), 1.0)
            trainer.optimizer.step()
    algo_metrics = {**combine_metrics(parts), **tis}
    loss_value = sum(losses) / len(losses) if losses else 0.0
    line = metrics_line(trainer, record, step, loss_value, algo_metrics, time.perf_counter() - started)
    line["optimizer_steps"] = per_step
    _warn_when_clipped(trainer, algorithm, line, step)
    return line


def _zero_loss(trainer: Trainer) -> torch.Tensor:
    """A loss of exactly 0 that runs backward through the training model (one pad token)."""
    tokens = torch.tensor([[trainer.backend.pad_id]], device=trainer.policy.device)  # [1, 1]
    return trainer.train_model(input_ids=tokens).logits.float().sum() * 0.0


_last_clip_warning: dict[int, int] = {}


def _warn_when_clipped(trainer: Trainer, algorithm: Algorithm, line: dict[str, Any], step: int) -> None:
    """Say so when the clip removed most of the step's gradient (GSPO's 3e-4 range is narrow: with the verification
    overlap the policy has moved one step between sampling and training)."""
    share = float(line.get("clip_fraction", 0.0))
    if share < CLIP_WARNING_SHARE:
        return
    last = _last_clip_warning.get(id(trainer))
    if last is not None and step - last < CLIP_WARNING_EVERY:
        return
    _last_clip_warning[id(trainer)] = step
    config = algorithm.config
    unit = "sequences" if algorithm.metrics_unit == "sequences" else "tokens"
    trainer.log(
        "warning",
        f"step {step}: {algorithm.name}'s clip removed the gradient of {share:.0%} of the {unit} (clip range "
        f"1 - {config.epsilon:g} .. 1 + {config.clip_high:g}); the policy moves further than that between sampling "
        "and training, so most samples teach nothing. Widen epsilon / epsilon_high in algo_config or lower "
        "learning_rate",
    )
