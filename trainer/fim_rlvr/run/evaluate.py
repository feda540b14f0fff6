"""Held-out pass@1: one greedy completion per test hole, checked by the host, reported per hole kind; when the
dataset marks its test tasks `novel` (their middle occurs nowhere in the training split) or not, separately for
novel and memorised holes (a score on memorised holes measures recall); and when it says how each is held out
(`heldOut`), separately for held-out instances (statements of families training has) and held-out families."""

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
from .estimators import ks_for, pass_at_k


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
    by_held_out: dict[str, dict[str, float]] = field(default_factory=dict)
    """"instance" / "family" (/ "unknown") -> {pass_at_1, tasks} (and pass_at_<n> with `samples`); empty when the
    dataset does not say."""
    samples: int = 0
    """Completions sampled per task for pass@k (0: greedy only)."""
    pass_at_k: dict[str, float] = field(default_factory=dict)
    """k (a string) -> mean unbiased pass@k over the tasks, from `samples` completions at the training temperature."""
    by_family: dict[str, dict[str, object]] = field(default_factory=dict)
    """Family (`file#Namespace.Section`, tasks/data.py `family_of`) -> {pass_at_1, tasks, pass_at_<n> with
    `samples`, proofs}: what the model learned per family. `proofs` lists the distinct candidates Lean accepted
    (greedy and sampled completions together), each with how many of those completions it was, most frequent first."""
    generated_sequences: int = 0
    """Completions this evaluation sampled (greedy and pass@k samples; each one verifier call)."""
    generated_tokens: int = 0
    """Their tokens."""

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "pass_at_1": self.pass_at_1,
            "by_kind": self.by_kind,
            "tasks": self.tasks,
            "masked": self.masked,
            "by_novelty": self.by_novelty,
            "by_held_out": self.by_held_out,
            "proved": self.proved,
            "by_family": self.by_family,
        }
        if self.samples:
            out |= {"samples": self.samples, "pass_at_k": self.pass_at_k}
        return out


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


HELD_OUT_GROUPS = ("instance", "family", "unknown")


def by_held_out(
    tasks: Sequence[Task], rows: Sequence[Row], summarise: Callable[[list[Row]], dict[str, float]]
) -> dict[str, dict[str, float]]:
    """`summarise` of the rows of held-out instances and of held-out families (rows[i] belongs to tasks[i]), with
    task counts. Empty when no task says; "unknown" appears only beside tasks that do."""
    names = [t.held_out if t.held_out in ("instance", "family") else "unknown" for t in tasks]
    if all(n == "unknown" for n in names):
        return {}
    out: dict[str, dict[str, float]] = {}
    for group in HELD_OUT_GROUPS:
        members = [row for row, name in zip(rows, names, strict=True) if name == group]
        if members:
            out[group] = {**summarise(members), "tasks": len(members)}
    return out


def by_family(
    tasks: Sequence[Task],
    rows: Sequence[Row],
    summarise: Callable[[list[Row]], dict[str, float]],
    accepted: Sequence[tuple[Task, str]],
) -> dict[str, dict[str, object]]:
    """Per family of `tasks` (rows[i] belongs to tasks[i]), in name order: `summarise` of its rows, its task count,
    and the distinct accepted proofs (`accepted`: (task, candidate) of every completion Lean proved) with their
    counts, most frequent first (ties by text)."""
    families = [t.family for t in tasks]
    proved = [(task.family, candidate) for task, candidate in accepted]
    out: dict[str, dict[str, object]] = {}
    for name in sorted(set(families)):
        members = [row for row, family in zip(rows, families, strict=True) if family == name]
        counts: dict[str, int] = {}
        for family, candidate in proved:
            if family == name:
                counts[candidate.strip()] = counts.get(candidate.strip(), 0) + 1
        proofs = [{"proof": p, "count": c} for p, c in sorted(counts.items(), key=lambda pc: (-pc[1], pc[0]))]
        out[name] = {**summarise(members), "tasks": len(members), "proofs": proofs}
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
    sampled: SampledPassAtK | None = None,
) -> EvalResult:
    """Greedy completions for `tasks` (and `sampled.samples` sampled ones each for pass@k), cleaned and verified in
    one batch."""
    if not tasks:
        return EvalResult(0.0, {}, 0, 0)
    prompts = build_prompts(tasks, policy.style, policy.tokenizer, show_goal=show_goal, budget=budget)
    rollouts = backend.generate(
        prompts, num_return=1, max_new_tokens=max_new_tokens, temperature=0.0, top_p=1.0, seed=0
    )
    n = sampled.samples if sampled is not None else 0
    drawn = (
        backend.generate(
            prompts,
            num_return=n,
            max_new_tokens=max_new_tokens,
            temperature=sampled.temperature,
            top_p=sampled.top_p,
            seed=sampled.seed,
        )
        if sampled is not None and n > 0
        else []
    )
    items: list[VerifyItem] = [
        {"taskId": t.id, "candidate": policy.style.candidate(r.text, t.indent)}
        for t, r in zip(tasks, rollouts, strict=True)
    ]
    owners = [t for t in tasks for _ in range(n)]
    items += [
        {"taskId": t.id, "candidate": policy.style.candidate(r.text, t.indent)}
        for t, r in zip(owners, drawn, strict=True)
    ]
    answered, _ = send(verifier, items).collect(verifier, silence_s, stop)
    accepted = [
        (owner, item["candidate"])
        for owner, item, verdict in zip([*tasks, *owners], items, answered, strict=True)
        if verdict.kind == "proved"
    ]
    verdicts, sampled_verdicts = answered[: len(tasks)], answered[len(tasks) :]
    proved: dict[str, int] = {}
    total: dict[str, int] = {}
    for task, verdict in zip(tasks, verdicts, strict=True):
        total[task.kind] = total.get(task.kind, 0) + 1
        proved[task.kind] = proved.get(task.kind, 0) + (verdict.kind == "proved")
    wins = sum(proved.values())
    solved = [v.kind == "proved" for v in verdicts]
    ks = ks_for(n) if n else []
    # Per task: greedy proved, and pass@k from its n samples.
    rows = [
        (ok, {k: pass_at_k(n, sum(v.kind == "proved" for v in sampled_verdicts[i * n : (i + 1) * n]), k) for k in ks})
        for i, ok in enumerate(solved)
    ]

    def summarise(members: list[tuple[bool, dict[int, float]]]) -> dict[str, float]:
        out = {"pass_at_1": sum(r[0] for r in members) / len(members)}
        if n:
            out[f"pass_at_{n}"] = sum(r[1][n] for r in members) / len(members)
        return out

    return EvalResult(
        pass_at_1=wins / len(tasks),
        by_kind={k: proved[k] / total[k] for k in total},
        tasks=len(tasks),
        masked=sum(v.outside_candidate_control for v in answered),
        by_novelty=by_novelty(tasks, solved, lambda rows: {"pass_at_1": sum(rows) / len(rows)}),
        proved=[t.id for t, ok in zip(tasks, solved, strict=True) if ok],
        by_held_out=by_held_out(tasks, rows, summarise),
        samples=n,
        pass_at_k={str(k): sum(r[1][k] for r in rows) / len(rows) for k in ks},
        by_family=by_family(tasks, rows, summarise, accepted),
        generated_sequences=len(rollouts) + len(drawn),
        generated_tokens=sum(len(r.completion_ids) for r in [*rollouts, *drawn]),
    )


@dataclass(frozen=True)
class SampledPassAtK:
    """How an evaluation samples for pass@k: `samples` completions per task at `temperature` and `top_p`."""

    samples: int
    temperature: float
    top_p: float
    seed: int
