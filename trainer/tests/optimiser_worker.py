"""One of two gloo ranks for test_optimiser.py: DAPO's loss through DDP with global totals, against one process's
loss over both ranks' groups. Rank 0's completions are long, rank 1's short, so per-rank token means would skew."""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch
import torch.distributed as dist
from optimiser_fixtures import gradients, make_groups, model_and_tokenizer

from fim_rlvr.algorithms import make
from fim_rlvr.run.distributed import Ranks
from fim_rlvr.step.loss import BatchView, LossModels, accumulate

CONFIG = {"max_completion_length": 40, "overlong_shaping": False, "mask_truncated_completions": False}


def _grad_through_ddp(rank: int, groups: list, use_global: bool) -> tuple[list[float], float]:
    model, tok = model_and_tokenizer(seed=0)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    ranks = Ranks(rank, 2)
    algorithm = make("dapo", CONFIG)
    view = BatchView.build(algorithm, groups, torch.device("cpu"))
    local = view.totals(algorithm)
    shares = ranks.all_gather(local)
    totals = (shares[0] + shares[1]).per_rank(2) if use_global else local
    models = LossModels(ddp, model, None, tok.pad_token_id, 1.0)
    accumulate(algorithm, models, view, totals, 3, ranks.backward, lambda: ranks.no_sync(ddp))
    return gradients(model).tolist(), local.tokens


def run_rank(rank: int, port: int, out: str) -> None:
    os.environ["OMP_NUM_THREADS"] = "1"
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        model, tok = model_and_tokenizer(seed=0)
        groups = [
            make_groups(model, tok.pad_token_id, seed=10, groups=2, lengths=(25, 40)),
            make_groups(model, tok.pad_token_id, seed=11, groups=2, lengths=(1, 4)),
        ]
        ddp_grad, tokens = _grad_through_ddp(rank, groups[rank], use_global=True)
        per_rank_mean, _ = _grad_through_ddp(rank, groups[rank], use_global=False)
        result = {"ddp": ddp_grad, "per_rank_mean": per_rank_mean, "tokens": Ranks(rank, 2).all_gather(tokens)}
        if rank == 0:  # one process, both ranks' groups, the algorithm's own loss: the gradient to match
            algorithm = make("dapo", CONFIG)
            view = BatchView.build(algorithm, groups[0] + groups[1], torch.device("cpu"))
            models = LossModels(model, model, None, tok.pad_token_id, 1.0)
            model.zero_grad(set_to_none=True)
            accumulate(algorithm, models, view, view.totals(algorithm), None, lambda loss: loss.backward(), _null)
            result["union"] = gradients(model).tolist()
        Path(out, f"rank-{rank}.json").write_text(json.dumps(result), encoding="utf-8")
        dist.barrier()
    finally:
        dist.destroy_process_group()


def _null() -> object:
    import contextlib

    return contextlib.nullcontext()
