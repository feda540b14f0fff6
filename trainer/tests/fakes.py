"""Test doubles for the host: an in-process verifier and a collector of events.

The fake verifier proves a candidate when it equals the task's `middle` modulo whitespace (the TypeScript side
runs the real simulator and pool; H5's end-to-end test covers that). It can be told to never answer batch N
(a hung verifier) or to fail batch N (a crashed one).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from fim_rlvr.core.protocol import BatchVerdict, VerifyItem

IDENTITY = {"kind": "simulator", "version": "fake", "label": "fake host (exact match, not Lean)"}


def normalise(text: str) -> str:
    return " ".join(text.split())


def verdict_for(task_id: str, candidate: str, middle: str | None) -> BatchVerdict:
    ok = middle is not None and normalise(candidate) == normalise(middle) and candidate.strip() != ""
    return {
        "taskId": task_id,
        "kind": "proved" if ok else "failed",
        "reward": 1.0 if ok else 0.0,
        "rewardMetrics": {"exact": 1.0 if ok else 0.0},
        "diagnostics": [] if ok else [{"severity": 1, "message": "not the expected text", "candidateRange": None}],
        "elapsedMs": 0.0,
        "cached": False,
        "verifier": IDENTITY,  # type: ignore[typeddict-item]
    }


def middles(dataset_dir: str | Path) -> dict[str, str]:
    out = {}
    for line in (Path(dataset_dir) / "tasks.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            out[raw["id"]] = raw["middle"]
    return out


class ExactMatchVerifier:
    """In-process Verifier: answers at once, except batches listed in `hang` (never answered) or `fail`
    (answered with an error)."""

    def __init__(self, dataset_dir: str | Path, hang: Sequence[int] = (), fail: Sequence[int] = ()) -> None:
        self.middles = middles(dataset_dir)
        self.hang = set(hang)
        self.fail = set(fail)
        self.batches = 0
        self.checks = 0
        self.cancelled = 0

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        future: Future[list[BatchVerdict]] = Future()
        index = self.batches
        self.batches += 1
        if index in self.hang:
            return future
        if index in self.fail:
            future.set_exception(RuntimeError("the verifier pool crashed"))
            return future
        self.checks += len(items)
        future.set_result([verdict_for(i["taskId"], i["candidate"], self.middles.get(i["taskId"])) for i in items])
        return future

    def cancel(self, future: Future[list[BatchVerdict]]) -> None:
        self.cancelled += 1


class RecordingEvents:
    """Collects every event the trainer emits."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, Any]] = []

    def emit(self, method: str, params: Any) -> None:
        self.messages.append((method, params))

    def of(self, method: str) -> list[Any]:
        return [p for m, p in self.messages if m == method]
