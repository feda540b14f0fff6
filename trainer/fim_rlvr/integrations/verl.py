"""verl's custom reward function, backed by the verifier service: `compute_score` for verl 0.9's reward loop.

verl's `RewardLoopManager` starts reward workers (Ray actors) whose reward manager (`naive`, the default) awaits
`compute_score(data_source=…, solution_str=…, ground_truth=…, extra_info=…, **kwargs)` once per sample, many samples
of a worker at once. Here those concurrent calls are gathered into one `verify/batch` per event-loop turn, so a
worker's chunk costs one round trip, not one per sample. The config (docs/SERVICE.md, docs/SCALING.md):

    reward:
      custom_reward_function:
        path: trainer/fim_rlvr/integrations/verl.py
        name: compute_score
        reward_kwargs: {timeout_s: 600}          # optional; see VerlOptions

Rows come from `fim_rlvr.integrations.datasets_view` (layout "verl"): `ground_truth` is the task id, `extra_info`
holds `indent`, `fim` and `stops` for cleaning. The result is verl's dict form: `score` (the reward), `verdict`
(the verdict's kind), `proved`, `masked` and `timed_out`; verl keeps every key per sample and averages the numeric
ones in its validation metrics. Rewards follow our own trainer's rule (fim_rlvr.core.outcomes): a timeout or crash the
completion caused is a failure, 0.0. An outcome outside its control (environment, a timeout or crash whose cause is
the infrastructure, the per-sample timeout here) also scores 0.0, because verl cannot leave a sample out, but it
is `masked`, it is logged with its reason, and with `on_masked: raise` it stops the run. A verifier that cannot be
reached stops the run at once (VerifierUnavailable, after `unreachable_s`), never scoring silently. No outcome here
pays: the per-sample timeout scores 0.0.

The service comes from reward_kwargs (`service`, `token`) or the environment: FIM_RLVR_SERVICE (`HOST:PORT`, several
separated by commas) and FIM_RLVR_TOKEN; with `ray_pool: NAME` (or FIM_RLVR_RAY_POOL) the calls go to the Ray
verifier pool of that name instead (fim_rlvr.integrations.ray). verl loads this file by path, so `trainer/` must be
on PYTHONPATH of every Ray worker (`ray start` inherits it, or a runtime_env).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Mapping
from typing import Any, NamedTuple

# Absolute imports: verl loads this file by path (custom_reward_function.path), outside its package.
from fim_rlvr.core.protocol import BatchVerdict
from fim_rlvr.integrations._scoring import candidate, reward_or_none
from fim_rlvr.integrations.datasets_view import DATA_SOURCE
from fim_rlvr.verifier.client import ServiceClient

log = logging.getLogger("fim_rlvr.verl")

DEFAULT_TIMEOUT_S = 600.0
"""The longest one sample may wait for its verdict (queueing on a busy service included)."""
DEFAULT_UNREACHABLE_S = 30.0
"""How long the client tries to reach a service before the run is stopped."""


class VerifierUnavailable(RuntimeError):
    """No verifier service (or Ray pool) answered: scoring on would train on zeros that mean nothing."""


class MaskedVerdict(RuntimeError):
    """A verdict outside the completion's control, with `on_masked: raise`."""


class VerlOptions(NamedTuple):
    """What `reward_kwargs` (or the environment) may set. A NamedTuple, not a dataclass: verl loads this file by
    path without registering it in sys.modules, where a dataclass looks its module up."""

    service: str
    token: str | None
    ray_pool: str | None
    timeout_s: float
    unreachable_s: float
    on_masked: str

    @staticmethod
    def read(kwargs: Mapping[str, Any]) -> VerlOptions:
        on_masked = str(kwargs.get("on_masked", "warn"))
        if on_masked not in ("warn", "raise"):
            raise ValueError(f"fim_rlvr's compute_score: on_masked must be 'warn' or 'raise', got {on_masked!r}")
        timeout_s = float(kwargs.get("timeout_s", DEFAULT_TIMEOUT_S))
        if not timeout_s > 0:
            raise ValueError(f"fim_rlvr's compute_score: timeout_s must be positive, got {timeout_s!r}")
        return VerlOptions(
            service=str(kwargs.get("service") or os.environ.get("FIM_RLVR_SERVICE", "127.0.0.1:8470")),
            token=kwargs.get("token") or os.environ.get("FIM_RLVR_TOKEN"),
            ray_pool=kwargs.get("ray_pool") or os.environ.get("FIM_RLVR_RAY_POOL"),
            timeout_s=timeout_s,
            unreachable_s=float(kwargs.get("unreachable_s", DEFAULT_UNREACHABLE_S)),
            on_masked=on_masked,
        )


_clients: dict[tuple[str, str | None, float], ServiceClient] = {}
_clients_lock = threading.Lock()


