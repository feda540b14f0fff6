"""The JSON-RPC endpoint over stdio (python-lsp-jsonrpc: LSP framing, request/response bookkeeping).

stdout carries protocol frames only: the real stdout file descriptor is duplicated for the writer, then fd 1 is
pointed at stderr, so a stray print (ours, a library's, or C code's) can never corrupt a frame.
"""

from __future__ import annotations

import itertools
import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, BinaryIO

from pylsp_jsonrpc.endpoint import Endpoint
from pylsp_jsonrpc.streams import JsonRpcStreamReader, JsonRpcStreamWriter

from .protocol import VERIFY_BATCH, BatchVerdict, VerifyItem

log = logging.getLogger("fim_rlvr.rpc")


def claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """(protocol input, protocol output); afterwards fd 1 and sys.stdout write to stderr."""
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return sys.stdin.buffer, protocol_out


class Connection:
    """One JSON-RPC connection: the endpoint, its reader and writer, and typed helpers for the trainer."""

    def __init__(self, rfile: BinaryIO, wfile: BinaryIO, handlers: dict[str, Callable[[Any], Any]]) -> None:
        self._reader = JsonRpcStreamReader(rfile)
        self._writer = JsonRpcStreamWriter(wfile)
        self._ids = itertools.count(1)
        self._id_lock = threading.Lock()
        self._last_id: dict[int, int] = {}
        self._after_response: list[Callable[[], None]] = []
        self.endpoint = Endpoint(handlers, self._consume_outgoing, id_generator=self._next_id, max_workers=2)

    def _next_id(self) -> int:
        value = next(self._ids)
        self._last_id[threading.get_ident()] = value
        return value

    def _consume_outgoing(self, message: dict[str, Any]) -> None:
        self._writer.write(message)
        if "method" not in message and ("result" in message or "error" in message):
            callbacks, self._after_response = self._after_response, []
            for callback in callbacks:
                callback()

    def after_next_response(self, callback: Callable[[], None]) -> None:
        """Run `callback` once the next response frame has been written (e.g. start the run after `initialize`)."""
        self._after_response.append(callback)

    def notify(self, method: str, params: Any) -> None:
        self.endpoint.notify(method, params)

    def request(self, method: str, params: Any) -> tuple[int, Future[Any]]:
        """Send a request; returns its id and a future for the result."""
        with self._id_lock:
            future = self.endpoint.request(method, params)
            return self._last_id[threading.get_ident()], future

    def listen(self) -> None:
        """Read and dispatch messages until stdin closes (blocks)."""
        self._reader.listen(self.endpoint.consume)

    def close(self) -> None:
        self.endpoint.shutdown()
        self._writer.close()


class HostVerifier:
    """The Verifier that asks the host: `verify/batch` requests over the connection."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._ids: dict[int, int] = {}

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        request_id, future = self.connection.request(VERIFY_BATCH, {"items": list(items)})
        self._ids[id(future)] = request_id
        future.add_done_callback(lambda f: self._ids.pop(id(f), None))
        return future

    def cancel(self, future: Future[list[BatchVerdict]]) -> None:
        """Send $/cancelRequest. The future itself is left alone: a late answer then resolves it harmlessly
        (pylsp_jsonrpc would raise on the reader thread if a cancelled future received a result)."""
        request_id = self._ids.pop(id(future), None)
        if request_id is not None:
            self.connection.notify("$/cancelRequest", {"id": request_id})
