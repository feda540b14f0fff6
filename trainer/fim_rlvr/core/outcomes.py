"""Which verdicts train the model and which are masked out: the one place this rule is written in Python.

A masked sample has no reward, no part in its group's statistics and no gradient. Masking is right only for an
outcome the candidate could not have chosen: when a sample the model *can* produce is masked while its failures
are pushed down, probability flows to whatever gets masked (tests/test_masking_bandit.py measures it on a
three-armed policy prove / fail / hang). So:

- `environment` (Lean cannot check anything in this workspace): masked; the host stops the run.
- `timeout` and `crashed` carry a `cause`. `infrastructure` (a batch answered with an error, a service connection
  lost, a worker lost to a fault the candidate did not cause): masked. A batch the verifier made no progress on is
  sent again once and then counted as the candidates' timeouts (fim_rlvr.verifier.check): a candidate that stalls
  the verifier must not earn the masked outcome. `candidate` (a check that ran
  past its own limit, `sleep`, a looping `simp`, a slow `decide`, a crash the candidate provoked): a failure,
  reward 0, kept in the group statistics. An absent or unknown cause reads as `candidate` (fail closed: a
  verifier that cannot say whose fault it was must not hand the candidate a way out).
- `timeout_reward: mask` (TrainConfig) masks the candidate's own timeouts too: the old behaviour, kept for
  comparison; it lets the policy drift toward hanging.

Every sample that is not masked is scored with the verifier's reward, computed once, on the host, by
lean-bridge/verify/rewards.ts (the reward modes live there: a timeout or crash earns 0 in every mode); the trainer
never recomputes it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

CAUSED_KINDS: frozenset[str] = frozenset({"timeout", "crashed"})
"""Verdict kinds whose fault may lie with the candidate or with the infrastructure (they carry a `cause`)."""
TIMEOUT_REWARDS: tuple[str, ...] = ("failure", "mask")


def cause_of(kind: str, cause: Any) -> str | None:
    """The cause of a verdict as the trainer reads it: `infrastructure` only when the verifier said so for a
    timeout or crash; `candidate` for any other timeout or crash (absent, null or unknown: fail closed); None for
    kinds that carry no cause."""
    if kind not in CAUSED_KINDS:
        return None
    return "infrastructure" if cause == "infrastructure" else "candidate"


def outside_candidate_control(kind: str, cause: Any) -> bool:
    """True when the outcome says nothing about the candidate: a broken environment, or an infrastructure fault."""
    return kind == "environment" or cause_of(kind, cause) == "infrastructure"


def is_masked(kind: str, cause: Any, timeout_reward: str = "failure") -> bool:
    """True when the sample must leave training (no reward, no group statistics, no gradient)."""
    if outside_candidate_control(kind, cause):
        return True
    return timeout_reward == "mask" and kind == "timeout"


def training_reward(kind: str, cause: Any, reward: float, timeout_reward: str = "failure") -> float:
    """The reward the optimiser sees: NaN when masked, else the verifier's reward as the host computed it."""
    if is_masked(kind, cause, timeout_reward):
        return math.nan
    return float(reward)


def wire_reward(verdict: Mapping[str, Any], timeout_reward: str = "failure") -> float | None:
    """`training_reward` of a wire BatchVerdict, None instead of NaN (TRL's convention for "leave this out")."""
    value = training_reward(
        str(verdict.get("kind", "environment")), verdict.get("cause"), float(verdict.get("reward", 0.0)), timeout_reward
    )
    return None if math.isnan(value) else value
