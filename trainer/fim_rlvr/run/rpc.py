"""The JSON-RPC endpoint over stdio (python-lsp-jsonrpc: LSP framing, request/response bookkeeping): the host's
requests and the trainer's notifications. Candidates never travel here: they go to the run's verifier service.

stdout carries protocol frames only: the real stdout file descriptor is duplicated for the writer, then fd 1 is
pointed at stderr, so a stray print (ours, a library's, or C code's) can never corrupt a frame.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

from pylsp_jsonrpc.endpoint import Endpoint
from pylsp_jsonrpc.streams import JsonRpcStreamReader, JsonRpcStreamWriter

log = logging.getLogger("fim_rlvr.run.rpc")


def claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """(protocol input, protocol output); afterwards fd 1 and sys.stdout write to stderr."""
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return sys.stdin.buffer, protocol_out


class Connection:
    """One JSON-RPC connection: the endpoint, its reader and writer, and the helpers the trainer's server needs."""

    def __init__(self, rfile: BinaryIO, wfile: BinaryIO, handlers: dict[str, Callable[[Any], Any]]) -> None:
        self._reader = JsonRpcStreamReader(rfile)
        self._writer = JsonRpcStreamWriter(wfile)
        self._after_response: list[Callable[[], None]] = []
        self.endpoint = Endpoint(handlers, self._consume_outgoing, max_workers=2)

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

    def listen(self) -> None:
        """Read and dispatch messages until stdin closes (blocks)."""
        self._reader.listen(self.endpoint.consume)

    def close(self) -> None:
        self.endpoint.shutdown()
        self._writer.close()
