"""A batch's deadline grows with what the verifier has to do, so a slow verifier that works never produces masked
samples: the masked verdict is left for a verifier that really stopped answering.

The loophole this closes: with a fixed deadline, a policy whose every candidate hangs until the check's own time
limit makes a large batch outlast the deadline, and its samples were then masked as the infrastructure's fault
(no gradient) instead of being scored as the candidate's failures.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

import pytest
from fakes import RecordingEvents

from fim_rlvr.config import from_dict
from fim_rlvr.metrics import RunFiles
from fim_rlvr.protocol import BatchVerdict, VerifyItem
from fim_rlvr.train import Trainer
from fim_rlvr.verify import Budget, batch_deadline_s, items_in_flight

IDENTITY = {"kind": "simulator", "version": "slow", "label": "slow pool (test double, not Lean)"}


class EveryCandidateHangs:
    """A verifier that works but is slow, like the pool facing a policy whose every candidate hangs: `slots` checks
    at a time in the order submitted, each running to its time limit and answered as the candidate's timeout."""

    def __init__(self, slots: int, check_s: float) -> None:
        self.check_s = check_s
        self.free_at = [0.0] * slots
        self.lock = threading.Lock()

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        future: Future[list[BatchVerdict]] = Future()
        with self.lock:
            now = time.monotonic()
            done = now
            for _ in items:
                slot = min(range(len(self.free_at)), key=self.free_at.__getitem__)
                self.free_at[slot] = max(now, self.free_at[slot]) + self.check_s
                done = max(done, self.free_at[slot])
        verdicts: list[BatchVerdict] = [
            {
                "taskId": item["taskId"],
                "kind": "timeout",
                "cause": "candidate",
                "reward": 0.0,
                "rewardMetrics": {"proved": 0.0},
                "diagnostics": [],
                "elapsedMs": self.check_s * 1000,
                "cached": False,
                "verifier": IDENTITY,  # type: ignore[typeddict-item]
            }
            for item in items
        ]
        timer = threading.Timer(done - now, future.set_result, args=(verdicts,))
        timer.daemon = True
        timer.start()
        return future

    def cancel(self, future: Future[list[BatchVerdict]]) -> None:
        return None


SLOTS = 2
CHECK_S = 0.4
CONFIG = {
    "steps": 2,
    "sft_steps": 0,
    "batch_size": 2,
    "group_size": 4,
    "max_new_tokens": 4,
    "eval_limit": 2,
    "checkpoint_every": 10,
    "curriculum": False,
    "verify_timeout_s": 0.05,  # far less than one wave of checks takes
}


def run(dataset: Path, folder: Path, budget: Budget | None) -> list[dict[str, object]]:
    trainer = Trainer(
        from_dict(CONFIG),
        dataset,
        folder,
        resume=False,
        verifier=EveryCandidateHangs(SLOTS, CHECK_S),
        events=RecordingEvents(),
        verifier_budget=budget,
    )
    trainer.prepare()
    trainer.run()
    return RunFiles(folder).read_metrics()


def test_a_slow_verifier_that_works_never_produces_masked_samples(toy_dataset: Path, tmp_path: Path) -> None:
    budget = Budget(slots=SLOTS, check_timeout_s=CHECK_S, check_bound_s=CHECK_S)
    lines = run(toy_dataset, tmp_path / "budget", budget)
    assert [m["step"] for m in lines] == [1, 2]
    assert [m["masked_samples"] for m in lines] == [0, 0], lines
    assert [m["verdicts"] for m in lines] == [{"timeout": 8}, {"timeout": 8}], "the candidates' own timeouts"
    assert [m["candidate_timeouts"] for m in lines] == [8, 8]


def test_without_the_budget_the_same_verifier_is_mistaken_for_a_dead_one(toy_dataset: Path, tmp_path: Path) -> None:
    # The old rule (a fixed deadline): the comparison above can fail.
    lines = run(toy_dataset, tmp_path / "fixed", None)
    assert all(m["masked_samples"] == 8 for m in lines), lines


def test_the_deadline_grows_with_the_batch_and_shrinks_with_slots() -> None:
    budget = Budget(slots=4, check_timeout_s=60.0, check_bound_s=360.0)
    small = items_in_flight(world=1, batch_items=8, measured_items=10)
    large = items_in_flight(world=2, batch_items=64, measured_items=10)
    assert small == 26 and large == 266
    assert batch_deadline_s(budget, small, 120.0) == 120.0 + 7 * 360.0
    assert batch_deadline_s(budget, large, 120.0) == 120.0 + 67 * 360.0
    assert batch_deadline_s(Budget(8, 60.0, 360.0), large, 120.0) < batch_deadline_s(budget, large, 120.0)
    assert batch_deadline_s(None, large, 120.0) == 120.0


def test_a_budget_from_the_wire_is_checked() -> None:
    budget = Budget.from_wire({"slots": 4, "checkTimeoutMs": 60_000, "checkBoundMs": 360_000})
    assert budget == Budget(4, 60.0, 360.0)
    for bad in (None, {"slots": 0, "checkTimeoutMs": 1, "checkBoundMs": 2}, {"slots": 1, "checkTimeoutMs": 5}):
        with pytest.raises(ValueError, match="verifierBudget"):
            Budget.from_wire(bad)
