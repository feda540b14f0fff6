"""A Python client of the verifier service (`fim-rlvr serve`, or a run's own), mirroring lean-bridge/serve/client.ts.

It is the trainer's only road to the verifier (its `submit`/`cancel` are fim_rlvr.verifier.check's `Verifier`); the
messages are fim_rlvr.core.protocol's (`VerifyBatchParams`, `ServiceStats`), checked against the schema.

JSON-RPC 2.0 with LSP framing over TCP through python-lsp-jsonrpc (its stream reader/writer and Endpoint), one
reader thread per connection. Several services can be given: a new hole goes to the service with the fewest
items in flight, and a hole's GRPO group stays on the service that saw it first (its Lean snapshots are there).
Every connection opens with the service's `auth` handshake (the token, in one small frame, answered before the
service reads anything else); a refused handshake is a setup error, raised at once. A connection lost mid-batch (a
restarted service, a preempted machine, one the service closed as idle) is made again and what it had in flight is
resubmitted: a lost check is retried, never counted as the model's failure. Only when no service answers for
`retry_window` seconds do items get `crashed` verdicts with cause `infrastructure`, which trainers mask out.
Each request carries a fresh `batchId`; the service's `verify/progress` notifications for it feed `progress_at`
(fim_rlvr.verifier.progress), from which the trainer tells a slow verifier from one that stopped
(fim_rlvr.verifier.check).

    client = ServiceClient("127.0.0.1:8470", token=None)
    verdicts = client.verify([{"taskId": "...", "candidate": "omega"}])
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from typing import Any, cast

from pylsp_jsonrpc.endpoint import Endpoint
from pylsp_jsonrpc.exceptions import JsonRpcException
from pylsp_jsonrpc.streams import JsonRpcStreamReader, JsonRpcStreamWriter

from ..core.protocol import AUTH, SERVICE_BUSY, STATS, VERIFY_BATCH, VERIFY_PROGRESS, BatchVerdict, VerifierIdentity
from .progress import BatchWatch, ProgressBook

MAX_SENDS = 5
"""Times one item may be lost with a service before the client gives up on it."""

_NO_VERIFIER: VerifierIdentity = {"kind": "simulator", "version": "-", "label": "none (no verifier service reached)"}


class ServiceRefused(Exception):
    """A service refused a request (bad token, malformed items): a setup error the user must fix."""


@dataclass(frozen=True)
class Address:
    """Where a service listens."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_address(text: str) -> Address:
    """`HOST:PORT`, `[v6]:PORT`, or a bare `PORT` (127.0.0.1); ValueError when malformed."""
    text = text.strip()
    host, _, port_text = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"not a service address (HOST:PORT): {text!r}")
    return Address(host or "127.0.0.1", int(port_text))


def hole_key(item: Mapping[str, Any]) -> str:
    """The key that keeps a hole's group on one service (lean-bridge/serve/protocol.ts `holeKey`)."""
    if isinstance(item.get("file"), str) and isinstance(item.get("hole"), Mapping):
        start, end = item["hole"]["start"], item["hole"]["end"]
        return f"{item['file']}@{start['line']}:{start['character']}-{end['line']}:{end['character']}"
    return f"task:{item.get('taskId')}"


def _item_label(item: Mapping[str, Any]) -> str:
    task_id = item.get("taskId")
    if isinstance(task_id, str):
        return task_id
    return hole_key(item) if isinstance(item.get("file"), str) else ""


class _Lost(Exception):
    """The connection closed before the answer came."""


def _read_frame(stream: Any) -> Any:
    """One LSP-framed JSON message from a binary file object, or None when the stream ends first."""
    length: int | None = None
    while True:
        line = stream.readline(8192)
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        key, _, value = line.decode("ascii", "replace").partition(":")
        if key.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        return None
    body = stream.read(length)
    return json.loads(body) if len(body) == length else None


