"""One RL step's optimiser steps on its checked groups: a function of explicit inputs that returns the step's loss and
metrics (nano-aha-moment's shape), never of the Trainer.

A step's groups go through `num_iterations` passes; each pass is split into `steps_per_generation` optimiser steps (by
groups, so advantages stay those of whole groups); each optimiser step accumulates the gradients of its micro-batches
(step/loss.py `accumulate`), clips the gradient to `max_grad_norm` and steps. The learning rate follows
`lr_scheduler` with a linear warm-up, per optimiser step (step/schedule.py), so a resumed run continues it exactly.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import torch

from ..algorithms.base import Algorithm, Totals
from ..core.config import TrainConfig
from ..model.precision import compute
from .batch import Group
from .loss import BatchView, LossModels, accumulate, combine_metrics
from .schedule import learning_rate_factor

T = TypeVar("T")


class Collectives(Protocol):
    """What the optimiser needs of the ranks (run.distributed.Ranks; with one process every call is an identity)."""

    @property
    def world(self) -> int: ...

    def all_gather(self, value: T) -> list[T]: ...

    def backward(self, loss: Any) -> None: ...

    def no_sync(self, model: Any) -> AbstractContextManager[Any]: ...


@dataclass(frozen=True)
class StepResult:
    """What the optimiser steps of one RL step did."""

    loss: float
    """The mean over the optimiser steps of their summed micro-batch losses (0.0 when nothing trained)."""
    metrics: dict[str, float]
    """The algorithm's metrics combined over micro-batches (clip fractions, kl, ...), and vLLM's mismatch metrics."""
    lr: float
    """The learning rate of the last optimiser step."""
    optimizer_steps: int
    seconds: float


def make_optimizer(parameters: list[torch.nn.Parameter], config: TrainConfig) -> torch.optim.Optimizer:
    """AdamW at the run's learning rate with its weight decay (the schedule sets each step's rate in `optimise`)."""
    return torch.optim.AdamW(parameters, lr=config.learning_rate, weight_decay=config.weight_decay)


def split_groups(groups: Sequence[Group], parts: int) -> list[list[Group]]:
    """`groups` in `parts` consecutive slices of near-equal size (some empty when there are fewer groups)."""
    size, extra = divmod(len(groups), parts)
    out, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        out.append(list(groups[start:end]))
        start = end
    return out


def optimise(
    groups: Sequence[Group],
    *,
    step: int,
    algorithm: Algorithm,
    models: LossModels,
    optimizer: torch.optim.Optimizer,
    config: TrainConfig,
    ranks: Collectives,
    device: torch.device,
) -> StepResult:
    """The optimiser steps of RL step `step` (1-based) on `groups` (this rank's share of the step's training groups)."""
    started = time.perf_counter()
    per_step = config.num_iterations * config.steps_per_generation
    total_updates = max(1, config.steps * per_step)
    losses: list[float] = []
    parts: list[tuple[float, dict[str, float]]] = []
    tis: dict[str, float] = {}
    slices = split_groups(groups, config.steps_per_generation)
    for iteration in range(config.num_iterations):
        for index, part in enumerate(slices):
            update = (step - 1) * per_step + iteration * config.steps_per_generation + index
            factor = learning_rate_factor(update, total_updates, config.warmup_ratio, config.lr_scheduler)
            view = (
                BatchView.build(algorithm, part, device, config.timeout_reward, config.repair_discount)
                if part
                else None
            )
            local = view.totals(algorithm) if view is not None else Totals(0.0, 0.0)
            shares = ranks.all_gather(local)
            totals = sum(shares[1:], shares[0]).per_rank(ranks.world)
            if totals.tokens == 0:  # no rank has a token that counts: nothing to optimise in this slice
                continue
            for param_group in optimizer.param_groups:
                param_group["lr"] = config.learning_rate * factor
            optimizer.zero_grad(set_to_none=True)
            trained = False
            if view is not None:
                loss, metrics, trained = accumulate(
                    algorithm,
                    models,
                    view,
                    totals,
                    config.micro_batch_size,
                    ranks.backward,
                    lambda: ranks.no_sync(models.train_model),
                )
                tis = tis or view.tis_metrics
                if trained:
                    losses.append(loss)
                    parts.append((local.sequences if algorithm.metrics_unit == "sequences" else local.tokens, metrics))
            if not trained:  # every rank takes part in each synchronised backward, with a zero gradient here
                ranks.backward(_zero_loss(models, device))
            if config.max_grad_norm > 0:
                torch.nn.utils.clip_grad_norm_(models.policy_model.parameters(), config.max_grad_norm)
            optimizer.step()
    return StepResult(
        loss=sum(losses) / len(losses) if losses else 0.0,
        metrics={**combine_metrics(parts), **tis},
        lr=float(optimizer.param_groups[0]["lr"]),
        optimizer_steps=per_step,
        seconds=time.perf_counter() - started,
    )


def _zero_loss(models: LossModels, device: torch.device) -> torch.Tensor:
    """A loss of exactly 0 that runs backward through the training model (one pad token)."""
    tokens = torch.tensor([[models.pad_id]], device=device)  # [1, 1]
    with compute(models.compute_dtype, models.policy_model):
        return models.train_model(input_ids=tokens).logits.float().sum() * 0.0
