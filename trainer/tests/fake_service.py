"""A stand-in verifier service on loopback TCP: the `fim-rlvr serve` protocol (JSON-RPC 2.0, LSP framing) with
exact-match verdicts (fakes.verdict_for), so the trainer's only road to a verifier is exercised without Node.

Every request is checked against lean-bridge/protocol/trainer.schema.json (when jsonschema is installed) and
whatever does not match is kept in `violations`. Chosen batches can be left unanswered (a verifier that stopped
answering) or answered with an error (a crashed one).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from fakes import IDENTITY, middles, verdict_for
from pylsp_jsonrpc.endpoint import Endpoint
from pylsp_jsonrpc.exceptions import JsonRpcException
from pylsp_jsonrpc.streams import JsonRpcStreamReader, JsonRpcStreamWriter

SCHEMA = Path(__file__).resolve().parents[2] / "lean-bridge" / "protocol" / "trainer.schema.json"
TOKEN = "fake-service-token"
BUDGET = {"slots": 4, "checkTimeoutMs": 100.0, "checkBoundMs": 200.0}
"""The limits the fake host announces for this service (it answers at once, so any will do)."""


def _validator() -> Any:
    try:
        import jsonschema
    except ImportError:
        return None
    defs = json.loads(SCHEMA.read_text(encoding="utf-8"))["$defs"]

    def check(instance: Any, name: str) -> str | None:
        errors = list(jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": defs}).iter_errors(instance))
        return f"{name}: {errors[0].message}" if errors else None

    return check


class FakeService:
    def __init__(self, dataset_dir: str | Path, hang: Sequence[int] = (), fail: Sequence[int] = ()) -> None:
        self.middles = middles(dataset_dir)
        self.hang = set(hang)
        self.fail = set(fail)
        self.batches = 0
        self.authenticated = 0
        """Connections that passed `auth`."""
        self.hung: list[Future[Any]] = []
        self.violations: list[str] = []
        self._check = _validator()
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def address(self) -> dict[str, Any]:
        """The `verifierService` of initialize."""
        return {"host": "127.0.0.1", "port": self.port, "token": TOKEN}

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        writer = JsonRpcStreamWriter(connection.makefile("wb"))
        endpoint = Endpoint(
            {"auth": self._auth, "verify/batch": self._verify, "stats": self._stats}, writer.write, max_workers=4
        )
        with contextlib.suppress(Exception):
            JsonRpcStreamReader(connection.makefile("rb")).listen(endpoint.consume)
        endpoint.shutdown()

    def _validate(self, instance: Any, name: str) -> None:
        problem = self._check(instance, name) if self._check is not None else None
        if problem is not None:
            self.violations.append(problem)

    def _auth(self, params: Any) -> Any:
        """The handshake every connection opens with (the real service reads nothing before it)."""
        self._validate(params, "AuthParams")
        if params.get("token") != TOKEN:
            raise JsonRpcException(message="wrong token", code=-32010)
        self.authenticated += 1
        result = {"maxBodyBytes": 256 * 1024 * 1024, "idleTimeoutMs": 1_800_000}
        self._validate(result, "AuthResult")
        return result

    def _verify(self, params: Any) -> Any:
        self._validate(params, "VerifyBatchParams")
        if params.get("token") != TOKEN:
            raise JsonRpcException(message="wrong token", code=-32010)
        with self._lock:
            index = self.batches
            self.batches += 1
        if index in self.hang:
            never: Future[Any] = Future()  # never answered: a verifier that stopped answering
            self.hung.append(never)
            return never
        if index in self.fail:
            # A server error the client reports rather than retries (an internal error reads as a lost connection).
            raise JsonRpcException(message="the verifier pool crashed", code=-32000)
        verdicts = [verdict_for(i["taskId"], i["candidate"], self.middles.get(i["taskId"])) for i in params["items"]]
        result = {"verdicts": verdicts}
        self._validate(result, "VerifyBatchResult")
        return result

    def _stats(self, params: Any) -> Any:
        self._validate(params, "StatsParams")
        stats = {
            "uptimeSeconds": 0.0,
            "checks": self.batches,
            "checksPerSecond": 0.0,
            "cacheHits": 0,
            "queue": 0,
            "queueLimit": 4096,
            "restarts": 0,
            "refused": 0,
            "busy": 0,
            "connections": 1,
            "tasks": len(self.middles),
            "slots": BUDGET["slots"],
            "verifier": IDENTITY,
        }
        self._validate(stats, "ServiceStats")
        return stats

    def close(self) -> None:
        self._server.close()
