"""One rank of the 2-process test (test_distributed.py), run by torch.multiprocessing in a fresh interpreter.

It joins the process group as `accelerate launch` would (RANK, WORLD_SIZE, MASTER_ADDR/PORT in the environment),
builds the Trainer exactly as a rank under the host does (rank 0 shares the `initialize` params, the others receive
them), trains, and writes what the test checks to rank-K.json: parameter hashes before and after, what this rank
sent to the verifier service, and the notifications its events object received.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import torch


class Recorder:
    def __init__(self) -> None:
        self.methods: list[str] = []
        self.samples: list[dict[str, Any]] = []

    def emit(self, method: str, params: Any) -> None:
        self.methods.append(method)
        if method == "train/sample":
            self.samples.append(params)


class CountingVerifier:
    """The trainer's verifier (the service client), counting what this rank sends and what comes back."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[str] = []
        self.answered: list[str] = []

    def submit(self, items: Sequence[Any]) -> Future[Any]:
        self.sent.extend(item["taskId"] for item in items)
        future = self.inner.submit(items)
        future.add_done_callback(lambda f: self.answered.extend(v["kind"] for v in (f.result() or [])))
        return future  # type: ignore[no-any-return]

    def cancel(self, future: Future[Any]) -> None:
        self.inner.cancel(future)


def parameters_hash(model: Any) -> str:
    flat = torch.cat([p.detach().float().flatten().cpu() for p in model.parameters()])
    return hashlib.sha256(flat.numpy().tobytes()).hexdigest()


def run_rank(rank: int, port: int, params: dict[str, Any], out: str) -> None:
    os.environ.update(
        {
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
            "WORLD_SIZE": "2",
            "LOCAL_WORLD_SIZE": "2",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
            "OMP_NUM_THREADS": "1",
        }
    )
    from fim_rlvr.run import distributed
    from fim_rlvr.run.server import make_trainer

    ranks = distributed.start()
    assert ranks.rank == rank and ranks.world == 2
    shared = ranks.broadcast(params if ranks.is_main else None)
    assert shared is not None
    recorder = Recorder()
    trainer = make_trainer(shared, recorder)
    counting = CountingVerifier(trainer.verifier)
    trainer.verifier = counting
    ranks.agree_prepared(trainer.prepare)
    before = parameters_hash(trainer.policy.model)
    trainer.run()
    result = {
        "rank": rank,
        "before": before,
        "after": parameters_hash(trainer.policy.model),
        "sent": counting.sent,
        "answered": counting.answered,
        "methods": recorder.methods,
        "samples": recorder.samples,
        "files": type(trainer.files).__name__,
    }
    Path(out, f"rank-{rank}.json").write_text(json.dumps(result), encoding="utf-8")
    import torch.distributed as dist

    dist.barrier()  # neither rank leaves while the other may still need it
