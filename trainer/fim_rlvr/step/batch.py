"""One RL step's pieces: sample groups, send them for checking, collect verdicts, the metrics line.

A Group is one prompt's G completions; a Batch is one step's groups (what the overlap keeps in flight); a
StepRecord is a batch with its verdicts. optimiser.py turns a record into the step's optimiser steps with the run's
algorithm and returns the metrics.jsonl line (`metrics_line`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import torch

from ..algorithms.base import Algorithm
from ..algorithms.importance import MISMATCH_KEYS
from ..core.outcomes import training_reward
from ..core.protocol import Verdict, VerifyItem
from ..model.rollout import Rollout
from ..tasks.data import Task
from ..tasks.prompts import build_prompts
from ..verifier.check import PendingCheck, Verifier, send

if TYPE_CHECKING:
    from ..core.config import TrainConfig
    from ..model.policy import Policy
    from ..model.rollout import RolloutBackend
    from ..run.distributed import Ranks


class StepContext(Protocol):
    """What a step needs of its run, and nothing more (the Trainer is one; a test can give a smaller one)."""

    @property
    def config(self) -> TrainConfig: ...
    @property
    def policy(self) -> Policy: ...
    @property
    def backend(self) -> RolloutBackend: ...
    @property
    def ranks(self) -> Ranks: ...
    @property
    def algorithm(self) -> Algorithm: ...
    @property
    def show_goal(self) -> bool: ...
    @property
    def train_model(self) -> Any:
        """The model the loss runs through (DDP's wrapper when distributed)."""

    @property
    def ref_model(self) -> Any:
        """The frozen KL reference when every weight is trained, else None."""

    @property
    def optimizer(self) -> torch.optim.Optimizer | None: ...


def generation_seed(seed: int, step: int, round_: int) -> int:
    """The sampling seed of one generation round: fixed by (run seed, step, round), so resumes repeat it."""
    return (seed * 1_000_003 + step * 1_009 + round_) % (2**31 - 1)


@dataclass
class Group:
    """One prompt's completions, their cleaned candidates and (once checked) verdicts."""

    task: Task
    rollouts: list[Rollout]
    candidates: list[str]
    verdicts: list[Verdict] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)
    """Per sample, 0 for a first attempt and t for the t-th repair turn (fim_rlvr.step.repair_turns); empty: every
    sample is a first attempt."""

    def sample_turns(self) -> list[int]:
        return self.turns or [0] * len(self.candidates)

    def rewards(self, timeout_reward: str, repair_discount: float = 1.0) -> list[float]:
        """Rewards with NaN for masked samples (the algorithms leave NaN out of group statistics), a repair turn's
        discounted by repair_discount ** turn."""
        return [
            training_reward(v.kind, v.cause, v.reward, timeout_reward) * repair_discount**turn
            for v, turn in zip(self.verdicts, self.sample_turns(), strict=True)
        ]


@dataclass
class Batch:
    """One generation round's groups."""

    step: int
    groups: list[Group]
    gen_seconds: float

    def items(self) -> list[VerifyItem]:
        return [{"taskId": g.task.id, "candidate": c} for g in self.groups for c in g.candidates]

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "gen_seconds": self.gen_seconds,
            "groups": [
                {
                    "task": g.task.id,
                    "candidates": g.candidates,
                    "rollouts": [_rollout_json(r) for r in g.rollouts],
                }
                for g in self.groups
            ],
        }

    @staticmethod
    def from_json(raw: Mapping[str, Any], tasks_by_id: Mapping[str, Task]) -> Batch:
        groups = [
            Group(tasks_by_id[g["task"]], [Rollout(*r) for r in g["rollouts"]], list(g["candidates"]))
            for g in raw["groups"]
        ]
        return Batch(int(raw["step"]), groups, float(raw["gen_seconds"]))


def _rollout_json(r: Rollout) -> list[Any]:
    """A rollout as the positional list `Rollout(*...)` reads back; vLLM's log-probs only when there are some."""
    fields: list[Any] = [r.prompt_ids, r.completion_ids, r.text, r.old_logp, r.truncated]
    return fields if r.sampling_logp is None else [*fields, r.sampling_logp]


