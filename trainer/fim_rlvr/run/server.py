"""The trainer side of the host connection: initialize, train/stop, shutdown; the run in its own thread.

The reader (stdin) thread dispatches host messages; the run thread trains and talks to the host through
notifications, and checks its candidates through the run's verifier service (never over this connection). The run
starts only after the `initialize` answer has been written, so the host sees the answer before any event of it.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from concurrent.futures import Future
from typing import Any, BinaryIO

from pylsp_jsonrpc.exceptions import JsonRpcException

from ..core import config as train_config
from ..core.errors import TrainerError
from ..core.protocol import INITIALIZE, PROTOCOL_VERSION, SHUTDOWN, TRAIN_STOP, TRAINER_ERROR, StopResult
from ..verifier.check import Budget
from ..verifier.client import Address, ServiceClient, parse_address
from ..verifier.environment import SERVICE_ENV, TOKEN_ENV, setting
from . import distributed
from .rpc import Connection

log = logging.getLogger("fim_rlvr.run.server")


def user_error(message: str) -> JsonRpcException:
    """A JSON-RPC error -32001 whose message says what to do."""
    return JsonRpcException(message=message, code=TRAINER_ERROR)


class ConnectionEvents:
    """Trainer events as notifications on the connection."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def emit(self, method: str, params: Any) -> None:
        self.connection.notify(method, params)
        if method == "train/log":
            print(f"[fim_rlvr] {params['level']}: {params['message']}", file=sys.stderr, flush=True)


class TrainerServer:
    """Handlers for the host's requests."""

    def __init__(self, rfile: BinaryIO, wfile: BinaryIO, exit_process: bool = True) -> None:
        self.connection = Connection(
            rfile, wfile, {INITIALIZE: self.initialize, TRAIN_STOP: self.stop, SHUTDOWN: self.shutdown}
        )
        self.exit_process = exit_process
        self.trainer: Any = None
        self.thread: threading.Thread | None = None
        self.shutdown_requested = threading.Event()

    def serve(self) -> int:
        """Serve until shutdown (exit 0) or until stdin closes (the host is gone: exit 1 after stopping)."""
        self.connection.listen()
        if not self.shutdown_requested.is_set() and self.trainer is not None:
            # The host vanished: stop the run at the next step boundary so its checkpoint stays usable.
            self.trainer.stop_event.set()
            if self.thread is not None:
                self.thread.join(timeout=30)
        return 0 if self.shutdown_requested.is_set() else 1

    def initialize(self, params: Any) -> Any:
        if self.trainer is not None:
            raise user_error("initialize was already called; start a new trainer process for another run")
        if not isinstance(params, dict):
            raise user_error(
                "initialize needs params {protocolVersion, config, datasetDir, runDir, resume, verifier, "
                "verifierService, verifierBudget}"
            )
        if params.get("protocolVersion") != PROTOCOL_VERSION:
            raise user_error(
                f"this trainer speaks protocol {PROTOCOL_VERSION}, the host sent {params.get('protocolVersion')}: "
                "update the extension and the trainer together"
            )
        try:
            import torch  # noqa: F401  (fail here, clearly, rather than mid-run)
        except ImportError as error:
            raise user_error(
                f"PyTorch is not installed in this Python ({sys.executable}): run "
                f"`{sys.executable} -m pip install torch==2.13.0 transformers tokenizers` or pass --python"
            ) from error
        ranks = distributed.current()
        try:
            trainer = make_trainer(params, ConnectionEvents(self.connection))
        except TrainerError as error:
            ranks.share_params(None)  # the other ranks give up too
            raise user_error(str(error)) from error
        ranks.share_params(params)
        try:
            result = ranks.agree_prepared(trainer.prepare)
        except TrainerError as error:
            raise user_error(str(error)) from error
        except Exception as error:  # e.g. an unreadable run folder: still the user's to fix
            raise user_error(f"could not start the run: {error}") from error
        self.trainer = trainer
        self.thread = threading.Thread(target=trainer.run, name="fim_rlvr-run", daemon=True)
        where = os.environ.get(SERVICE_ENV) or "{host}:{port}".format(**params["verifierService"])
        ranks_note = f" by each of {ranks.world} ranks" if ranks.distributed else ""
        note = (
            f"candidates are checked{ranks_note} through the run's verifier service at {where}; a batch counts as "
            f"unanswered after {trainer.verify_silence_s:g} s without progress"
        )
        self.connection.after_next_response(lambda: trainer.log("info", note))
        self.connection.after_next_response(self.thread.start)
        return result

    def stop(self, _params: Any) -> Any:
        if self.trainer is None:
            answer: Future[StopResult] = Future()
            answer.set_result({"checkpoint": None, "step": 0})
            return answer
        return self.trainer.request_stop()

    def shutdown(self, _params: Any) -> None:
        self.shutdown_requested.set()
        if self.trainer is not None:
            self.trainer.stop_event.set()
        self.connection.after_next_response(self._exit)
        return None

    def _exit(self) -> None:
        if self.exit_process:
            sys.stderr.flush()
            os._exit(0)


