"""fim_rlvr.core.outcomes: the one rule for what trains the model, as every consumer reads it (the loop's Verdict, the
TRL and verl adapters' wire verdicts)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from fim_rlvr.core.outcomes import cause_of, is_masked, outside_candidate_control, training_reward
from fim_rlvr.core.protocol import Verdict
from fim_rlvr.integrations._scoring import reward_or_none

IDENTITY = {"kind": "simulator", "version": "t", "label": "test (not Lean)"}


def wire(kind: str, reward: float = 0.0, **extra: Any) -> Any:
    return {
        "taskId": "t",
        "kind": kind,
        "reward": reward,
        "rewardMetrics": {},
        "diagnostics": [],
        "elapsedMs": 1.0,
        "cached": False,
        "verifier": IDENTITY,
        **extra,
    }


@pytest.mark.parametrize(
    ("kind", "cause", "failure", "mask"),
    [
        ("proved", None, False, False),
        ("failed", None, False, False),
        ("rejected", None, False, False),
        ("incomplete", None, False, False),
        ("environment", None, True, True),
        ("timeout", "infrastructure", True, True),
        ("crashed", "infrastructure", True, True),
        ("timeout", "candidate", False, True),
        ("timeout", None, False, True),  # absent: the candidate's (fail closed)
        ("timeout", "the moon", False, True),  # unknown: the candidate's
        ("crashed", "candidate", False, False),  # timeout_reward governs timeouts only
        ("crashed", None, False, False),
    ],
)
def test_what_is_masked(kind: str, cause: str | None, failure: bool, mask: bool) -> None:
    assert is_masked(kind, cause, "failure") is failure
    assert is_masked(kind, cause, "mask") is mask
    verdict = Verdict.from_wire(wire(kind, **({"cause": cause} if cause is not None else {})))
    assert verdict.masked("failure") is failure and verdict.masked("mask") is mask


def test_cause_is_read_only_for_timeouts_and_crashes() -> None:
    assert cause_of("timeout", None) == "candidate" and cause_of("crashed", "infrastructure") == "infrastructure"
    assert cause_of("failed", "infrastructure") is None  # a failure cannot be declared the infrastructure's
    assert not outside_candidate_control("failed", "infrastructure")
    assert Verdict.from_wire(wire("failed", cause="infrastructure")).cause is None


def test_the_reward_is_the_hosts_never_recomputed_and_nan_only_when_masked() -> None:
    # The host's rewards.ts is the one place rewards are computed (a timeout or crash earns 0 there in every mode:
    # test/unit/rewardsProperties.test.ts); the trainer only decides what is masked.
    assert training_reward("timeout", "candidate", 0.0) == 0.0
    assert training_reward("crashed", None, 0.0) == 0.0
    assert math.isnan(training_reward("timeout", "infrastructure", 0.0))
    assert math.isnan(training_reward("timeout", "candidate", 0.0, "mask"))
    assert training_reward("incomplete", None, 0.25) == 0.25


def test_verdicts_the_trainer_makes_up_are_the_infrastructures() -> None:
    for kind in ("timeout", "crashed"):
        made_up = Verdict.not_checked("t", kind, "no answer")
        assert made_up.cause == "infrastructure" and made_up.masked() and made_up.outside_candidate_control


def test_the_integrations_score_by_the_same_rule() -> None:
    assert reward_or_none(wire("timeout")) == 0.0  # TRL used to get None here: a way out for a hanging policy
    assert reward_or_none(wire("timeout", cause="candidate"), "mask") is None
    assert reward_or_none(wire("crashed", cause="infrastructure")) is None
    assert reward_or_none(wire("environment")) is None
    assert reward_or_none(wire("proved", 1.0)) == 1.0
