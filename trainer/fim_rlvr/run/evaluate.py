"""Held-out pass@1: one greedy completion per test hole, checked by the host, reported per hole kind and, when the
dataset marks its test tasks `novel` (their middle occurs nowhere in the training split) or not, separately for
novel and memorised holes: a score on memorised holes measures recall, only the novel ones measure learning."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from ..core.protocol import VerifyItem
from ..model.policy import Policy
from ..model.rollout import RolloutBackend
from ..tasks.data import Task
from ..tasks.prompts import build_prompts
from ..verifier.check import Verifier, send


@dataclass(frozen=True)
class EvalResult:
    pass_at_1: float
    by_kind: dict[str, float]
    tasks: int
    masked: int
    """Holes whose check said nothing about the model (infrastructure fault or environment; counted as not proved)."""
    by_novelty: dict[str, dict[str, float]] = field(default_factory=dict)
    """"novel" / "memorised" (/ "unknown" when only some tasks say) -> {pass_at_1, tasks}; empty when no task says."""
    proved: list[str] = field(default_factory=list)
    """Ids of the tasks proved, for paired comparisons of runs on the same tasks (bench/seeds.ts)."""

    def to_json(self) -> dict[str, object]:
        return {
            "pass_at_1": self.pass_at_1,
            "by_kind": self.by_kind,
            "tasks": self.tasks,
            "masked": self.masked,
            "by_novelty": self.by_novelty,
            "proved": self.proved,
        }


NOVELTY_GROUPS = ("novel", "memorised", "unknown")
Row = TypeVar("Row")


def novelty_of(task: Task) -> str:
    """ "novel", "memorised" or "unknown" (a dataset that does not mark its test tasks)."""
    return "unknown" if task.novel is None else "novel" if task.novel else "memorised"


def by_novelty(
    tasks: Sequence[Task], rows: Sequence[Row], summarise: Callable[[list[Row]], dict[str, float]]
) -> dict[str, dict[str, float]]:
    """`summarise` of each novelty group's rows (rows[i] belongs to tasks[i]), with its task count. Empty when no
    task is marked; "unknown" appears only beside marked tasks."""
    names = [novelty_of(t) for t in tasks]
    if all(n == "unknown" for n in names):
        return {}
    out: dict[str, dict[str, float]] = {}
    for group in NOVELTY_GROUPS:
        members = [row for row, name in zip(rows, names, strict=True) if name == group]
        if members:
            out[group] = {**summarise(members), "tasks": len(members)}
    return out


def eval_subset(tasks: Sequence[Task], limit: int | None, seed: int) -> list[Task]:
    """All tasks, or a seeded sample of `limit` of them kept in file order."""
    if limit is None or limit >= len(tasks):
        return list(tasks)
    keep = set(random.Random(f"{seed}:eval").sample(range(len(tasks)), limit))
    return [t for i, t in enumerate(tasks) if i in keep]


def pass_at_1(
    policy: Policy,
    backend: RolloutBackend,
    verifier: Verifier,
    tasks: Sequence[Task],
    *,
    max_new_tokens: int,
    show_goal: bool,
    budget: int,
    silence_s: float,
    stop: threading.Event | None = None,
) -> EvalResult:
    """Greedy completions for `tasks`, cleaned and verified in one batch."""
    if not tasks:
        return EvalResult(0.0, {}, 0, 0)
    prompts = build_prompts(tasks, policy.style, policy.tokenizer, show_goal=show_goal, budget=budget)
    rollouts = backend.generate(
        prompts, num_return=1, max_new_tokens=max_new_tokens, temperature=0.0, top_p=1.0, seed=0
    )
    items: list[VerifyItem] = [
        {"taskId": t.id, "candidate": policy.style.candidate(r.text, t.indent)}
        for t, r in zip(tasks, rollouts, strict=True)
    ]
    verdicts, _ = send(verifier, items).collect(verifier, silence_s, stop)
    proved: dict[str, int] = {}
    total: dict[str, int] = {}
    for task, verdict in zip(tasks, verdicts, strict=True):
        total[task.kind] = total.get(task.kind, 0) + 1
        proved[task.kind] = proved.get(task.kind, 0) + (verdict.kind == "proved")
    wins = sum(proved.values())
    solved = [v.kind == "proved" for v in verdicts]
    return EvalResult(
        pass_at_1=wins / len(tasks),
        by_kind={k: proved[k] / total[k] for k in total},
        tasks=len(tasks),
        masked=sum(v.outside_candidate_control for v in verdicts),
        by_novelty=by_novelty(tasks, solved, lambda rows: {"pass_at_1": sum(rows) / len(rows)}),
        proved=[t.id for t, ok in zip(tasks, solved, strict=True) if ok],
    )
