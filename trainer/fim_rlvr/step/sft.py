"""Supervised warm start: teach the policy the train split's middles (prompt -> middle + stop token).

The loss counts only the middle's tokens. Batches are drawn with a seeded generator, so the warm start is
reproducible; the learning rate warms up for the first tenth of the steps and decays linearly after.

With LoRA on a model path the warm start trains the adapter, then folds it into the base weights
(adapters.fold_adapter): RL starts from a fresh adapter on the SFT policy, and the adapters-disabled KL reference is the
SFT policy. The embedded model's base is randomly initialised, so an adapter on it has nothing to adapt: its warm start
is its pretraining and trains every base weight (the adapter switched off); RL then trains the adapter on the result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ..model.adapters import fold_adapter, is_lora, trainable_parameters, training_the_base
from ..model.policy import Policy
from ..model.precision import compute
from ..model.rollout import token_logprobs
from ..tasks.data import Task
from ..tasks.prompts import build_prompt


def examples(
    tasks: Sequence[Task], policy: Policy, *, show_goal: bool, budget: int
) -> list[tuple[list[int], list[int]]]:
    """(prompt ids, target ids) per task; the target is the middle followed by the stop token."""
    tokenizer = policy.tokenizer
    eos = [int(tokenizer.eos_token_id)] if tokenizer.eos_token_id is not None else []
    out = []
    for task in tasks:
        if not task.reference:
            continue  # an imported statement's `sorry` placeholder is not a proof to imitate
        prompt = build_prompt(task, policy.style, tokenizer, show_goal=show_goal, budget=budget)
        target = policy.style.sft_target(task.middle)
        out.append(
            (
                tokenizer(prompt, add_special_tokens=False)["input_ids"],
                tokenizer(target, add_special_tokens=False)["input_ids"] + eos,
            )
        )
    return out


@dataclass
class SftFit:
    """What an SFT run did: the loss per step, and the sequences and target tokens it put through the model's forward
    and backward passes (the arms' `trained` counts)."""

    losses: list[float] = field(default_factory=list)
    sequences: int = 0
    tokens: int = 0


def warm_start(
    policy: Policy,
    tasks: Sequence[Task],
    *,
    steps: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    show_goal: bool,
    budget: int,
    stop: threading.Event,
    max_grad_norm: float = 1.0,
    on_progress: Callable[[int, float], None] | None = None,
) -> SftFit:
    """Run `steps` SFT steps; returns the loss per step and what they trained on (stops early, returning what it
    has, when `stop` is set)."""
    data = examples(tasks, policy, show_goal=show_goal, budget=budget)
    if not data:
        return SftFit()
    model = policy.model
    model.train()
    pad = int(policy.tokenizer.pad_token_id)
    fit = (data, steps, batch_size, learning_rate, seed, pad, stop, max_grad_norm, policy.compute_dtype, on_progress)
    if policy.embedded and is_lora(model) and not getattr(model, "is_loaded_in_4bit", False):
        with training_the_base(model) as weights:
            return _fit(model, weights, *fit)
    fitted = _fit(model, trainable_parameters(model), *fit)
    if fitted.losses and is_lora(model):
        fold_adapter(model, seed)
        policy.base_path = None  # the base weights now hold the warm start: checkpoints must carry them
    return fitted


def _fit(
    model: Any,
    weights: list[torch.nn.Parameter],
    data: list[tuple[list[int], list[int]]],
    steps: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    pad: int,
    stop: threading.Event,
    max_grad_norm: float,
    compute_dtype: torch.dtype | None,
    on_progress: Callable[[int, float], None] | None,
) -> SftFit:
    optimizer = torch.optim.AdamW(weights, lr=learning_rate, weight_decay=0.0)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.05, (steps - s) / max(1, steps - warmup)))
    )
    generator = torch.Generator().manual_seed(seed)
    fitted = SftFit()
    losses = fitted.losses
    for step in range(steps):
        if stop.is_set():
            break
        pick = torch.randint(len(data), (min(batch_size, len(data)),), generator=generator).tolist()
        prompts = [data[i][0] for i in pick]
        targets = [data[i][1] for i in pick]
        fitted.sequences += len(targets)
        fitted.tokens += sum(len(t) for t in targets)
        loss = target_nll(model, prompts, targets, pad, compute_dtype)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(weights, max_grad_norm)
        optimizer.step()
        schedule.step()
        losses.append(float(loss.item()))
        if on_progress is not None:
            on_progress(step + 1, losses[-1])
    return fitted


def target_nll(
    model: Any,
    prompts: Sequence[Sequence[int]],
    targets: Sequence[Sequence[int]],
    pad: int,
    compute_dtype: torch.dtype | None,
    tokens: int | None = None,
) -> torch.Tensor:
    """The supervised loss: the negative log-likelihood of the targets' tokens after their prompts, summed and divided
    by `tokens` (a whole batch's count, when this is one micro-batch of it), else by these targets' token count (the
    warm start's loss, and expert iteration's on the model's own verified proofs: step/rft.py)."""
    with compute(compute_dtype, model):
        logp, mask = token_logprobs(model, prompts, targets, pad)  # [B, T] each
    return -(logp * mask).sum() / (tokens if tokens is not None else mask.sum())
