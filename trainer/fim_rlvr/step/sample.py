"""Sampling a step's completions: prompts from tasks, G completions each from the rollout backend, cleaned into the
candidates the verifier checks. Seeds are fixed by (run seed, rank, step, round), so a resumed run samples the same."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.config import TrainConfig
from ..model.policy import Policy
from ..model.rollout import Rollout, RolloutBackend
from ..tasks.data import Task
from ..tasks.prompts import build_prompts
from .batch import Batch, Group


@dataclass(frozen=True)
class Sampling:
    """What turning tasks into candidates needs: the policy (tokenizer and prompt style), the backend that samples,
    and the run's sampling settings."""

    policy: Policy
    backend: RolloutBackend
    show_goal: bool
    """Whether prompts show the goal at the hole."""
    max_prompt_tokens: int
    max_new_tokens: int
    temperature: float
    top_p: float
    seed: int
    """This rank's sampling seed (Ranks.seed of the run's seed)."""

    @staticmethod
    def of(config: TrainConfig, policy: Policy, backend: RolloutBackend, *, show_goal: bool, seed: int) -> Sampling:
        return Sampling(
            policy,
            backend,
            show_goal,
            config.max_prompt_tokens,
            config.max_new_tokens,
            config.temperature,
            config.top_p,
            seed,
        )

    def candidates(self, tasks: Sequence[Task], num_return: int, seed: int) -> tuple[list[Rollout], list[str]]:
        """`num_return` completions per task (task 0's first) and their cleaned candidates."""
        policy = self.policy
        prompts = build_prompts(
            tasks, policy.style, policy.tokenizer, show_goal=self.show_goal, budget=self.max_prompt_tokens
        )
        rollouts = self.backend.generate(
            prompts,
            num_return=num_return,
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
            top_p=self.top_p,
            seed=seed,
        )
        owners = [task for task in tasks for _ in range(num_return)]
        return rollouts, [policy.style.candidate(r.text, task.indent) for r, task in zip(rollouts, owners, strict=True)]


def generation_seed(seed: int, step: int, round_: int) -> int:
    """The sampling seed of one generation round: fixed by (run seed, step, round), so resumes repeat it."""
    return (seed * 1_000_003 + step * 1_009 + round_) % (2**31 - 1)


def sample_groups(sampling: Sampling, tasks: Sequence[Task], group_size: int, step: int, round_: int) -> Batch:
    """`group_size` completions for each task, cleaned into candidates: one Group per task."""
    started = time.perf_counter()
    rollouts, candidates = sampling.candidates(tasks, group_size, generation_seed(sampling.seed, step, round_))
    groups = [
        Group(task, rollouts[i * group_size : (i + 1) * group_size], candidates[i * group_size : (i + 1) * group_size])
        for i, task in enumerate(tasks)
    ]
    return Batch(step, groups, time.perf_counter() - started)
