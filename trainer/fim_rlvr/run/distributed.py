"""The ranks of a multi-process run (`fim-rlvr train --launcher accelerate`): who is who, and what they share.

Every rank runs `python -m fim_rlvr --stdio` under `accelerate launch` (torchrun). Only rank 0 speaks JSON-RPC with
the host: the other ranks never read stdin nor write stdout (`claim_stdio_for_rank`, first thing at start-up).
Rank 0 receives `initialize` and broadcasts its params; all ranks build the same Trainer, each samples its own share
of groups (a seed of its own), checks them through the run's verifier service, and trains the model wrapped for DDP
by `Accelerator.prepare` (gradients averaged). Only rank 0 emits notifications, writes run files and checkpoints;
the other ranks' step records are gathered to it. A stop request reaches every rank at the next step boundary.

A rank other than 0 runs `run.server.follow`. A single-process run has one `Ranks` of world size 1 whose
collectives are identities, so the loop has one path.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from ..core.errors import TrainerError

T = TypeVar("T")

COLLECTIVE_TIMEOUT = timedelta(hours=12)
"""How long a rank waits for the others at a collective: rank 0 evaluates alone (pass@1 on the held-out holes,
Lean checks included) while the others wait at the next step, so this is long on purpose."""


FAILED_START_GRACE_S = 60.0
"""How long a rank other than 0 whose start failed waits for the host to stop the launcher before it exits."""


def launched_rank() -> int | None:
    """This process's rank when a launcher (torchrun / accelerate) started it with more than one process, else None."""
    world = os.environ.get("WORLD_SIZE", "1")
    if not world.isdigit() or int(world) <= 1:
        return None
    rank = os.environ.get("RANK", "0")
    return int(rank) if rank.isdigit() else 0


def claim_stdio_for_rank() -> None:
    """Under a launcher: every rank dies with the launcher (the host kills the launcher's process group, and
    torchrun puts each rank in a session of its own), and a rank other than 0 gives up stdin and stdout, which
    belong to rank 0's protocol. Call it before anything else is imported or printed."""
    rank = launched_rank()
    if rank is None:
        return
    _die_with_parent()
    if rank == 0:
        return
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def _die_with_parent() -> None:
    """SIGKILL when the parent (the launcher) exits: Linux's PR_SET_PDEATHSIG, else a watcher thread."""
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, signal.SIGKILL, 0, 0, 0) == 0:  # PR_SET_PDEATHSIG = 1
            if os.getppid() != parent:  # the parent died before prctl took effect
                os._exit(1)
            return
    except (OSError, AttributeError):
        pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="fim_rlvr-parent-watch", daemon=True).start()


class NullEvents:
    """Events of a rank other than 0: notifications go nowhere; warnings and errors go to stderr, tagged."""

    def __init__(self, rank: int) -> None:
        self.rank = rank

    def emit(self, method: str, params: Any) -> None:
        if method == "train/log" and params.get("level") in ("warning", "error"):
            print(f"[fim_rlvr rank {self.rank}] {params['level']}: {params['message']}", file=sys.stderr, flush=True)