def sample_groups(trainer: StepContext, tasks: list[Task], step: int, round_: int) -> Batch:
    """Sample group_size completions for each task and clean them into candidates."""
    config, policy = trainer.config, trainer.policy
    started = time.perf_counter()
    prompts = build_prompts(
        tasks, policy.style, policy.tokenizer, show_goal=trainer.show_goal, budget=config.max_prompt_tokens
    )
    rollouts = trainer.backend.generate(
        prompts,
        num_return=config.group_size,
        max_new_tokens=config.max_new_tokens,
        temperature=config.temperature,
        top_p=config.top_p,
        seed=generation_seed(trainer.ranks.seed(config.seed), step, round_),
    )
    groups = []
    for index, task in enumerate(tasks):
        mine = rollouts[index * config.group_size : (index + 1) * config.group_size]
        candidates = [policy.style.candidate(r.text, task.indent) for r in mine]
        groups.append(Group(task, mine, candidates))
    return Batch(step, groups, time.perf_counter() - started)


def verify_groups(verifier: Verifier, batch: Batch) -> PendingCheck:
    return send(verifier, batch.items())


@dataclass
class StepRecord:
    """A batch with verdicts, and the timings of getting them."""

    groups: list[Group]
    """Groups the optimiser trains on."""
    all_groups: list[Group]
    """Every group checked for this step (dynamic sampling may leave some out of training)."""
    gen_seconds: float
    verify_seconds: float
    verify_wait_seconds: float

    @staticmethod
    def collect(
        batch: Batch, check: PendingCheck, verifier: Verifier, silence_s: float, stop: threading.Event
    ) -> StepRecord:
        verdicts, waited = check.collect(verifier, silence_s, stop)
        at = 0
        groups = []
        for group in batch.groups:
            count = len(group.candidates)
            groups.append(replace(group, verdicts=verdicts[at : at + count]))
            at += count
        return StepRecord(groups, list(groups), batch.gen_seconds, check.seconds, waited)

    def merged(self, other: StepRecord) -> StepRecord:
        return StepRecord(
            self.groups + other.groups,
            self.all_groups + other.all_groups,
            self.gen_seconds + other.gen_seconds,
            self.verify_seconds + other.verify_seconds,
            self.verify_wait_seconds + other.verify_wait_seconds,
        )

    def with_training_groups(self, groups: list[Group], all_groups: list[Group]) -> StepRecord:
        return replace(self, groups=groups, all_groups=all_groups)

    def verdicts(self) -> list[Verdict]:
        return [v for g in self.all_groups for v in g.verdicts]

    def first_attempts(self) -> list[Verdict]:
        """The verdicts of the step's first attempts (repair turns left out): what the pass rate measures."""
        return [v for g in self.all_groups for v, turn in zip(g.verdicts, g.sample_turns(), strict=True) if turn == 0]

    def repairs(self) -> list[Verdict]:
        """The verdicts of the step's repair turns."""
        return [v for g in self.all_groups for v, turn in zip(g.verdicts, g.sample_turns(), strict=True) if turn > 0]

    def kind_results(self, timeout_reward: str) -> dict[str, tuple[int, int]]:
        """(proved, checked and not masked) per hole kind, over the step's first attempts (the curriculum's pass
        rates are the policy's, not what repair turns add)."""
        out: dict[str, tuple[int, int]] = {}
        for group in self.all_groups:
            proved, checked = out.get(group.task.kind, (0, 0))
            for verdict, turn in zip(group.verdicts, group.sample_turns(), strict=True):
                if turn == 0 and not verdict.masked(timeout_reward):
                    checked += 1
                    proved += verdict.kind == "proved"
            out[group.task.kind] = (proved, checked)
        return out

    def sample_lines(self, step: int) -> list[dict[str, Any]]:
        return [
            {
                "step": step,
                "task_id": g.task.id,
                "kind": g.task.kind,
                "candidate": c,
                "verdict": v.kind,
                "reward": v.reward,
                **({"turn": turn} if turn else {}),
            }
            for g in self.all_groups
            for c, v, turn in zip(g.candidates, g.verdicts, g.sample_turns(), strict=True)
        ]


