"""A Ray-native verifier pool: one verifier actor per node, each starting and owning its `fim-rlvr serve`.

    import ray
    from fim_rlvr.integrations.ray import ServeSpec, VerifierPool

    ray.init()                                   # every node started with --resources '{"fim_rlvr_verifier": 1}'
    pool = VerifierPool.start(ServeSpec(project="/srv/lean-env", dataset="/srv/dataset", cli="/srv/fim/dist/cli.js"))
    verdicts = pool.verify([{"taskId": "3f2a…", "candidate": "omega"}, …])   # or await pool.verify_async(…)
    pool.shutdown()

Placement is by node resource: an actor asks for one unit of `resource` (default `fim_rlvr_verifier`), so a node
started with one unit holds one verifier actor, and Ray restarts a dead actor (`max_restarts`) where a unit is free:
on its own node while that node lives. Each actor starts `node CLI serve --project … --dataset … --port 0` on its node,
reads the port from the line serve prints, and talks to it over loopback with its own token; when that serve dies the
actor starts it again on the same port, and its client resubmits what was in flight. At start every actor checks
that its node has what the recipe needs (node, the built CLI, the project, the dataset; docs/SCALING.md) and reports
the dataset's fingerprint: a node that lacks something, or serves another dataset, stops the start with a message
that names the node.

The pool routes a batch by hole (a hole's GRPO group stays on one actor, whose Lean documents hold its snapshots; a
new hole goes to the actor with the fewest items in flight), splits it into chunks of at most the serve's queue
bound, and keeps at most that many items in flight per actor (backpressure: the rest wait in the caller, never in an
actor's memory). Every candidate carries an idempotency key (given, or made per call): an actor remembers the
verdicts of keys it answered, and the pool takes the first verdict of each key, so a chunk sent again after an
actor died loses no candidate and pays none twice. `pool_by_name(NAME)` gives any process of the cluster (verl's
reward workers: fim_rlvr.integrations.verl with `ray_pool: NAME`) a router over a named pool's actors.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import hashlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError

from fim_rlvr.verifier.client import ServiceClient, hole_key

RESOURCE = "fim_rlvr_verifier"
"""The node resource a verifier actor asks one unit of: one unit on a node, one actor there."""
DEFAULT_QUEUE_BOUND = 512
"""Items in flight per actor (and the serve's --max-queue): a chunk is never larger."""
NAME_PREFIX = "fim-rlvr-verifier"


class NodeNotReady(RuntimeError):
    """A node lacks what a verifier actor needs, or serves another dataset than the others."""


class PoolUnavailable(RuntimeError):
    """No verifier actor answered within the restart window."""


@dataclass(frozen=True)
class ServeSpec:
    """How each actor starts its `fim-rlvr serve`. Paths are the same on every node (docs/SCALING.md)."""

    project: str
    """The Lean project candidates are checked in (built, with `lake` on PATH, unless `--simulator`)."""
    dataset: str | None = None
    """The exported dataset whose task ids items name (its tasks.jsonl is fingerprinted on every node)."""
    cli: str = str(Path(__file__).resolve().parents[3] / "dist" / "cli.js")
    """The built CLI (`npm run build`), by default this checkout's."""
    node: str = "node"
    """The Node.js binary (a name on PATH or a path)."""
    args: tuple[str, ...] = ()
    """More serve options: `--workers 16`, `--simulator`, `--timeout-ms 20000`, …"""
    queue_bound: int = DEFAULT_QUEUE_BOUND
    """The serve's --max-queue, and the pool's chunk size and in-flight bound per actor."""
    start_timeout_s: float = 600.0
    """How long a serve may take to start listening (it mines the project when no dataset is given)."""


def _die_with_parent() -> None:
    """The serve dies with the thread that started it (the actor's keeper): Linux's PR_SET_PDEATHSIG."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


def _fingerprint(dataset: str | None) -> str:
    if dataset is None:
        return "mined on start"
    digest = hashlib.sha256()
    with open(Path(dataset) / "tasks.jsonl", "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def _missing(spec: ServeSpec) -> list[str]:
    """What the recipe needs and this node lacks."""
    missing = []
    if shutil.which(spec.node) is None:
        missing.append(f"Node.js ({spec.node!r} is not on PATH)")
    if not Path(spec.cli).is_file():
        missing.append(f"the built CLI {spec.cli} (npm ci && npm run build)")
    if not Path(spec.project).is_dir():
        missing.append(f"the Lean project {spec.project}")
    if spec.dataset is not None and not (Path(spec.dataset) / "tasks.jsonl").is_file():
        missing.append(f"the dataset {spec.dataset} (its tasks.jsonl)")
    return missing


class VerifierActor:
    """One node's verifier: its own `fim-rlvr serve` on loopback, kept running, and a client of it."""

    def __init__(self, spec: ServeSpec) -> None:
        self.spec = spec
        self.node = socket.gethostname()
        missing = _missing(spec)
        if missing:
            raise NodeNotReady(f"node {self.node}: missing {'; '.join(missing)}. Every node needs the same paths.")
        self.fingerprint = _fingerprint(spec.dataset)
        self.token = secrets.token_urlsafe(24)
        self.port = 0
        self.serve_starts = 0
        self.checked = 0
        self.cache_answers = 0
        self._answered: OrderedDict[str, Any] = OrderedDict()
        self._process: subprocess.Popen[str] | None = None
        self._stopping = False
        self._listening = threading.Event()
        self._failure: str | None = None
        # One long-lived thread starts every serve and waits on it: the serve dies with it (and with the actor).
        threading.Thread(target=self._keep, name="fim-rlvr-serve-keeper", daemon=True).start()
        if not self._listening.wait(spec.start_timeout_s) or self._failure is not None:
            raise NodeNotReady(f"node {self.node}: fim-rlvr serve did not start: {self._failure or 'timed out'}")
        self.client = ServiceClient(f"127.0.0.1:{self.port}", token=self.token, max_batch_items=spec.queue_bound)

    def _command(self) -> list[str]:
        args = [self.spec.node, self.spec.cli, "serve", "--project", self.spec.project, "--host", "127.0.0.1"]
        if self.spec.dataset is not None:
            args += ["--dataset", self.spec.dataset]
        # `--token=VALUE`: a URL-safe token may begin with "-", which the CLI's parser would read as an option.
        args += ["--port", str(self.port), f"--token={self.token}", "--max-queue", str(self.spec.queue_bound)]
        return args + list(self.spec.args)

    def _keep(self) -> None:
        while not self._stopping:
            process = subprocess.Popen(
                self._command(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                preexec_fn=_die_with_parent,
            )
            self._process = process
            self.serve_starts += 1
            assert process.stdout is not None
            for line in process.stdout:
                match = re.search(r"listening on \S+:(\d+)", line)
                if match:
                    self.port = int(match.group(1))
                    self._listening.set()
                    break
            else:
                self._failure = (process.stderr.read() if process.stderr else "").strip()[-2000:] or "it exited"
                self._listening.set()
                return
            # Drain its output (a full pipe would stall it) until it exits; then start it again, same port.
            threading.Thread(target=process.stdout.read, daemon=True).start()
            threading.Thread(target=process.stderr.read if process.stderr else (lambda: None), daemon=True).start()
            process.wait()

    def ready(self) -> dict[str, Any]:
        """Where this actor runs and what it serves (the pool compares nodes)."""
        return {
            "node": self.node,
            "nodeId": ray.get_runtime_context().get_node_id(),
            "pid": os.getpid(),
            "port": self.port,
            "fingerprint": self.fingerprint,
        }

    def serve_spec(self) -> ServeSpec:
        return self.spec

    def serve_pid(self) -> int:
        return self._process.pid if self._process is not None else -1

    def stats(self) -> dict[str, Any]:
        return {
            **self.ready(),
            "serveStarts": self.serve_starts,
            "checked": self.checked,
            "cacheAnswers": self.cache_answers,
        }

    async def verify(self, keys: Sequence[str], items: Sequence[Mapping[str, Any]]) -> list[Any]:
        """Verdicts for the items, each under its key; keys this actor answered before are not checked again."""
        todo = [k for k, key in enumerate(keys) if key not in self._answered]
        self.cache_answers += len(keys) - len(todo)
        if todo:
            verdicts = await asyncio.wrap_future(self.client.submit([items[k] for k in todo]))
            self.checked += len(todo)
            for k, verdict in zip(todo, verdicts, strict=True):
                self._answered[keys[k]] = verdict
            while len(self._answered) > 100_000:
                self._answered.popitem(last=False)
        return [self._answered[key] for key in keys]

    def shutdown(self) -> None:
        self._stopping = True
        self.client.close()
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGINT)
            try:
                self._process.wait(30)
            except subprocess.TimeoutExpired:
                self._process.kill()


@dataclass
class PoolCounters:
    """What the routing did: chunks sent, items sent again after an actor was lost, verdicts dropped as repeats."""

    chunks: int = 0
    resubmitted: int = 0
    duplicates: int = 0
    remembered: int = 0
    """Keys answered from the router's memory of verdicts it already returned (never sent again)."""
    most_in_flight: int = 0


@dataclass
class _Slot:
    actor: Any
    in_flight: int = 0
    lost_until: float = 0.0
    changed: asyncio.Event | None = field(default=None, repr=False)


class VerifierPool:
    """A router over verifier actors (see the module docstring). Picklable: a copy routes on its own."""

    def __init__(self, actors: Sequence[Any], spec: ServeSpec, *, restart_window_s: float = 300.0) -> None:
        if not actors:
            raise ValueError("a VerifierPool needs at least one verifier actor")
        self.actors = list(actors)
        self.spec = spec
        self.restart_window_s = restart_window_s
        self.counters = PoolCounters()
        self._reset_routing()

    def _reset_routing(self) -> None:
        self._slots = [_Slot(a) for a in self.actors]
        self._affinity: OrderedDict[str, int] = OrderedDict()
        self._loop: asyncio.AbstractEventLoop | None = None
        # Verdicts returned under their keys: a key sent again is answered from here, even after the actor that
        # checked it died with its own memory.
        self._answered: OrderedDict[str, Any] = OrderedDict()

    def __getstate__(self) -> dict[str, Any]:
        return {"actors": self.actors, "spec": self.spec, "restart_window_s": self.restart_window_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["actors"], state["spec"], restart_window_s=state["restart_window_s"])  # type: ignore[misc]

    @classmethod
    def start(
        cls,
        spec: ServeSpec,
        *,
        resource: str = RESOURCE,
        name: str | None = None,
        max_restarts: int = -1,
        restart_window_s: float = 300.0,
    ) -> VerifierPool:
        """One actor per unit of `resource` on the cluster's live nodes (one unit per node: one actor per node),
        each restarted by Ray up to `max_restarts` times (-1: always). `name` makes the actors findable by
        `pool_by_name` from any process of the cluster. Raises NodeNotReady when a node lacks what the recipe
        needs or serves another dataset."""
        units = sum(int(n["Resources"].get(resource, 0)) for n in ray.nodes() if n.get("Alive"))
        if units == 0:
            raise NodeNotReady(
                f"no live node has the resource {resource!r}: start each node with "
                f'`ray start … --resources \'{{"{resource}": 1}}\'` (or ray.init(resources={{"{resource}": 1}}))'
            )
        remote: Any = ray.remote(VerifierActor)
        actors: list[Any] = []
        for k in range(units):
            options: dict[str, Any] = {
                "resources": {resource: 1},
                "num_cpus": 0,
                "max_restarts": max_restarts,
                "max_task_retries": 0,
                "max_concurrency": 64,
            }
            if name is not None:
                options["name"] = f"{NAME_PREFIX}/{name}/{k}"
                options["lifetime"] = "detached"
            actors.append(remote.options(**options).remote(spec))
        try:
            reports = ray.get([a.ready.remote() for a in actors], timeout=spec.start_timeout_s + 60)
        except RayActorError as error:
            for actor in actors:
                ray.kill(actor, no_restart=True)
            cause = error.__cause__ or error
            raise NodeNotReady(f"a verifier actor could not start: {cause}") from error
        prints = {r["fingerprint"] for r in reports}
        if len(prints) > 1:
            for actor in actors:
                ray.kill(actor, no_restart=True)
            listed = ", ".join(f"{r['node']}: {r['fingerprint']}" for r in reports)
            raise NodeNotReady(f"the nodes serve different datasets ({listed}): copy the same dataset to every node")
        return cls(actors, spec, restart_window_s=restart_window_s)

    def verify(self, items: Sequence[Mapping[str, Any]], keys: Sequence[str] | None = None) -> list[Any]:
        """Verdicts in the items' order (for code without an event loop)."""
        return asyncio.run(self.verify_async(items, keys))

    async def verify_async(self, items: Sequence[Mapping[str, Any]], keys: Sequence[str] | None = None) -> list[Any]:
        """Verdicts in the items' order; `keys` are the candidates' idempotency keys (made when not given)."""
        if keys is None:
            batch = uuid.uuid4().hex
            keys = [f"{batch}/{k}" for k in range(len(items))]
        if len(keys) != len(items):
            raise ValueError(f"{len(keys)} keys for {len(items)} items")
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # The backpressure events belong to one event loop (`verify` runs each call on a fresh one).
            self._loop = loop
            for slot in self._slots:
                slot.changed = asyncio.Event()
                slot.in_flight = 0
        results: dict[str, Any] = {}
        by_actor: dict[int, list[int]] = {}
        for k, item in enumerate(items):
            if keys[k] in self._answered:
                results[keys[k]] = self._answered[keys[k]]
                self.counters.remembered += 1
                continue
            by_actor.setdefault(self._route(hole_key(item), by_actor), []).append(k)
        bound = max(1, self.spec.queue_bound)
        chunks = [
            (index, indices[j : j + bound])
            for index, indices in by_actor.items()
            for j in range(0, len(indices), bound)
        ]
        await asyncio.gather(*(self._send(index, chunk, items, keys, results) for index, chunk in chunks))
        for key in keys:
            self._answered[key] = results[key]
            self._answered.move_to_end(key)
        while len(self._answered) > 100_000:
            self._answered.popitem(last=False)
        return [results[key] for key in keys]

    def _route(self, key: str, planned: Mapping[int, list[int]]) -> int:
        index = self._affinity.get(key)
        if index is None:
            index = min(range(len(self._slots)), key=lambda i: self._slots[i].in_flight + len(planned.get(i, ())))
        self._affinity[key] = index
        self._affinity.move_to_end(key)
        while len(self._affinity) > 100_000:
            self._affinity.popitem(last=False)
        return index

    async def _send(
        self,
        index: int,
        chunk: list[int],
        items: Sequence[Mapping[str, Any]],
        keys: Sequence[str],
        results: dict[str, Any],
    ) -> None:
        deadline = time.monotonic() + self.restart_window_s
        last_error = ""
        while True:
            slot = self._slots[index]
            # Backpressure: wait until the actor has room for the whole chunk.
            while slot.in_flight > 0 and slot.in_flight + len(chunk) > self.spec.queue_bound:
                assert slot.changed is not None
                slot.changed.clear()
                await slot.changed.wait()
            slot.in_flight += len(chunk)
            self.counters.most_in_flight = max(self.counters.most_in_flight, slot.in_flight)
            self.counters.chunks += 1
            try:
                verdicts = await slot.actor.verify.remote([keys[k] for k in chunk], [items[k] for k in chunk])
            except (ActorDiedError, ActorUnavailableError, RayActorError) as error:
                last_error = str(error).splitlines()[0] if str(error) else type(error).__name__
                verdicts = None
            finally:
                slot.in_flight -= len(chunk)
                if slot.changed is not None:
                    slot.changed.set()
            if verdicts is not None:
                for k in chunk:
                    # The holes stay where their verdicts (and Lean snapshots) now are.
                    self._affinity[hole_key(items[k])] = index
                for k, verdict in zip(chunk, verdicts, strict=True):
                    if keys[k] in results:
                        self.counters.duplicates += 1
                    else:
                        results[keys[k]] = verdict
                return
            # The actor was lost mid-chunk: Ray restarts it; send the chunk again (to another actor when there is
            # one), under the same keys.
            self.counters.resubmitted += len(chunk)
            if time.monotonic() > deadline:
                raise PoolUnavailable(
                    f"no verifier actor answered for {self.restart_window_s:g} s (last: {last_error}): check "
                    "`ray status` and the actors' logs"
                )
            slot.lost_until = time.monotonic() + 1.0
            alive = [i for i, s in enumerate(self._slots) if s.lost_until < time.monotonic()]
            if alive:
                index = min(alive, key=lambda i: self._slots[i].in_flight)
            await asyncio.sleep(0.2)

    def stats(self) -> list[dict[str, Any]]:
        """Each actor's node, port, serve starts and checks."""
        return ray.get([a.stats.remote() for a in self.actors])

    def shutdown(self) -> None:
        """Stops every serve and ends the actors."""
        with contextlib.suppress(Exception):
            ray.get([a.shutdown.remote() for a in self.actors], timeout=60)
        for actor in self.actors:
            with contextlib.suppress(Exception):
                ray.kill(actor, no_restart=True)


_named: dict[str, VerifierPool] = {}


def pool_by_name(name: str) -> VerifierPool:
    """A router (made once per process) over the actors of the pool started with `name`."""
    if name not in _named:
        prefix = f"{NAME_PREFIX}/{name}/"
        names = sorted(n for n in ray.util.list_named_actors() if n.startswith(prefix))
        if not names:
            raise PoolUnavailable(
                f"no Ray verifier pool named {name!r} in this namespace: start one with VerifierPool.start(…, "
                f"name={name!r}) in the same Ray job or namespace"
            )
        actors = [ray.get_actor(n) for n in names]
        _named[name] = VerifierPool(actors, ray.get(actors[0].serve_spec.remote()))
    return _named[name]
