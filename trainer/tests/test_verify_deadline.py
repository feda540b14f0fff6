"""A batch counts as unanswered only when the verifier made no progress on it for one check's bound (plus slack), so a
slow verifier that works is never taken for a stalled one, however much work is queued, and a stalled one costs a
batch within that bound (the old deadline, slack + ceil(in flight / slots) x bound, was 21 hours on the example). An
unanswered batch is sent again once, then its items are the candidates' timeouts: never masked, since a candidate
that stalls the verifier must not earn the outcome training leaves out.

The loophole the bound closes: with a fixed deadline, a policy whose every candidate hangs until the check's own
time limit makes a large batch outlast the deadline, and its samples were then masked as the infrastructure's fault
(no gradient) instead of being scored as the candidate's failures. The deadline logic runs on a fake clock here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from fakes import RecordingEvents

from fim_rlvr.core.config import from_dict
from fim_rlvr.core.protocol import BatchVerdict, VerifyItem
from fim_rlvr.run.files import RunFiles
from fim_rlvr.run.trainer import Trainer
from fim_rlvr.verifier.check import Budget, PendingCheck, silence_bound_s
from fim_rlvr.verifier.progress import ProgressBook

IDENTITY = {"kind": "simulator", "version": "slow", "label": "slow pool (test double, not Lean)"}


class EveryCandidateHangs:
    """A verifier that works but is slow, like the pool facing a policy whose every candidate hangs: `slots` checks
    at a time in the order submitted, each running to its time limit and answered as the candidate's timeout."""

    def __init__(self, slots: int, check_s: float) -> None:
        self.submitted = 0
        self.check_s = check_s
        self.free_at = [0.0] * slots
        self.ends: list[float] = []
        self.lock = threading.Lock()

    def progress_at(self, future: Future[list[BatchVerdict]]) -> float | None:
        """As the service reports it: the latest check finished, of any batch (queued ones wait on those)."""
        now = time.monotonic()
        with self.lock:
            return max((end for end in self.ends if end <= now), default=None)

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        future: Future[list[BatchVerdict]] = Future()
        with self.lock:
            self.submitted += 1
            now = time.monotonic()
            done = now
            for _ in items:
                slot = min(range(len(self.free_at)), key=self.free_at.__getitem__)
                self.free_at[slot] = max(now, self.free_at[slot]) + self.check_s
                self.ends.append(self.free_at[slot])
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
    "compare": [],  # no baseline arm: its evaluation would be one more batch
    "verify_timeout_s": 0.05,  # far less than one wave of checks takes
}


def run(dataset: Path, folder: Path, budget: Budget | None) -> tuple[list[dict[str, object]], int]:
    """The run's metrics lines, and how many batches the verifier was sent."""
    verifier = EveryCandidateHangs(SLOTS, CHECK_S)
    trainer = Trainer(
        from_dict(CONFIG),
        dataset,
        folder,
        resume=False,
        verifier=verifier,
        events=RecordingEvents(),
        verifier_budget=budget,
    )
    trainer.prepare()
    trainer.run()
    return RunFiles(folder).read_metrics(), verifier.submitted


def test_a_slow_verifier_that_works_never_produces_masked_samples(toy_dataset: Path, tmp_path: Path) -> None:
    budget = Budget(slots=SLOTS, check_timeout_s=CHECK_S, check_bound_s=CHECK_S)
    lines, sent = run(toy_dataset, tmp_path / "budget", budget)
    assert sent == 4, "eval before, two steps, eval after: each batch once"
    assert [m["step"] for m in lines] == [1, 2]
    assert [m["masked_samples"] for m in lines] == [0, 0], lines
    assert [m["verdicts"] for m in lines] == [{"timeout": 8}, {"timeout": 8}], "the candidates' own timeouts"
    assert [m["candidate_timeouts"] for m in lines] == [8, 8]


def test_without_the_budget_the_same_verifier_is_taken_for_a_stalled_one(toy_dataset: Path, tmp_path: Path) -> None:
    # The slack alone (0.05 s) is shorter than one check (0.4 s): every batch is sent again, then counted. Before the
    # resend-then-count rule these samples were masked (the loophole); now they fail either way.
    lines, sent = run(toy_dataset, tmp_path / "fixed", None)
    assert sent == 8, "each batch twice"
    assert all(m["masked_samples"] == 0 and m["candidate_timeouts"] == 8 for m in lines), lines