def _handshake(sock: socket.socket, stream: Any, token: str | None, address: Address) -> str | None:
    """Sends `auth` and reads its answer on a fresh connection: None when accepted, else the refusal to raise.
    OSError or _Lost when the service does not answer (it is down or closed the connection)."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": "auth", "method": AUTH, "params": {} if token is None else {"token": token}}
    )
    sock.sendall(f"Content-Length: {len(body.encode())}\r\n\r\n{body}".encode())
    answer = _read_frame(stream)
    if not isinstance(answer, dict):
        raise _Lost(f"{address} closed the connection during `auth`")
    error = answer.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        if isinstance(code, int) and code > -32090 and answer.get("id") == "auth":
            return f"{address} refused the connection: {error.get('message')}"
        raise _Lost(f"{address} closed the connection during `auth`: {error.get('message')}")
    return None


class _Connection:
    """One connection to one service: connects on demand, fails what was in flight when it closes."""

    def __init__(
        self, address: Address, connect_timeout: float, on_progress: Callable[[Any], None], token: str | None = None
    ) -> None:
        self.address = address
        self._token = token
        self.refusal: str | None = None
        """Why the service refused the handshake (a wrong or missing token); cleared by an accepted one."""
        self._on_progress = on_progress
        self.outstanding = 0
        self.reconnects = 0
        self._connect_timeout = connect_timeout
        self._lock = threading.Lock()
        self._endpoint: Endpoint | None = None
        self._socket: socket.socket | None = None
        self._pending: set[Future[Any]] = set()
        self._ever_connected = False
        self._next_attempt = 0.0
        self._wait = 0.05

    @property
    def is_up(self) -> bool:
        return self._endpoint is not None

    def try_connect(self) -> bool:
        """One attempt (none while the backoff after the last failure runs); True when connected."""
        with self._lock:
            if self._endpoint is not None:
                return True
            if time.monotonic() < self._next_attempt:
                return False
            try:
                sock = socket.create_connection((self.address.host, self.address.port), timeout=self._connect_timeout)
            except OSError:
                self._next_attempt = time.monotonic() + self._wait
                self._wait = min(self._wait * 2, 1.0)
                return False
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            stream = sock.makefile("rb")
            try:
                # Within the connect timeout: a service that accepts but never answers is as good as down.
                refusal = _handshake(sock, stream, self._token, self.address)
            except (OSError, ValueError, _Lost):
                sock.close()
                self._next_attempt = time.monotonic() + self._wait
                self._wait = min(self._wait * 2, 1.0)
                return False
            if refusal is not None:
                sock.close()
                self.refusal = refusal
                self._next_attempt = time.monotonic() + 1.0
                return False
            self.refusal = None
            sock.settimeout(None)
            self._wait = 0.05
            if self._ever_connected:
                self.reconnects += 1
            self._ever_connected = True
            reader = JsonRpcStreamReader(stream)
            writer = JsonRpcStreamWriter(sock.makefile("wb"))
            endpoint = Endpoint({VERIFY_PROGRESS: self._on_progress}, writer.write, max_workers=1)
            self._socket, self._endpoint = sock, endpoint
            threading.Thread(
                target=self._read, args=(reader, endpoint), name=f"fim-rlvr-service-{self.address}", daemon=True
            ).start()
            return True

    def _read(self, reader: JsonRpcStreamReader, endpoint: Endpoint) -> None:
        with contextlib.suppress(Exception):
            reader.listen(endpoint.consume)
        self._drop(endpoint)

    def _drop(self, endpoint: Endpoint | None = None) -> None:
        """Forgets the connection (all of it, or only if it is still `endpoint`) and fails its pending requests."""
        with self._lock:
            if endpoint is not None and endpoint is not self._endpoint:
                return
            dropped = self._endpoint
            sock, self._socket, self._endpoint = self._socket, None, None
            pending, self._pending = self._pending, set()
        if dropped is not None:
            dropped.shutdown()
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        for future in pending:
            with contextlib.suppress(Exception):
                future.set_exception(_Lost(f"the connection to {self.address} was lost"))

    def request(self, method: str, params: Mapping[str, Any]) -> Future[Any]:
        """Sends a request; the future fails with _Lost when the connection closes first."""
        with self._lock:
            endpoint = self._endpoint
            if endpoint is None:
                failed: Future[Any] = Future()
                failed.set_exception(_Lost(f"{self.address} is not connected"))
                return failed
            future = cast(Future[Any], endpoint.request(method, dict(params)))
            self._pending.add(future)
        future.add_done_callback(lambda f: self._pending.discard(f))
        return future

    def reset(self) -> None:
        """Drops the connection after a loss; the next attempt waits out the backoff (a dying service may still
        accept a connection it then resets, and must not be hammered)."""
        self._drop()
        with self._lock:
            self._next_attempt = time.monotonic() + self._wait
            self._wait = min(self._wait * 2, 1.0)


class ServiceClient:
    """Verifies candidates through one or more services; see the module docstring."""

    def __init__(
        self,
        addresses: str | Address | Sequence[str | Address],
        *,
        token: str | None = None,
        retry_window: float = 60.0,
        busy_window: float = 600.0,
        max_batch_items: int = 512,
        connect_timeout: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        listed = [addresses] if isinstance(addresses, (str, Address)) else list(addresses)
        parsed = [a if isinstance(a, Address) else parse_address(a) for a in listed]
        if not parsed:
            raise ValueError("ServiceClient needs at least one service address (HOST:PORT)")
        self.token = token
        self.retry_window = retry_window
        self.busy_window = busy_window
        self.max_batch_items = max_batch_items
        self._progress = ProgressBook(clock)
        self._services = [_Connection(a, connect_timeout, self._progress.heard, token) for a in parsed]
        self._affinity: OrderedDict[str, _Connection] = OrderedDict()
        self._affinity_max = 100_000
        self._lock = threading.Lock()
        self._identity: VerifierIdentity = _NO_VERIFIER
        self._executor: ThreadPoolExecutor | None = None
        self.resubmitted = 0
        """Items sent again after their service was lost."""

    @property
    def progress_notes(self) -> int:
        """`verify/progress` notifications heard for requests in flight, over all services."""
        return self._progress.notes

    @property
    def reconnects(self) -> int:
        """Connections made again after one was lost, over all services."""
        return sum(s.reconnects for s in self._services)

    # The trainer's Verifier interface (fim_rlvr.verifier.check): submit now, collect later.
    def submit(self, items: Sequence[Mapping[str, Any]]) -> Future[list[BatchVerdict]]:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="fim-rlvr-client")
        watch = self._progress.new_watch()
        future = self._executor.submit(self.verify, items, watch)
        self._progress.follow(future, watch)
        return future

    def cancel(self, future: Future[list[BatchVerdict]]) -> None:
        future.cancel()

    def progress_at(self, future: Future[list[BatchVerdict]]) -> float | None:
        """The clock time of the latest sign that a service works on the submitted batch (fim_rlvr.verifier.check's
        `ReportsProgress`): its requests' sending and answers, and `verify/progress` for them."""
        return self._progress.progress_at(future)

    async def verify_async(self, items: Sequence[Mapping[str, Any]]) -> list[BatchVerdict]:
        """`verify` for asyncio code (it runs in a worker thread)."""
        return await asyncio.to_thread(self.verify, items)

    def verify(self, items: Sequence[Mapping[str, Any]], watch: BatchWatch | None = None) -> list[BatchVerdict]:
        """Verdicts in the items' order. Raises ServiceRefused for a bad token or malformed items. `watch` follows
        the batch's progress (`submit` gives one)."""
        verdicts: list[BatchVerdict | None] = [None] * len(items)
        sends = [0] * len(items)
        todo = list(range(len(items)))
        busy_since = time.monotonic()
        while todo:
            live = self._live_services(time.monotonic() + self.retry_window)
            refused = next((s.refusal for s in self._services if s.refusal is not None), None)
            if refused is not None:
                # A wrong or missing token: retrying cannot mend it.
                raise ServiceRefused(refused)
            if not live:
                where = ", ".join(str(s.address) for s in self._services)
                for k in todo:
                    verdicts[k] = self._give_up(
                        items[k],
                        f"no verifier service answered within {self.retry_window:g} s ({where}): "
                        "start one with `fim-rlvr serve`",
                    )
                break
            requests = [
                (service, chunk)
                for service, indices in self._route(todo, items, live).items()
                for chunk in _chunks(indices, self.max_batch_items)
            ]
            for k in todo:
                sends[k] += 1
            futures = []
            for service, chunk in requests:
                batch_id = self._progress.sent(watch)
                params: dict[str, Any] = {"items": [dict(items[k]) for k in chunk], "batchId": batch_id}
                if self.token is not None:
                    params["token"] = self.token
                with self._lock:
                    service.outstanding += len(chunk)
                futures.append(service.request(VERIFY_BATCH, params))
                # Answered (or lost) is no longer in flight: a chunk done early must not stand for the batch's silence.
                futures[-1].add_done_callback(functools.partial(self._answered, watch, batch_id))
            wait_futures(futures)
            todo = []
            busy = False
            for (service, chunk), future in zip(requests, futures, strict=True):
                with self._lock:
                    service.outstanding -= len(chunk)
                error = future.exception()
                if error is None:
                    answered = future.result()["verdicts"]
                    for k, verdict in zip(chunk, answered, strict=True):
                        verdicts[k] = verdict
                    if answered:
                        self._identity = answered[0]["verifier"]
                elif isinstance(error, JsonRpcException) and error.code == SERVICE_BUSY:
                    busy = True
                    todo.extend(chunk)
                elif isinstance(error, JsonRpcException) and error.code is not None and error.code > -32090:
                    raise ServiceRefused(f"{service.address} refused the batch: {error.message}")
                else:
                    self._forget(service)
                    for k in chunk:
                        if sends[k] >= MAX_SENDS:
                            verdicts[k] = self._give_up(
                                items[k], f"the check was lost with its service {MAX_SENDS} times (last: {error})"
                            )
                        else:
                            with self._lock:
                                self.resubmitted += 1
                            todo.append(k)
            if busy:
                if time.monotonic() - busy_since > self.busy_window:
                    raise ServiceRefused(
                        f"every service stayed busy for {self.busy_window:g} s: start more services "
                        "(fim-rlvr serve) and give them all to the client"
                    )
                time.sleep(0.05)
        return [v for v in verdicts if v is not None]

    def _answered(self, watch: BatchWatch | None, batch_id: str, _: Future[Any]) -> None:
        self._progress.answered(watch, batch_id)

    def stats(self) -> list[dict[str, Any]]:
        """Each service's `stats` answer, or `{"address", "down": message}` for one that cannot be reached."""
        reports: list[dict[str, Any]] = []
        for service in self._services:
            if not service.try_connect():
                reports.append({"address": str(service.address), "down": service.refusal or "not reachable"})
                continue
            params = {"token": self.token} if self.token is not None else {}
            try:
                reports.append({"address": str(service.address), **service.request(STATS, params).result(30)})
            except Exception as error:
                reports.append({"address": str(service.address), "down": str(error)})
        return reports

    def close(self) -> None:
        for service in self._services:
            service.reset()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _give_up(self, item: Mapping[str, Any], message: str) -> BatchVerdict:
        """The verdict of a check no service answered: the infrastructure's fault, never the candidate's (masked)."""
        return {
            "taskId": _item_label(item),
            "kind": "crashed",
            "cause": "infrastructure",
            "reward": 0.0,
            "rewardMetrics": {},
            "diagnostics": [{"severity": 1, "message": message, "candidateRange": None}],
            "elapsedMs": 0.0,
            "cached": False,
            "verifier": self._identity,
        }

    def _live_services(self, deadline: float) -> list[_Connection]:
        for service in self._services:
            if not service.is_up:
                service.try_connect()
        wait = 0.05
        while not any(s.is_up or s.refusal is not None for s in self._services) and time.monotonic() + wait < deadline:
            time.sleep(wait)
            wait = min(wait * 2, 1.0)
            for service in self._services:
                service.try_connect()
        return [s for s in self._services if s.is_up]

    def _route(
        self, todo: list[int], items: Sequence[Mapping[str, Any]], live: list[_Connection]
    ) -> dict[_Connection, list[int]]:
        by_hole: dict[str, list[int]] = {}
        for k in todo:
            by_hole.setdefault(hole_key(items[k]), []).append(k)
        planned: dict[_Connection, list[int]] = {}
        with self._lock:
            for key, group in by_hole.items():
                service = self._affinity.get(key)
                if service is None or service not in live:
                    service = min(live, key=lambda s: s.outstanding + len(planned.get(s, ())))
                self._affinity[key] = service
                self._affinity.move_to_end(key)
                if len(self._affinity) > self._affinity_max:
                    self._affinity.popitem(last=False)
                planned.setdefault(service, []).extend(group)
        return planned

    def _forget(self, service: _Connection) -> None:
        service.reset()
        with self._lock:
            for key in [k for k, s in self._affinity.items() if s is service]:
                del self._affinity[key]


def _chunks(indices: list[int], size: int) -> list[list[int]]:
    return [indices[k : k + size] for k in range(0, len(indices), size)]
