"""Checking candidates: the Verifier interface, and waiting on a check with a deadline the verifier's limits set.

The only Verifier a run uses is the client of the run's verifier service (fim_rlvr.service_client); tests give
in-process stand-ins of the same shape. The loop sends a batch (`Verifier.submit`) and collects it later
(`PendingCheck.collect`), which is what lets the verification of step k overlap the generation of step k+1.

A batch's deadline grows with what the verifier has to do (`batch_deadline_s`): every candidate that may be in the
verifier at once, divided among its slots, each taking the longest a working check can. So a slow verifier that
works (a policy whose every candidate hangs until its own time limit, say) is never mistaken for one that stopped
answering: its timeouts come back as the candidates' failures. Only a batch the verifier never answers within
that deadline costs its samples (`timeout` verdicts caused by the infrastructure, masked), never the run; a batch
answered with an error becomes `crashed`, masked too.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Protocol

from .protocol import BatchVerdict, Verdict, VerifyItem


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


def items_in_flight(*, world: int, batch_items: int, measured_items: int) -> int:
    """The most candidates a run can have in the verifier at once: every rank's step being checked and the next one
    (the pipelined loop; DAPO's refill rounds take a collected batch's place, never add one), plus rank 0's
    held-out evaluation or validation batch."""
    return world * 2 * batch_items + measured_items


def batch_deadline_s(budget: Budget | None, in_flight: int, slack_s: float) -> float:
    """How long to wait for a batch before it counts as unanswered: `slack_s`, plus (when the verifier's limits are
    known) the time its slots need to finish every candidate that may be in the verifier with the batch, each
    taking the longest a working check can."""
    if budget is None:
        return slack_s
    return slack_s + math.ceil(max(1, in_flight) / budget.slots) * budget.check_bound_s


class Stopped(Exception):
    """The run was asked to stop while waiting."""


@dataclass
class PendingCheck:
    """One verify/batch in flight."""

    items: list[VerifyItem]
    future: Future[list[BatchVerdict]]
    sent_at: float = field(default_factory=time.perf_counter)
    answered_at: float | None = None

    def __post_init__(self) -> None:
        self.future.add_done_callback(self._mark_answered)

    def _mark_answered(self, _: Future[list[BatchVerdict]]) -> None:
        self.answered_at = time.perf_counter()

    def collect(
        self, verifier: Verifier, deadline_s: float, stop: threading.Event | None = None
    ) -> tuple[list[Verdict], float]:
        """The verdicts (made-up masked ones when the verifier did not answer in time or answered with an error)
        and how long this call blocked. Raises Stopped when `stop` is set while waiting."""
        began = time.perf_counter()
        deadline = self.sent_at + deadline_s
        while True:
            if self.future.done():
                try:
                    wire = self.future.result()
                except Exception as error:
                    return self._all("crashed", f"verify/batch failed: {error}"), time.perf_counter() - began
                return self._parse(wire), time.perf_counter() - began
            if stop is not None and stop.is_set():
                raise Stopped()
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                verifier.cancel(self.future)
                why = f"the verifier did not answer verify/batch within {deadline_s:g} s"
                return self._all("timeout", why), time.perf_counter() - began
            try:
                self.future.exception(timeout=min(remaining, 0.05))
            except FutureTimeout:
                continue

    @property
    def seconds(self) -> float:
        """Wall time from sending to the answer (or to now)."""
        end = self.answered_at if self.answered_at is not None else time.perf_counter()
        return end - self.sent_at

    def _all(self, kind: str, why: str) -> list[Verdict]:
        return [Verdict.not_checked(item["taskId"], kind, why) for item in self.items]

    def _parse(self, wire: Any) -> list[Verdict]:
        verdicts = wire.get("verdicts") if isinstance(wire, dict) else wire
        if not isinstance(verdicts, list) or len(verdicts) != len(self.items):
            return self._all("crashed", "verify/batch answered with the wrong number of verdicts")
        return [Verdict.from_wire(v) for v in verdicts]


def send(verifier: Verifier, items: list[VerifyItem]) -> PendingCheck:
    """Submit a batch now; collect it later."""
    return PendingCheck(items, verifier.submit(items))
