"""Expert iteration (rejection-sampling fine-tuning, RFT): the compute-matched arm that spends what RL spends on
generation and verification, but learns from the model's own verified proofs with the supervised loss.

Each of its steps is an RL step's first half unchanged: the same task sampler and curriculum draw `batch_size`
training tasks (with the run's seed, the very draws the RL run made first), `group_size` completions each are
sampled at the run's temperature and checked by the run's verifier. When RL generated more in a step than that
first round (DAPO's dynamic sampling refills, repair turns), the step draws as many more groups as RL's step
generated sequences beyond it (`sequences_per_step`, from RL's metrics.jsonl), so the arms match in generation
step by step, not only in the first round. The completions Lean proved (first attempts,
verdict `proved`: never a partial reward, a masked or a failed one) join a buffer of the arm's verified proofs,
unique per task and token sequence. Then, instead of the RL loss, the step's optimiser steps (`num_iterations` x
`steps_per_generation`, as RL's) each fit `batch_size x group_size / steps_per_generation` proofs drawn from the
buffer (seeded, with replacement), with the negative log-likelihood of the proof's tokens after its prompt
(step/sft.py `target_nll`), by AdamW at the RL learning rate and schedule with RL's gradient clipping.

So the arm matches RL in optimiser steps, sequences through forward and backward passes (while the buffer holds a
proof: before the first one a step trains nothing), generated completions and verifier calls; it differs from RL in
its loss only (RAFT, arXiv 2304.06767; ReST-EM, arXiv 2312.06585: "sample, filter by reward, fine-tune"). Tasks
without a reference proof are trained on exactly like the others: only a verified proof of them is ever a target.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..core.config import TrainConfig
from ..model.adapters import trainable_parameters
from ..model.policy import Policy
from ..tasks.curriculum import Curriculum, TaskSampler
from ..tasks.data import Task, by_kind
from ..verifier.check import Verifier, send
from .batch import Group, StepRecord
from .compute import ArmCompute
from .sample import Sampling, sample_groups
from .schedule import learning_rate_factor
from .sft import target_nll


@dataclass(frozen=True)
class Proof:
    """One verified completion: the prompt it answered and the tokens the model produced (its stop token included)."""

    task_id: str
    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]


def verified_proofs(groups: Sequence[Group]) -> list[Proof]:
    """The completions of `groups` the verifier proved, first attempts only (a repair turn's prompt is another)."""
    out: list[Proof] = []
    for group in groups:
        for rollout, verdict, turn in zip(group.rollouts, group.verdicts, group.sample_turns(), strict=True):
            if verdict.kind == "proved" and turn == 0 and rollout.completion_ids:
                out.append(Proof(group.task.id, tuple(rollout.prompt_ids), tuple(rollout.completion_ids)))
    return out


class ProofBuffer:
    """The arm's verified proofs so far, each (task, tokens) once, in the order found; seeded draws."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.proofs: list[Proof] = []
        self._seen: set[tuple[str, tuple[int, ...]]] = set()

    def add(self, proofs: Sequence[Proof]) -> int:
        """Adds the proofs not already held; returns how many were new."""
        added = 0
        for proof in proofs:
            key = (proof.task_id, proof.completion_ids)
            if key not in self._seen:
                self._seen.add(key)
                self.proofs.append(proof)
                added += 1
        return added

    def draw(self, size: int, update: int) -> list[Proof]:
        """`size` proofs drawn uniformly with replacement (none from an empty buffer), fixed by (seed, update)."""
        if not self.proofs:
            return []
        rng = random.Random(f"{self.seed}:rft:{update}")
        return [self.proofs[rng.randrange(len(self.proofs))] for _ in range(size)]


@dataclass(frozen=True)
class RftResult:
    compute: ArmCompute
    proofs: int
    """Unique verified proofs found (the buffer's size at the end)."""
    completed: bool
    """False when stopped on the way."""


def run_rft(
    sampling: Sampling,
    train_tasks: Sequence[Task],
    verifier: Verifier,
    config: TrainConfig,
    *,
    seed: int,
    silence_s: float,
    stop: threading.Event,
    log: Callable[[str], None],
    sequences_per_step: Sequence[int] = (),
) -> RftResult:
    """`config.steps` steps of expert iteration on `sampling.policy`, from its weights as they are (the warm start).
    `sequences_per_step[s - 1]`: the completions RL generated at step s; step s samples at least that many (in whole
    groups; a step past the list's end, or with fewer, samples the first round's `batch_size x group_size`)."""
    policy = sampling.policy
    model = policy.model
    weights = trainable_parameters(model)
    optimizer = torch.optim.AdamW(weights, lr=config.learning_rate, weight_decay=config.weight_decay)
    sampler = TaskSampler(by_kind(train_tasks), seed, by_learnability=config.task_sampling == "learnability")
    curriculum = Curriculum(list(by_kind(train_tasks)), enabled=config.staged_curriculum())
    buffer = ProofBuffer(seed)
    compute = ArmCompute()
    per_step = config.num_iterations * config.steps_per_generation
    total_updates = max(1, config.steps * per_step)
    slice_size = config.batch_size * config.group_size // config.steps_per_generation
    pad = int(policy.tokenizer.pad_token_id)
    started = time.perf_counter()
    for step in range(1, config.steps + 1):
        if stop.is_set():
            return RftResult(compute, len(buffer.proofs), completed=False)
        tasks = sampler.draw(config.batch_size, curriculum.weights())
        batch = sample_groups(sampling, tasks, config.group_size, step, 0)
        record = StepRecord.collect(batch, send(verifier, batch.items()), verifier, silence_s, stop)
        extra = extra_groups(sequences_per_step, step, config.batch_size, config.group_size)
        if extra > 0:  # RL's later rounds of this step, in one round of the groups they add up to
            more = sample_groups(sampling, sampler.draw(extra, curriculum.weights()), config.group_size, step, 1)
            record = record.merged(StepRecord.collect(more, send(verifier, more.items()), verifier, silence_s, stop))
        items = [rollout for group in record.all_groups for rollout in group.rollouts]
        compute.generated.add(len(items), sum(len(r.completion_ids) for r in items))
        compute.verifier_calls += len(items)
        sampler.observe(record.file_results(config.timeout_reward))
        curriculum.update(record.kind_results(config.timeout_reward))
        found = verified_proofs(record.all_groups)
        buffer.add(found)
        losses = []
        for index in range(per_step):
            update = (step - 1) * per_step + index
            drawn = buffer.draw(slice_size, update)
            if not drawn:
                continue
            factor = learning_rate_factor(update, total_updates, config.warmup_ratio, config.lr_scheduler)
            losses.append(_fit(model, weights, optimizer, drawn, pad, config, factor, policy))
            compute.optimizer_steps += 1
            compute.trained.add(len(drawn), sum(len(p.completion_ids) for p in drawn))
        sampling.backend.sync_weights(model)
        if step % 10 == 0 or step == config.steps:
            loss = f"loss {sum(losses) / len(losses):.3f}" if losses else "no proof to train on yet"
            log(
                f"expert iteration step {step}/{config.steps}: {len(found)} of {len(items)} samples proved, "
                f"{len(buffer.proofs)} unique proofs so far; {loss} ({time.perf_counter() - started:.0f} s)"
            )
    return RftResult(compute, len(buffer.proofs), completed=True)


def extra_groups(sequences_per_step: Sequence[int], step: int, batch_size: int, group_size: int) -> int:
    """The groups step `step` samples beyond its first round of `batch_size`: enough that it generates at least the
    `sequences_per_step[step - 1]` completions RL did (none past the list's end)."""
    if step > len(sequences_per_step):
        return 0
    groups = -(-sequences_per_step[step - 1] // group_size)  # ceiling: whole groups
    return max(0, groups - batch_size)


def _fit(
    model: Any,
    weights: list[torch.nn.Parameter],
    optimizer: torch.optim.Optimizer,
    proofs: Sequence[Proof],
    pad: int,
    config: TrainConfig,
    factor: float,
    policy: Policy,
) -> float:
    """One optimiser step of the supervised loss on `proofs`, at RL's learning rate times the schedule's factor."""
    model.train()
    for group in optimizer.param_groups:
        group["lr"] = config.learning_rate * factor
    optimizer.zero_grad(set_to_none=True)
    tokens = sum(len(p.completion_ids) for p in proofs)
    size = config.micro_batch_size or len(proofs)
    total = 0.0
    for start in range(0, len(proofs), size):  # micro-batches whose gradients add up to the whole batch's
        part = proofs[start : start + size]
        loss = target_nll(
            model, [p.prompt_ids for p in part], [p.completion_ids for p in part], pad, policy.compute_dtype, tokens
        )
        loss.backward()
        total += float(loss.item())
    if config.max_grad_norm > 0:
        torch.nn.utils.clip_grad_norm_(weights, config.max_grad_norm)
    optimizer.step()
    return total
