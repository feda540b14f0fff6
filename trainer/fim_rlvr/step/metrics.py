"""The metrics.jsonl line of one RL step, from its record (samples and verdicts) and what the optimiser did; and the
warning when the clip removed most of a step's gradient."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..algorithms.base import Algorithm
from ..algorithms.importance import MISMATCH_KEYS
from ..core.outcomes import training_reward
from .batch import StepRecord
from .optimise import StepResult


def metrics_line(record: StepRecord, step: int, result: StepResult, timeout_reward: str) -> dict[str, Any]:
    """The step's metrics.jsonl line (trainer/README.md lists its keys)."""
    verdicts = record.verdicts()
    firsts = record.first_attempts()
    unmasked = [v for v in firsts if not v.masked(timeout_reward)]
    repairs = record.repairs()
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict.kind] = counts.get(verdict.kind, 0) + 1
    results = record.kind_results(timeout_reward)
    tokens = sum(len(r.completion_ids) for g in record.all_groups for r in g.rollouts)
    tokens_trained = sum(len(r.completion_ids) for g in record.groups for r in g.rollouts)
    algo = result.metrics
    return {
        "step": step,
        "loss": round(result.loss, 6),
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
        "tokens_trained": tokens_trained,
        "gen_seconds": round(record.gen_seconds, 4),
        "verify_seconds": round(record.verify_seconds, 4),
        "verify_wait_seconds": round(record.verify_wait_seconds, 4),
        "opt_seconds": round(result.seconds, 4),
        "cache_hits": sum(v.cached for v in verdicts),
        "verdicts": counts,
        "masked_samples": sum(v.masked(timeout_reward) for v in verdicts),
        "timeout_rate": round(counts.get("timeout", 0) / len(verdicts), 6) if verdicts else 0.0,
        "candidate_timeouts": sum(v.kind == "timeout" and v.cause == "candidate" for v in verdicts),
        "tokens_per_second": round(tokens / record.gen_seconds, 2) if record.gen_seconds > 0 else 0.0,
        "checks_per_second": round(len(verdicts) / record.verify_seconds, 2) if record.verify_seconds > 0 else 0.0,
        "lr": result.lr,
        "groups_trained": len(record.groups),
        **(
            {"repair_samples": len(repairs), "repair_proved": sum(v.kind == "proved" for v in repairs)}
            if repairs
            else {}
        ),
        **{k: round(float(v), 6) for k, v in algo.items() if k in MISMATCH_KEYS},
        "optimizer_steps": result.optimizer_steps,
    }


CLIP_WARNING_SHARE = 0.5
"""A step whose clip removed the gradient of at least this share of its terms gets a warning."""
CLIP_WARNING_EVERY = 10
"""Steps between two repeats of that warning."""


@dataclass
class ClipWarning:
    """Says so when the clip removed most of a step's gradient (GSPO's 3e-4 range is narrow: with the verification
    overlap the policy has moved one step between sampling and training), at most once every CLIP_WARNING_EVERY
    steps. One per run: the Trainer holds it."""

    last_step: int | None = None

    def check(self, algorithm: Algorithm, clip_fraction: float, step: int) -> str | None:
        """The warning for this step, or None."""
        if clip_fraction < CLIP_WARNING_SHARE:
            return None
        if self.last_step is not None and step - self.last_step < CLIP_WARNING_EVERY:
            return None
        self.last_step = step
        config = algorithm.config
        unit = "informative sequences" if algorithm.metrics_unit == "sequences" else "tokens"
        return (
            f"step {step}: {algorithm.name}'s clip removed the gradient of {clip_fraction:.0%} of the {unit} (clip "
            f"range 1 - {config.epsilon:g} .. 1 + {config.clip_high:g}); the policy moves further than that between "
            "sampling and training, so most samples teach nothing. Widen epsilon / epsilon_high in algo_config or "
            "lower learning_rate"
        )
