"""What the service client has heard of its batches' progress: the `verify/progress` notifications and answers that
tell a verifier that works from one that stopped (fim_rlvr.verifier.check waits on a batch while progress comes).

The client sends each request with a fresh `batchId`; the service names it in `verify/progress` whenever any of its
checks finishes, for the batch being checked and for the ones queued behind it. A batch the trainer submitted may
be several requests (chunks, several services, a lost connection's resubmission): it has made progress as recently
as its least recent request in flight. Before its first request (it waits for one of the client's threads, busy
with the client's other batches) any sign from any service counts, since its turn comes when they progress.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any


class BatchWatch:
    """One submitted batch, as the book follows it (every field is guarded by the book's lock)."""

    def __init__(self, now: float) -> None:
        self.created = now
        self.last = now
        """The latest request sent or answered for it."""
        self.started = False
        """Whether a request of it was ever sent."""
        self.requests: set[str] = set()
        """The batchIds of its requests in flight."""


class ProgressBook:
    """Thread-safe: the reader threads call `heard`, the client's worker threads the rest."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._prefix = f"{os.getpid()}-{id(self):x}"
        self._signs: dict[str, float] = {}
        """batchId of each request in flight -> the latest sign of progress on it (its sending, at first)."""
        self._last_any = clock()
        self._watches: dict[Future[Any], BatchWatch] = {}
        self.notes = 0
        """`verify/progress` notifications heard for requests in flight."""

    def new_watch(self) -> BatchWatch:
        """A batch about to be submitted (`follow` it once its future exists)."""
        return BatchWatch(self._clock())

    def follow(self, future: Future[Any], watch: BatchWatch) -> None:
        """Answer `progress_at(future)` from `watch` until the future is done."""
        with self._lock:
            self._watches[future] = watch
        future.add_done_callback(self._forget)

    def _forget(self, future: Future[Any]) -> None:
        with self._lock:
            self._watches.pop(future, None)

    def sent(self, watch: BatchWatch | None) -> str:
        """A request is going out for `watch`'s batch: its fresh batchId."""
        batch_id = f"{self._prefix}-{next(self._ids)}"
        now = self._clock()
        with self._lock:
            self._signs[batch_id] = now
            if watch is not None:
                watch.started = True
                watch.requests.add(batch_id)
                watch.last = now
        return batch_id

    def answered(self, watch: BatchWatch | None, batch_id: str) -> None:
        """The request was answered (or failed): it is no longer in flight."""
        now = self._clock()
        with self._lock:
            self._signs.pop(batch_id, None)
            self._last_any = now
            if watch is not None:
                watch.requests.discard(batch_id)
                watch.last = now

    def heard(self, params: Any) -> None:
        """A `verify/progress` notification (VerifyProgressParams); one for no request in flight is ignored."""
        batch_id = params.get("batchId") if isinstance(params, dict) else None
        now = self._clock()
        with self._lock:
            if isinstance(batch_id, str) and batch_id in self._signs:
                self._signs[batch_id] = now
                self._last_any = now
                self.notes += 1

    def progress_at(self, future: Future[Any]) -> float | None:
        """The clock time of the latest sign that the verifier works on the batch behind `future` (None when the
        book does not follow it)."""
        with self._lock:
            watch = self._watches.get(future)
            if watch is None:
                return None
            if watch.requests:
                return min(self._signs.get(r, watch.last) for r in watch.requests)
            if not watch.started:
                return max(watch.created, self._last_any)
            return watch.last