def score(
    algorithm: Algorithm,
    verdicts: Sequence[Verdict],
    mask: torch.Tensor,
    group_ids: torch.Tensor,
    *,
    lengths: Sequence[int],
    truncated: Sequence[bool],
    timeout_reward: str,
    discounts: Sequence[float] | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """What the loss needs from the verdicts: rewards [B] (discounted for repair turns, shaped; NaN where masked),
    advantages [B] and the token mask [B, T] with masked samples (fim_rlvr.core.outcomes) and the algorithm's own
    filtering taken out. `discounts[B]`: repair_discount ** turn per sample (None: all 1). Pure: the masking bandit
    test runs the trainer's loss through it."""
    device = mask.device
    masked = torch.tensor([v.masked(timeout_reward) for v in verdicts], dtype=torch.bool)  # [B]
    rewards = torch.tensor(
        [training_reward(v.kind, v.cause, v.reward, timeout_reward) for v in verdicts], dtype=torch.float32
    )  # [B], NaN where masked
    if discounts is not None:
        rewards = rewards * torch.tensor(list(discounts), dtype=torch.float32)  # [B], NaN stays NaN
    rewards = algorithm.shape_rewards(rewards, torch.tensor(lengths, dtype=torch.float32))  # [B], NaN stays NaN
    advantages = algorithm.advantages(rewards, group_ids).to(device)  # [B]
    mask = mask * (~masked).to(mask.dtype).to(device).unsqueeze(1)  # [B, T]
    mask = algorithm.completion_mask(mask, torch.tensor(truncated, dtype=torch.bool, device=device))  # [B, T]
    return rewards, advantages, mask


def metrics_line(
    trainer: StepContext, record: StepRecord, step: int, loss: float, algo: Mapping[str, float], opt_seconds: float
) -> dict[str, Any]:
    timeout_reward = trainer.config.timeout_reward
    verdicts = record.verdicts()
    firsts = record.first_attempts()
    unmasked = [v for v in firsts if not v.masked(timeout_reward)]
    repairs = record.repairs()
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict.kind] = counts.get(verdict.kind, 0) + 1
    results = record.kind_results(timeout_reward)
    tokens = sum(len(r.completion_ids) for g in record.all_groups for r in g.rollouts)
    lr = trainer.optimizer.param_groups[0]["lr"] if trainer.optimizer is not None else 0.0
    return {
        "step": step,
        "loss": round(loss, 6),
        "reward_mean": round(sum(training_reward(v.kind, v.cause, v.reward) for v in unmasked) / len(unmasked), 6)
        if unmasked
        else 0.0,
        "pass_rate": round(sum(v.kind == "proved" for v in unmasked) / len(unmasked), 6) if unmasked else 0.0,
        "pass_rate_by_kind": {k: round(p / c, 6) for k, (p, c) in results.items() if c},
        "kl": round(float(algo.get("kl", 0.0)), 6),
        "clip_fraction": round(
            float(algo.get("clip_fraction_low", 0.0)) + float(algo.get("clip_fraction_high", 0.0)), 6
        ),
        "tokens": tokens,
        "gen_seconds": round(record.gen_seconds, 4),
        "verify_seconds": round(record.verify_seconds, 4),
        "verify_wait_seconds": round(record.verify_wait_seconds, 4),
        "opt_seconds": round(opt_seconds, 4),
        "cache_hits": sum(v.cached for v in verdicts),
        "verdicts": counts,
        "masked_samples": sum(v.masked(timeout_reward) for v in verdicts),
        "timeout_rate": round(counts.get("timeout", 0) / len(verdicts), 6) if verdicts else 0.0,
        "candidate_timeouts": sum(v.kind == "timeout" and v.cause == "candidate" for v in verdicts),
        "tokens_per_second": round(tokens / record.gen_seconds, 2) if record.gen_seconds > 0 else 0.0,
        "checks_per_second": round(len(verdicts) / record.verify_seconds, 2) if record.verify_seconds > 0 else 0.0,
        "lr": lr,
        "groups_trained": len(record.groups),
        **(
            {"repair_samples": len(repairs), "repair_proved": sum(v.kind == "proved" for v in repairs)}
            if repairs
            else {}
        ),
        **{k: round(float(v), 6) for k, v in algo.items() if k in MISMATCH_KEYS},
    }