def client(options: VerlOptions | None = None) -> ServiceClient:
    """This process's client of the services the options name (made once per address list and token)."""
    options = options or VerlOptions.read({})
    key = (options.service, options.token, options.unreachable_s)
    with _clients_lock:
        if key not in _clients:
            services = [s for s in options.service.split(",") if s.strip()]
            _clients[key] = ServiceClient(services, token=options.token, retry_window=options.unreachable_s)
        return _clients[key]


def close_clients() -> None:
    """Closes every client this process made (tests; a worker that ends)."""
    with _clients_lock:
        for made in _clients.values():
            made.close()
        _clients.clear()


def _item(solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None) -> dict[str, Any]:
    info = extra_info or {}
    task_id = str(info.get("task_id", ground_truth))
    text = candidate(
        solution_str, indent=int(info.get("indent", 0)), fim=bool(info.get("fim", True)), stops=info.get("stops")
    )
    return {"taskId": task_id, "candidate": text}


class _Batcher:
    """Gathers the items of one event loop's concurrent calls into one request per loop turn."""

    def __init__(self, options: VerlOptions) -> None:
        self.options = options
        self.waiting: list[tuple[dict[str, Any], asyncio.Future[Any]]] = []

    def submit(self, item: dict[str, Any]) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if not self.waiting:
            loop.call_soon(lambda: asyncio.ensure_future(self._flush()))
        self.waiting.append((item, future))
        return future

    async def _flush(self) -> None:
        batch, self.waiting = self.waiting, []
        try:
            verdicts = await _verify([item for item, _ in batch], self.options)
        except Exception as error:
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        for (_, future), verdict in zip(batch, verdicts, strict=True):
            if not future.done():
                future.set_result(verdict)


async def _verify(items: list[dict[str, Any]], options: VerlOptions) -> list[BatchVerdict]:
    if options.ray_pool is not None:
        from fim_rlvr.integrations.ray import pool_by_name

        return await pool_by_name(options.ray_pool).verify_async(items)
    # The client's own threads (not the loop's default executor, which asyncio.run would wait for on exit).
    return await asyncio.wrap_future(client(options).submit(items))


_batchers: dict[tuple[int, VerlOptions], _Batcher] = {}


def _batcher(options: VerlOptions) -> _Batcher:
    key = (id(asyncio.get_running_loop()), options)
    if key not in _batchers:
        _batchers[key] = _Batcher(options)
    return _batchers[key]


_UNREACHABLE_MARK = "no verifier service answered"


def _result(verdict: BatchVerdict, options: VerlOptions) -> dict[str, Any]:
    reward = reward_or_none(verdict)
    kind = str(verdict.get("kind", "environment"))
    if reward is None:
        why = "; ".join(str(d.get("message", "")) for d in verdict.get("diagnostics", [])[:1])
        if _UNREACHABLE_MARK in why:
            raise VerifierUnavailable(
                f"fim_rlvr's compute_score: {why}. Start the service (node dist/cli.js serve …) or the Ray pool, and "
                "point FIM_RLVR_SERVICE (or reward_kwargs.service) at it"
            )
        message = (
            f"fim_rlvr's compute_score: task {verdict.get('taskId')}: a {kind} verdict the completion did not cause "
            f"({why}); scored 0.0 and masked"
        )
        if options.on_masked == "raise":
            raise MaskedVerdict(message)
        log.warning(message)
    return {
        "score": reward or 0.0,
        "verdict": kind,
        "proved": kind == "proved",
        "masked": reward is None,
        "timed_out": False,
    }


def _timed_out(task_id: str, options: VerlOptions) -> dict[str, Any]:
    message = (
        f"fim_rlvr's compute_score: task {task_id}: no verdict within timeout_s={options.timeout_s:g} s; scored 0.0 "
        "and masked (raise timeout_s, or start more services)"
    )
    if options.on_masked == "raise":
        raise MaskedVerdict(message)
    log.warning(message)
    return {"score": 0.0, "verdict": "timeout", "proved": False, "masked": True, "timed_out": True}


async def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """The reward of one completion in verl's dict form (see the module docstring). `kwargs` are verl's own
    (`reward_router_address`, `reward_model_tokenizer`: unused) and the config's reward_kwargs (VerlOptions)."""
    if data_source != DATA_SOURCE:
        raise ValueError(f"fim_rlvr's compute_score scores {DATA_SOURCE} rows, got data_source={data_source!r}")
    options = VerlOptions.read(kwargs)
    item = _item(solution_str, ground_truth, extra_info)
    pending = _batcher(options).submit(item)
    try:
        verdict = await asyncio.wait_for(asyncio.shield(pending), options.timeout_s)
    except asyncio.TimeoutError:
        return _timed_out(item["taskId"], options)
    return _result(verdict, options)


def compute_score_sync(
    data_source: str, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None, **kwargs: Any
) -> dict[str, Any]:
    """`compute_score` for callers without an event loop (verl's sync reward path, scripts)."""
    return asyncio.run(compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs))
