"""Micro-batches with global normalisers: the accumulated gradient equals one pass over the batch (to 1e-6) for
every algorithm, and so do the metrics; DAPO's token mean across two gloo ranks equals the mean over every rank's
tokens; the learning-rate schedule; the clip warning."""

from __future__ import annotations

import copy
import json
import socket
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.multiprocessing as mp
from optimiser_fixtures import gradients, make_groups, model_and_tokenizer

from fim_rlvr.algorithms import make
from fim_rlvr.core.config import ConfigError, from_dict
from fim_rlvr.step.loss import BatchView, LossModels, accumulate
from fim_rlvr.step.optimise import make_optimizer, split_groups
from fim_rlvr.step.schedule import learning_rate_factor

CONFIGS = {
    "grpo": {"beta": 0.04},
    "drgrpo": {"max_completion_length": 9},
    "dapo": {"max_completion_length": 9, "overlong_cache_len": 3},
    "gspo": {"epsilon": 0.05, "epsilon_high": 0.05},
    "dgpo": {"beta": 0.04},
}


def run(algorithm: Any, model: Any, ref: Any, pad: int, groups: list[Any], micro: int | None) -> tuple[Any, ...]:
    model.zero_grad(set_to_none=True)
    view = BatchView.build(algorithm, groups, torch.device("cpu"))
    models = LossModels(model, model, ref, pad, 1.0)
    loss, metrics, trained = accumulate(
        algorithm, models, view, view.totals(algorithm), micro, lambda loss: loss.backward(), nullcontext
    )
    assert trained
    return gradients(model), loss, metrics


@pytest.mark.parametrize("name", list(CONFIGS))
def test_micro_batches_give_the_gradient_of_one_pass(name: str) -> None:
    model, tok = model_and_tokenizer()
    ref = copy.deepcopy(model)
    with torch.no_grad():
        for p in ref.parameters():
            p.add_(0.01 * torch.randn_like(p))
    algorithm = make(name, CONFIGS[name])
    groups = make_groups(model, tok.pad_token_id, seed=1)
    whole, whole_loss, whole_metrics = run(algorithm, model, ref, tok.pad_token_id, groups, None)
    assert whole.abs().max() > 1e-4, "a gradient to compare"
    for micro in (1, 3, 5):
        parts, loss, metrics = run(algorithm, model, ref, tok.pad_token_id, groups, micro)
        scale = max(1.0, float(whole.abs().max()))
        assert float((parts - whole).abs().max()) <= 1e-6 * scale, (name, micro)
        assert loss == pytest.approx(whole_loss, abs=1e-6)
        assert set(metrics) == set(whole_metrics)
        for key, value in whole_metrics.items():
            assert metrics[key] == pytest.approx(value, abs=1e-6), (name, micro, key)
    # The reference path: the algorithm's own loss over the whole batch in one call, no totals.
    model.zero_grad(set_to_none=True)
    view = BatchView.build(algorithm, groups, torch.device("cpu"))
    from fim_rlvr.model.rollout import token_logprobs

    rollouts = view.rollouts
    prompts, completions = [r.prompt_ids for r in rollouts], [r.completion_ids for r in rollouts]
    logp, _ = token_logprobs(model, prompts, completions, tok.pad_token_id)
    with torch.no_grad():
        ref_logp = token_logprobs(ref, prompts, completions, tok.pad_token_id)[0] if algorithm.needs_reference else None
    direct, _ = algorithm.loss(logp, view.old_logp, view.mask, view.advantages, ref_logp, view.group_ids, view.rewards)
    direct.backward()
    assert float((gradients(model) - whole).abs().max()) <= 1e-6 * max(1.0, float(whole.abs().max()))


def test_per_micro_batch_means_would_differ_so_the_test_can_fail() -> None:
    model, tok = model_and_tokenizer()
    algorithm = make("dapo", CONFIGS["dapo"])
    groups = make_groups(model, tok.pad_token_id, seed=1)
    whole, _, _ = run(algorithm, model, None, tok.pad_token_id, groups, None)
    model.zero_grad(set_to_none=True)
    view = BatchView.build(algorithm, groups, torch.device("cpu"))
    models = LossModels(model, model, None, tok.pad_token_id, 1.0)
    slices = list(view.micro_batches(3, whole_groups=False))
    for rows in slices:  # each micro-batch's own token mean, averaged: what a local normaliser gives
        part = BatchView(
            view.rollouts[rows], view.group_ids[rows], [], view.rewards[rows], view.advantages[rows],
            view.mask[rows], view.old_logp[rows], None, {},
        )  # fmt: skip
        if part.mask.sum() > 0:
            local = part.totals(algorithm)
            accumulate(algorithm, models, part, local, None, lambda loss: (loss / len(slices)).backward(), nullcontext)
    assert float((gradients(model) - whole).abs().max()) > 1e-5