# SERVICE_ENV names the verifier service this process uses instead of the one the host names (the ranks of other
# machines); fim_rlvr.verifier.environment reads it, and its old name with a warning.


def make_trainer(params: dict[str, Any], events: Any) -> Any:
    """The Trainer that `initialize` params describe (raises TrainerError for a bad config, folder or service). Every
    process checks its candidates through the run's verifier service, the only road to the verifier: the one the
    host names, or FIM_RLVR_VERIFIER_SERVICE (and FIM_RLVR_VERIFIER_TOKEN), with which the ranks of another node
    reach a service of their own."""
    from .trainer import Trainer  # imports torch: only once `initialize` has checked that it is there

    refusal = distributed.current().unsupported()
    if refusal is not None:
        raise TrainerError(refusal)

    try:
        config = train_config.from_dict(dict(params.get("config") or {}))
    except (train_config.ConfigError, TypeError) as error:
        raise TrainerError(str(error)) from error
    for key in ("datasetDir", "runDir"):
        if not isinstance(params.get(key), str) or not params[key]:
            raise TrainerError(f"initialize: {key} must be a folder path")
    try:
        budget = Budget.from_wire(params.get("verifierBudget"))
    except ValueError as error:
        raise TrainerError(f"initialize: {error}") from error
    # A lost service connection is retried for verify_timeout_s; what is still lost then is masked.
    elsewhere = setting(SERVICE_ENV)
    service: Any = params.get("verifierService")
    if elsewhere:  # a node of a multi-node run whose ranks cannot reach the main node's loopback service
        try:
            addresses = [parse_address(a) for a in elsewhere.split(",") if a.strip()]
        except ValueError as error:
            raise TrainerError(f"{SERVICE_ENV}: {error}") from error
        if not addresses:
            raise TrainerError(f"{SERVICE_ENV} is empty: give HOST:PORT (several, comma-separated, to balance)")
        verifier = ServiceClient(addresses, token=setting(TOKEN_ENV), retry_window=config.verify_timeout_s)
    else:
        try:
            address = Address(str(service["host"]), int(service["port"]))
            verifier = ServiceClient(address, token=str(service["token"]), retry_window=config.verify_timeout_s)
        except (KeyError, TypeError, ValueError) as error:
            raise TrainerError(
                f"initialize: verifierService must be {{host, port, token}}, got {service!r}: the trainer checks "
                "candidates only through the run's verifier service; update the host (extension or CLI) and the "
                "trainer together"
            ) from error
    return Trainer(
        config,
        params["datasetDir"],
        params["runDir"],
        resume=bool(params.get("resume", False)),
        verifier=verifier,
        events=events,
        verifier_identity=params.get("verifier"),
        verifier_budget=budget,
    )


def follow() -> int:
    """A rank other than 0: wait for the run's params from rank 0, build the same Trainer, train, exit."""
    ranks = distributed.current()
    params = ranks.receive_params()
    if params is None:
        return 1  # rank 0 refused initialize; the host reports why
    trainer: Any = None

    def build() -> Any:
        nonlocal trainer
        trainer = make_trainer(params, distributed.NullEvents(ranks.rank))
        return trainer.prepare()

    try:
        ranks.agree_prepared(build)
    except Exception as error:
        print(f"[fim_rlvr rank {ranks.rank}] error: {error}", file=sys.stderr, flush=True)
        # Rank 0 is answering `initialize` with this failure; exiting now could make torchrun end rank 0 before the
        # host reads the answer. The host stops the launcher (and with it this rank) once it has read it.
        threading.Event().wait(distributed.FAILED_START_GRACE_S)
        return 1
    trainer.run()
    return 0
