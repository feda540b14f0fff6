"""Checking candidates through the host: the Verifier interface, and waiting on a check with a deadline.

The loop sends a batch (`Verifier.submit`) and collects it later (`PendingCheck.collect`), which is what lets the
verification of step k overlap the generation of step k+1. A batch the host never answers costs its samples
(they become `timeout` verdicts, masked out), never the run; a batch answered with an error becomes `crashed`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Protocol

from .protocol import BatchVerdict, Verdict, VerifyItem


class Verifier(Protocol):
    """Sends one verify/batch request; the future resolves to the host's verdicts (same order as items)."""

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]: ...

    def cancel(self, future: Future[list[BatchVerdict]]) -> None:
        """Tell the host the answer is no longer wanted (best effort)."""
        ...


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
        """The verdicts (made-up masked ones when the host did not answer in time or answered with an error) and
        how long this call blocked. Raises Stopped when `stop` is set while waiting."""
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
                why = f"the host did not answer verify/batch within {deadline_s:g} s"
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