def test_dgpo_micro_batches_hold_whole_groups() -> None:
    model, tok = model_and_tokenizer()
    view = BatchView.build(make("dgpo"), make_groups(model, tok.pad_token_id, seed=2), torch.device("cpu"))
    assert [(s.start, s.stop) for s in view.micro_batches(3, whole_groups=True)] == [(0, 4), (4, 8), (8, 12)]
    assert [(s.start, s.stop) for s in view.micro_batches(9, whole_groups=True)] == [(0, 8), (8, 12)]
    assert [(s.start, s.stop) for s in view.micro_batches(5, whole_groups=False)] == [(0, 5), (5, 10), (10, 12)]
    assert [len(part) for part in split_groups(list(range(5)), 3)] == [2, 2, 1]


def test_learning_rate_schedules() -> None:
    assert [learning_rate_factor(u, 10, 0.0, "constant") for u in (0, 9)] == [1.0, 1.0]
    assert [round(learning_rate_factor(u, 10, 0.2, "linear"), 3) for u in range(4)] == [0.333, 0.667, 1.0, 0.875]
    assert learning_rate_factor(9, 10, 0.0, "linear") == pytest.approx(0.1)
    assert learning_rate_factor(0, 10, 0.0, "cosine") == 1.0
    assert learning_rate_factor(5, 10, 0.0, "cosine") == pytest.approx(0.5)


def test_weight_decay_is_decoupled_and_taken_from_the_config() -> None:
    weights = torch.nn.Parameter(torch.full((3,), 2.0))
    optimizer = make_optimizer([weights], from_dict({"learning_rate": 0.1, "weight_decay": 0.5}))
    weights.grad = torch.zeros(3)  # no gradient: Adam's own step is 0, only the decay moves the weights
    optimizer.step()
    assert torch.allclose(weights.detach(), torch.full((3,), 2.0 * (1 - 0.1 * 0.5)))
    with pytest.raises(ConfigError, match="weight_decay must be >= 0"):
        from_dict({"weight_decay": -0.1})


# ----------------------------------------------------------------------------------------------- two gloo ranks


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_dapo_divides_by_every_ranks_tokens_across_two_gloo_ranks(tmp_path: Path) -> None:
    from optimiser_worker import run_rank

    mp.spawn(run_rank, args=(_free_port(), str(tmp_path)), nprocs=2, join=True)
    result = json.loads((tmp_path / "rank-0.json").read_text())
    other = json.loads((tmp_path / "rank-1.json").read_text())
    assert result["tokens"][0] > 3 * result["tokens"][1], "rank 0 has many more tokens than rank 1"
    global_grad, union_grad = torch.tensor(result["ddp"]), torch.tensor(result["union"])
    assert torch.equal(global_grad, torch.tensor(other["ddp"])), "DDP gave both ranks the same gradient"
    scale = max(1.0, float(union_grad.abs().max()))
    assert float((global_grad - union_grad).abs().max()) <= 1e-6 * scale
    assert float((torch.tensor(result["per_rank_mean"]) - union_grad).abs().max()) > 1e-4, "local means are skewed"


def test_dgpo_pairs_only_answers_to_the_same_prompt_so_repair_turns_join_no_pair() -> None:
    from fim_rlvr.algorithms.dgpo import preference_pairs

    model, tok = model_and_tokenizer()
    groups = make_groups(model, tok.pad_token_id, seed=3)
    groups[0].turns = [0, 0, 1, 2]  # a first attempt that proved, one that failed, and two repair turns after it
    algorithm = make("dgpo")
    view = BatchView.build(algorithm, groups, torch.device("cpu"))
    repair_rows = [2, 3]
    assert view.prompt_ids is not None
    assert view.prompt_ids.tolist()[:2] == [0, 0] and view.prompt_ids.tolist()[4:] == view.group_ids.tolist()[4:]
    assert len(set(view.prompt_ids.tolist()[2:4])) == 2 and not set(view.prompt_ids.tolist()[2:4]) & {0, 1, 2}
    by_group = preference_pairs(view.mask, view.rewards, view.group_ids)
    assert bool(by_group[0, repair_rows].any()), "pairing by group alone compares answers to different prompts"
    by_prompt = preference_pairs(view.mask, view.rewards, view.loss_group_ids)
    assert not bool(by_prompt[repair_rows].any() or by_prompt[:, repair_rows].any())
    assert bool(by_prompt[0, 1]), "the first attempts' pair stays"
    assert view.totals(algorithm).pairs == float(by_prompt.sum())
    assert view.advantages[repair_rows].ne(0).all(), "the repair turns still take part in the group's GRPO term"
