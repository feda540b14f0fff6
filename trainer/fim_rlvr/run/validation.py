"""The validation curve: every `validation_every` RL steps, greedy pass@1 and the unbiased pass@k on the validation
split, so a run shows when it learned (or stopped learning), not only a before/after pair.

pass@k is the unbiased estimator of Chen et al. (arXiv 2107.03374): from n completions of a task of which c check,
pass@k = 1 - C(n-c, k) / C(n, k), computed as a product (no huge binomials) and averaged over tasks. The n
completions are sampled at the training temperature and top_p, so pass@k says what RL's own sampling can reach;
the greedy completion gives pass@1 as the held-out evaluation measures it. A check that says nothing about the model
(an infrastructure fault) counts as not proved: the estimate can only be pessimistic, never flattered.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.protocol import VerifyItem
from ..model.policy import Policy
from ..model.rollout import RolloutBackend
from ..tasks.clean import clean_completion
from ..tasks.data import Task
from ..tasks.prompts import build_prompts
from ..verifier.check import Verifier, send
from .estimators import ks_for, pass_at_k
from .evaluate import by_novelty

__all__ = ["ValidationResult", "ks_for", "pass_at_k", "validate"]


@dataclass(frozen=True)
class ValidationResult:
    """One point of the validation curve."""

    step: int
    tasks: int
    greedy_pass_at_1: float
    pass_at_k: dict[str, float]
    """k (as a string, JSON's keys) -> mean unbiased pass@k over the tasks, from `samples` completions each."""
    samples: int
    temperature: float
    by_novelty: dict[str, dict[str, float]]
    """"novel" / "memorised" / "unknown" -> {greedy_pass_at_1, pass_at_<n>, tasks} (only the groups present)."""
    masked: int
    """Checks that said nothing about the model (counted as not proved)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "split": "validation",
            "tasks": self.tasks,
            "greedy_pass_at_1": round(self.greedy_pass_at_1, 6),
            "pass_at_k": {k: round(v, 6) for k, v in self.pass_at_k.items()},
            "samples": self.samples,
            "temperature": self.temperature,
            "by_novelty": self.by_novelty,
            "masked": self.masked,
        }


def validate(
    policy: Policy,
    backend: RolloutBackend,
    verifier: Verifier,
    tasks: Sequence[Task],
    *,
    step: int,
    samples: int,
    temperature: float,
    top_p: float,
    seed: int,
    max_new_tokens: int,
    show_goal: bool,
    budget: int,
    silence_s: float,
    stop: threading.Event | None = None,
) -> ValidationResult:
    """Greedy and sampled completions for `tasks`, checked in one batch; the point of the curve at `step`."""
    prompts = build_prompts(tasks, policy.style, policy.tokenizer, show_goal=show_goal, budget=budget)
    greedy = backend.generate(prompts, num_return=1, max_new_tokens=max_new_tokens, temperature=0.0, top_p=1.0, seed=0)
    sampled = backend.generate(
        prompts, num_return=samples, max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, seed=seed
    )
    fim = policy.style.fim is not None
    per_task = 1 + samples
    items: list[VerifyItem] = []
    for index, task in enumerate(tasks):
        for rollout in [greedy[index], *sampled[index * samples : (index + 1) * samples]]:
            text = clean_completion(rollout.text, indent=task.indent, stops=policy.style.stop_strings, fim=fim)
            items.append({"taskId": task.id, "candidate": text})
    verdicts, _ = send(verifier, items).collect(verifier, silence_s, stop)
    proved = [v.kind == "proved" for v in verdicts]
    ks = ks_for(samples)
    rows: list[tuple[bool, dict[int, float]]] = []
    for index in range(len(tasks)):
        mine = proved[index * per_task : (index + 1) * per_task]
        rows.append((mine[0], {k: pass_at_k(samples, sum(mine[1:]), k) for k in ks}))
    count = max(1, len(rows))

    def summarise(members: list[tuple[bool, dict[int, float]]]) -> dict[str, float]:
        return {
            "greedy_pass_at_1": round(sum(r[0] for r in members) / len(members), 6),
            f"pass_at_{samples}": round(sum(r[1][samples] for r in members) / len(members), 6),
        }

    return ValidationResult(
        step=step,
        tasks=len(rows),
        greedy_pass_at_1=sum(r[0] for r in rows) / count,
        pass_at_k={str(k): sum(r[1][k] for r in rows) / count for k in ks},
        samples=samples,
        temperature=temperature,
        by_novelty=by_novelty(tasks, rows, summarise),
        masked=sum(v.outside_candidate_control for v in verdicts),
    )
