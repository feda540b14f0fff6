"""Held-out pass@1: one greedy completion per test hole, checked by the host, reported per hole kind."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from .data import Task
from .policy import Policy
from .prompts import build_prompts
from .protocol import VerifyItem
from .rollout import RolloutBackend
from .verify import Verifier, send


@dataclass(frozen=True)
class EvalResult:
    pass_at_1: float
    by_kind: dict[str, float]
    tasks: int
    masked: int
    """Holes whose check timed out or crashed (counted as not proved)."""

    def to_json(self) -> dict[str, object]:
        return {"pass_at_1": self.pass_at_1, "by_kind": self.by_kind, "tasks": self.tasks, "masked": self.masked}


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
    deadline_s: float,
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
    verdicts, _ = send(verifier, items).collect(verifier, deadline_s, stop)
    proved: dict[str, int] = {}
    total: dict[str, int] = {}
    for task, verdict in zip(tasks, verdicts, strict=True):
        total[task.kind] = total.get(task.kind, 0) + 1
        proved[task.kind] = proved.get(task.kind, 0) + (verdict.kind == "proved")
    wins = sum(proved.values())
    return EvalResult(
        pass_at_1=wins / len(tasks),
        by_kind={k: proved[k] / total[k] for k in total},
        tasks=len(tasks),
        masked=sum(v.masked for v in verdicts),
    )
