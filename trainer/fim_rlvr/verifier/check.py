"""Checking candidates: the Verifier interface, and waiting on a check for as long as the verifier makes progress.

The only Verifier a run uses is the client of the run's verifier service (fim_rlvr.verifier.client); tests give
in-process stand-ins of the same shape. The loop sends a batch (`Verifier.submit`) and collects it later
(`PendingCheck.collect`), which is what lets the verification of step k overlap the generation of step k+1.

A batch counts as unanswered only when the verifier made no progress on it for `silence_bound_s`: the longest one
check can take on a verifier that works (the budget's `checkBoundMs`), plus slack. A verifier that reports progress
(`ReportsProgress`: the service's `verify/progress`, sent whenever any of its checks finishes) keeps every batch it
holds alive, the one being checked and the ones queued behind it, however long the whole takes. So a slow verifier
that works (a policy whose every candidate hangs until its own time limit, say) is never mistaken for one that
stopped: its timeouts come back as the candidates' failures. A batch on which the verifier made no progress at all for
the bound is sent again once, as the host retries a crashed check once; when the second sending makes no progress
either, its items are `timeout` verdicts counted as the candidates' (reward 0), never masked: a candidate that stalls
the verifier must not earn the masked outcome (docs/ALGORITHMS.md, "What is masked"). A batch answered with an error
becomes `crashed` with cause infrastructure (masked; the service client has already retried a lost connection). A
verifier that reports nothing is given the bound from each sending.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..core.protocol import BatchVerdict, Verdict, VerifyItem


class Verifier(Protocol):
    """Sends one verify/batch request; the future resolves to the verifier's verdicts (same order as items)."""

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]: ...

    def cancel(self, future: Future[list[BatchVerdict]]) -> None:
        """Tell the verifier the answer is no longer wanted (best effort)."""
        ...


@dataclass(frozen=True)
class Budget:
    """The verifier's limits as the trainer uses them (InitializeParams.verifierBudget)."""

    slots: int
    """Checks the verifier runs at once."""
    check_timeout_s: float
    """Its time limit of one check."""
    check_bound_s: float
    """The longest one check can take on a verifier that works (retries and server restarts included)."""

    @staticmethod
    def from_wire(raw: Any) -> Budget:
        """Parse a VerifierBudget; ValueError (saying what is wrong) for anything else."""
        try:
            budget = Budget(
                int(raw["slots"]), float(raw["checkTimeoutMs"]) / 1000.0, float(raw["checkBoundMs"]) / 1000.0
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"verifierBudget must be {{slots, checkTimeoutMs, checkBoundMs}}: {error!r}") from error
        if budget.slots < 1 or budget.check_bound_s < budget.check_timeout_s or budget.check_timeout_s <= 0:
            raise ValueError(f"verifierBudget is inconsistent: {raw}")
        return budget


def silence_bound_s(budget: Budget | None, slack_s: float) -> float:
    """How long a batch may wait without any progress of the verifier before it counts as unanswered: the longest
    one check can take on a verifier that works (when its limits are known), plus `slack_s` (the progress
    notifications' own delay, at most a second, among others)."""
    return slack_s + (budget.check_bound_s if budget is not None else 0.0)


@runtime_checkable
class ReportsProgress(Protocol):
    """A Verifier that can tell when it last made progress on a submitted batch."""

    def progress_at(self, future: Future[list[BatchVerdict]]) -> float | None:
        """The clock time (time.monotonic's) of the latest sign that the verifier works on this batch (on it or on
        the batches it waits behind); None when it cannot tell."""
        ...


class Stopped(Exception):
    """The run was asked to stop while waiting."""


@dataclass
class PendingCheck:
    """One verify/batch in flight."""

    items: list[VerifyItem]
    future: Future[list[BatchVerdict]]
    clock: Callable[[], float] = time.monotonic
    """The time source (tests give a fake one); progress times are on the same clock."""
    sent_at: float | None = None
    """When the batch was last sent (its sign of life until the verifier reports progress)."""
    answered_at: float | None = None
    first_sent_at: float | None = None
    """When the batch was first sent (`seconds` counts from there)."""
    resent: bool = False
    """Whether the batch was sent again after the verifier made no progress on it."""

    def __post_init__(self) -> None:
        if self.sent_at is None:
            self.sent_at = self.clock()
        self.first_sent_at = self.sent_at
        self.future.add_done_callback(self._mark_answered)

    def _mark_answered(self, _: Future[list[BatchVerdict]]) -> None:
        self.answered_at = self.clock()

    def last_progress(self, verifier: Verifier) -> float:
        """The latest sign of life for this batch: its sending, or the verifier's latest progress on it."""
        sent = self.sent_at if self.sent_at is not None else self.clock()
        heard = verifier.progress_at(self.future) if isinstance(verifier, ReportsProgress) else None
        return sent if heard is None else max(sent, heard)

    def collect(
        self, verifier: Verifier, silence_s: float, stop: threading.Event | None = None, *, poll_s: float = 0.05
    ) -> tuple[list[Verdict], float]:
        """The verdicts and how long this call blocked. A batch without progress for `silence_s` is sent again once,
        then its items are the candidates' timeouts; one answered with an error gets masked `crashed` verdicts. Raises
        Stopped when `stop` is set while waiting."""
        began = self.clock()
        while True:
            if self.future.done():
                try:
                    wire = self.future.result()
                except Exception as error:
                    return self._all("crashed", f"verify/batch failed: {error}"), self.clock() - began
                return self._parse(wire), self.clock() - began
            if stop is not None and stop.is_set():
                raise Stopped()
            remaining = self.last_progress(verifier) + silence_s - self.clock()
            if remaining <= 0:
                verifier.cancel(self.future)
                if not self.resent:
                    self._send_again(verifier)
                    continue
                why = (
                    f"the verifier made no progress on verify/batch for {silence_s:g} s, twice (the batch was sent "
                    "again once): counted as the candidates' timeouts"
                )
                return self._all("timeout", why, cause="candidate"), self.clock() - began
            try:
                self.future.exception(timeout=min(remaining, poll_s))
            except FutureTimeout:
                continue

    def _send_again(self, verifier: Verifier) -> None:
        """Submit the same items once more (the first future is cancelled and forgotten)."""
        self.resent = True
        self.answered_at = None
        self.sent_at = self.clock()
        self.future = verifier.submit(self.items)
        self.future.add_done_callback(self._mark_answered)

    @property
    def seconds(self) -> float:
        """Wall time from the first sending to the answer (or to now)."""
        end = self.answered_at if self.answered_at is not None else self.clock()
        return end - (self.first_sent_at if self.first_sent_at is not None else end)

    def _all(self, kind: str, why: str, cause: str = "infrastructure") -> list[Verdict]:
        return [Verdict.not_checked(item["taskId"], kind, why, cause) for item in self.items]

    def _parse(self, wire: Any) -> list[Verdict]:
        verdicts = wire.get("verdicts") if isinstance(wire, dict) else wire
        if not isinstance(verdicts, list) or len(verdicts) != len(self.items):
            return self._all("crashed", "verify/batch answered with the wrong number of verdicts")
        return [Verdict.from_wire(v) for v in verdicts]


def send(verifier: Verifier, items: list[VerifyItem]) -> PendingCheck:
    """Submit a batch now; collect it later."""
    return PendingCheck(items, verifier.submit(items))