def test_the_bound_is_one_check_plus_slack_whatever_is_in_flight() -> None:
    budget = Budget(slots=4, check_timeout_s=60.0, check_bound_s=360.0)
    assert silence_bound_s(budget, 120.0) == 480.0
    assert silence_bound_s(Budget(1, 60.0, 360.0), 120.0) == 480.0, "slots only change how long the whole takes"
    assert silence_bound_s(None, 120.0) == 120.0


class FakeClock:
    """Time that moves only when told, or by `tick` at every reading (the wait loop's progress)."""

    def __init__(self, tick: float = 0.0) -> None:
        self.now = 1000.0
        self.tick = tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


class ReportingVerifier:
    """Never answers; reports progress as the test says (`progress`: a function of the clock's time, or None)."""

    def __init__(self, clock: FakeClock, progress: Any = None) -> None:
        self.clock = clock
        self.progress = progress
        self.cancelled = 0
        self.submitted = 0

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        self.submitted += 1
        return Future()

    def cancel(self, future: Future[list[BatchVerdict]]) -> None:
        self.cancelled += 1

    def progress_at(self, future: Future[list[BatchVerdict]]) -> float | None:
        return None if self.progress is None else self.progress(self.clock.now)


class AnswersTheSecondSending(ReportingVerifier):
    """Drops the first sending of a batch (never answered, no progress), answers the second at once."""

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        future = super().submit(items)  # counts the sending
        if self.submitted == 2:
            future.set_result([verdict(i["taskId"]) for i in items])
        return future


class SilentVerifier:
    """Never answers and cannot report progress (an in-process stand-in without `progress_at`)."""

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        return Future()

    def cancel(self, future: Future[list[BatchVerdict]]) -> None:
        return None


ITEMS: list[VerifyItem] = [{"taskId": "t1", "candidate": "x"}, {"taskId": "t2", "candidate": "y"}]


def collect_on(clock: FakeClock, verifier: Any, silence_s: float) -> tuple[list[Any], float, float]:
    """The verdicts, the fake time at which collect gave up (or got them) and the time the batch was sent."""
    pending = PendingCheck(ITEMS, verifier.submit(ITEMS), clock=clock)
    sent = pending.sent_at
    assert sent is not None
    verdicts, _ = pending.collect(verifier, silence_s, poll_s=0.0)
    return verdicts, clock.now, sent


def test_progress_keeps_a_batch_alive_far_past_the_bound_and_its_end_starts_the_count() -> None:
    clock = FakeClock(tick=1.0)
    started = clock.now
    # Progress every second for 500 s (fifty bounds), then none: the verifier stalled. The batch is sent again at
    # 510 s, stalls again, and at 520 s its items are counted as the candidates' timeouts.
    verifier = ReportingVerifier(clock, lambda now: min(now, started + 500.0))
    verdicts, gave_up, _ = collect_on(clock, verifier, silence_s=10.0)
    assert started + 520.0 <= gave_up <= started + 523.0
    assert [v.kind for v in verdicts] == ["timeout", "timeout"]
    assert all(v.cause == "candidate" and not v.masked() for v in verdicts), "counted, never masked"
    assert "no progress on verify/batch for 10 s, twice" in verdicts[0].diagnostics[0]["message"]
    assert verifier.cancelled == 2 and verifier.submitted == 2


def test_no_progress_at_all_sends_the_batch_again_once_then_counts_it() -> None:
    for verifier_of in (lambda c: ReportingVerifier(c, lambda now: None), lambda c: SilentVerifier()):
        clock = FakeClock(tick=0.5)
        verdicts, gave_up, sent = collect_on(clock, verifier_of(clock), silence_s=10.0)
        assert sent + 20.0 <= gave_up <= sent + 21.5, "one bound per sending"
        assert all(v.kind == "timeout" and v.cause == "candidate" and not v.masked() for v in verdicts)