@dataclass
class Ranks:
    """This process's place among the ranks; every collective is an identity when world == 1."""

    rank: int = 0
    world: int = 1
    accelerator: Any = None

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world > 1

    def seed(self, seed: int) -> int:
        """The sampling seed of this rank: the run's seed on rank 0 (a single-process run is unchanged), distinct
        and fixed on every other rank, so ranks draw different tasks and completions, reproducibly."""
        return seed if self.rank == 0 else (seed * 7_919 + self.rank * 104_729) % (2**31 - 1)

    def device(self, wanted: Any) -> Any:
        """The device this rank trains on: the accelerator's (cuda:LOCAL_RANK, or the CPU) under a launcher."""
        return self.accelerator.device if self.accelerator is not None else wanted

    def unsupported(self) -> str | None:
        """Why this launch cannot train, or None. FSDP and DeepSpeed ZeRO-3 shard the parameters, but rollouts are
        generated through the unsharded module, each rank for its own prompts and lengths (no synced generation,
        no gathered weights): those runs would deadlock or sample from shards, so they are refused up front."""
        if self.accelerator is None:
            return None
        from accelerate.utils import DistributedType

        kind = self.accelerator.distributed_type
        plugin = getattr(self.accelerator.state, "deepspeed_plugin", None)
        sharded = (
            "FSDP"
            if kind == DistributedType.FSDP
            else "DeepSpeed ZeRO-3"
            if kind == DistributedType.DEEPSPEED and getattr(plugin, "zero_stage", 0) == 3
            else None
        )
        if sharded is None:
            return None
        return (
            f"{sharded} shards the parameters, which this trainer's rollouts cannot sample from: use an accelerate "
            "config with DDP (distributed_type: MULTI_GPU) or DeepSpeed ZeRO-2, and LoRA (--lora-r) for models that "
            "do not fit on one GPU (docs/SCALING.md)"
        )

    # -------------------------------------------------------------------------------------------- collectives

    def broadcast(self, value: T) -> T:
        """Rank 0's value, on every rank."""
        if not self.distributed:
            return value
        import torch.distributed as dist

        box = [value]
        dist.broadcast_object_list(box, src=0)
        return box[0]  # type: ignore[no-any-return]

    def all_gather(self, value: T) -> list[T]:
        """Every rank's value, in rank order, on every rank."""
        if not self.distributed:
            return [value]
        import torch.distributed as dist

        out: list[Any] = [None] * self.world
        dist.all_gather_object(out, value)
        return out

    def gather_flat(self, items: list[T]) -> list[T]:
        """Every rank's items, concatenated in rank order, on every rank."""
        return [item for part in self.all_gather(items) for item in part]

    def own_state(self, state: dict[str, Any], log: Callable[[str, str], None]) -> dict[str, Any] | None:
        """A rank other than 0: its own sampler and pending batch from a checkpoint written by as many ranks; None
        on rank 0 (state's own fields) or when the rank count changed (then it samples afresh from its seed)."""
        if self.is_main:
            return None
        ranks = state.get("ranks")
        if not isinstance(ranks, list) or len(ranks) != self.world:
            log(
                "warning", f"the checkpoint was written by {len(ranks or [0])} rank(s): rank {self.rank} samples afresh"
            )
            return None
        return dict(ranks[self.rank])

    def share_params(self, params: dict[str, Any] | None) -> None:
        """Rank 0: send `initialize` params (None: the run will not start) to the other ranks."""
        self.broadcast(params)

    def receive_params(self) -> dict[str, Any] | None:
        """A rank other than 0: wait for rank 0's `initialize` params."""
        return self.broadcast(None)

    def agree_prepared(self, prepare: Callable[[], T]) -> T:
        """Runs `prepare` on every rank; raises on every rank when it failed on any (the first failure's message)."""
        failure: str | None = None
        result: Any = None
        error: Exception | None = None
        try:
            result = prepare()
        except Exception as caught:  # reported to every rank below, then raised here
            error, failure = caught, str(caught) or type(caught).__name__
        failures = self.all_gather(failure)
        if error is not None:
            raise error
        for rank, message in enumerate(failures):
            if message is not None:
                raise TrainerError(f"rank {rank} of {self.world} could not start: {message}")
        return result  # type: ignore[no-any-return]

    # -------------------------------------------------------------------------------------------- training

    def prepare(self, model: Any, optimizer: Any) -> tuple[Any, Any]:
        """(model to train through, optimizer): wrapped by accelerate (DDP, or what its config says) when there are
        several ranks; as they are otherwise."""
        if self.accelerator is None:
            return model, optimizer
        wrapped, prepared = self.accelerator.prepare(model, optimizer)
        return wrapped, prepared

    def no_sync(self, model: Any) -> Any:
        """A context in which backward accumulates gradients without synchronising the ranks (every micro-batch of
        an optimiser step but the last); a no-op with one rank."""
        if self.accelerator is not None:
            return self.accelerator.no_sync(model)
        sync = getattr(model, "no_sync", None)
        return sync() if self.distributed and callable(sync) else contextlib.nullcontext()

    def backward(self, loss: Any) -> None:
        if self.accelerator is None:
            loss.backward()
        else:
            self.accelerator.backward(loss)


_current = Ranks()


def current() -> Ranks:
    """This process's ranks (world size 1 unless `start` found a launcher)."""
    return _current


def start() -> Ranks:
    """Joins the other ranks when a launcher started several processes (the process group, through accelerate);
    a no-op otherwise. Each rank trains on cuda:LOCAL_RANK when CUDA is visible, else on the CPU with gloo."""
    global _current
    rank = launched_rank()
    if rank is None:
        return _current
    import torch
    from accelerate import Accelerator
    from accelerate.utils import InitProcessGroupKwargs

    accelerator = Accelerator(
        cpu=not torch.cuda.is_available(),
        kwargs_handlers=[InitProcessGroupKwargs(timeout=COLLECTIVE_TIMEOUT)],
    )
    _current = Ranks(accelerator.process_index, accelerator.num_processes, accelerator)
    return _current
