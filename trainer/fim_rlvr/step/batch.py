"""The data of one RL step: a Group is one prompt's G completions, a Batch is one generation round's groups (what the
overlap keeps in flight: step/sample.py makes it), a StepRecord is a batch with its verdicts (collected from the
verifier; step/repair_turns.py may add repair turns). step/optimise.py trains on a record's groups and
step/metrics.py turns it into the metrics.jsonl line.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.outcomes import training_reward
from ..core.protocol import Verdict, VerifyItem
from ..model.rollout import Rollout
from ..tasks.data import Task
from ..verifier.check import PendingCheck, Verifier


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
        return self._results(lambda task: task.kind, timeout_reward)

    def file_results(self, timeout_reward: str) -> dict[str, tuple[int, int]]:
        """The same per Lean file of the task (the learnability sampler's unit)."""
        return self._results(lambda task: task.file, timeout_reward)

    def _results(self, key: Callable[[Task], str], timeout_reward: str) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for group in self.all_groups:
            proved, checked = out.get(key(group.task), (0, 0))
            for verdict, turn in zip(group.verdicts, group.sample_turns(), strict=True):
                if turn == 0 and not verdict.masked(timeout_reward):
                    checked += 1
                    proved += verdict.kind == "proved"
            out[key(group.task)] = (proved, checked)
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