def test_a_batch_answered_after_it_was_sent_again_is_taken() -> None:
    clock = FakeClock(tick=0.5)
    verifier = AnswersTheSecondSending(clock)
    verdicts, gave_up, sent = collect_on(clock, verifier, silence_s=10.0)
    assert verifier.submitted == 2 and sent + 10.0 <= gave_up <= sent + 11.5
    assert [v.kind for v in verdicts] == ["timeout", "timeout"] and [v.cause for v in verdicts] == ["candidate"] * 2
    assert all(v.diagnostics == () for v in verdicts), "the verifier's own verdicts, not made-up ones"


def test_progress_older_than_the_sending_does_not_shorten_the_wait() -> None:
    clock = FakeClock(tick=0.5)
    verifier = ReportingVerifier(clock, lambda now: 0.0)  # long before the batch was sent
    _, gave_up, sent = collect_on(clock, verifier, silence_s=10.0)
    assert gave_up >= sent + 10.0


def test_an_answer_that_comes_while_progress_comes_is_taken() -> None:
    clock = FakeClock(tick=1.0)
    verifier = ReportingVerifier(clock, lambda now: now)
    pending = PendingCheck(ITEMS, verifier.submit(ITEMS), clock=clock)
    answer_at = clock.now + 300.0
    real_progress = verifier.progress

    def progress(now: float) -> float:
        if now >= answer_at and not pending.future.done():
            pending.future.set_result([verdict(i["taskId"]) for i in ITEMS])
        return float(real_progress(now))

    verifier.progress = progress
    verdicts, _ = pending.collect(verifier, 10.0, poll_s=0.0)
    assert [v.kind for v in verdicts] == ["timeout", "timeout"] and not any(v.masked() for v in verdicts)


def verdict(task_id: str) -> BatchVerdict:
    return {
        "taskId": task_id,
        "kind": "timeout",
        "cause": "candidate",
        "reward": 0.0,
        "rewardMetrics": {},
        "diagnostics": [],
        "elapsedMs": 1.0,
        "cached": False,
        "verifier": IDENTITY,  # type: ignore[typeddict-item]
    }


def test_a_queued_batch_lives_on_any_progress_and_a_sent_one_on_its_own_requests() -> None:
    clock = FakeClock()
    book = ProgressBook(clock)
    running, queued = Future[Any](), Future[Any]()
    running_watch, queued_watch = book.new_watch(), book.new_watch()
    book.follow(running, running_watch)
    book.follow(queued, queued_watch)
    request = book.sent(running_watch)
    assert book.progress_at(running) == clock.now == book.progress_at(queued)

    clock.now += 100.0
    book.heard({"batchId": request, "done": 1, "total": 4, "serviceDone": 1})
    assert book.progress_at(running) == clock.now, "its own request's progress"
    assert book.progress_at(queued) == clock.now, "not sent yet (the client's threads are busy): any progress"

    clock.now += 100.0
    book.heard({"batchId": "someone-else-1", "done": 1, "total": 1, "serviceDone": 9})
    assert book.progress_at(running) == clock.now - 100.0, "a note for no request in flight is ignored"

    second = book.sent(queued_watch)
    clock.now += 50.0
    book.heard({"batchId": second, "done": 0, "total": 2, "serviceDone": 10})
    assert book.progress_at(queued) == clock.now, "once sent, its own requests' notes"
    assert book.progress_at(running) == clock.now - 150.0, "the other batch's notes are not this one's"

    # A batch split in two requests has progressed as recently as its least recent one in flight.
    third = book.sent(queued_watch)
    clock.now += 10.0
    book.heard({"batchId": third, "done": 1, "total": 2, "serviceDone": 11})
    assert book.progress_at(queued) == clock.now - 10.0
    book.answered(queued_watch, second)
    assert book.progress_at(queued) == clock.now
    assert book.notes == 3

    running.set_result([])
    assert book.progress_at(running) is None, "forgotten once answered"


def test_a_budget_from_the_wire_is_checked() -> None:
    budget = Budget.from_wire({"slots": 4, "checkTimeoutMs": 60_000, "checkBoundMs": 360_000})
    assert budget == Budget(4, 60.0, 360.0)
    for bad in (None, {"slots": 0, "checkTimeoutMs": 1, "checkBoundMs": 2}, {"slots": 1, "checkTimeoutMs": 5}):
        with pytest.raises(ValueError, match="verifierBudget"):
            Budget.from_wire(bad)
