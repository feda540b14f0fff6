"""Mixed precision as large-model training does it (model/precision.py): full fine-tuning in bf16 keeps float32
master weights and computes in bfloat16, so one optimiser step at a real model's learning rate (1e-6) moves every
weight that has a gradient; bfloat16 weights updated in place (the old way) lose almost every such step to rounding.
LoRA keeps its adapters in float32 over a bfloat16 base and needs no master copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from fakes import RecordingEvents, verdict_for
from test_loop import ParityVerifier, make_trainer

from fim_rlvr.algorithms import make
from fim_rlvr.core.config import from_dict
from fim_rlvr.core.protocol import Verdict
from fim_rlvr.model import adapters, describe
from fim_rlvr.model.policy import Policy
from fim_rlvr.model.rollout import TransformersBackend
from fim_rlvr.run.distributed import Ranks
from fim_rlvr.step.batch import Group
from fim_rlvr.step.loss import LossModels
from fim_rlvr.step.optimise import make_optimizer, optimise
from fim_rlvr.tasks.data import load_tasks

CPU = torch.device("cpu")
LR = 1e-6
"""A real model's full fine-tuning learning rate (TrainConfig's default for a model path)."""


def bf16_policy(dataset: Path, **config: Any) -> tuple[Policy, adapters.Plan, Any]:
    train_config = from_dict({"seed": 5, "bf16": True, "learning_rate": LR, "max_new_tokens": 6, **config})
    plan = adapters.resolve(train_config, CPU)
    return adapters.load_policy(train_config, plan, CPU, dataset, load_tasks(dataset)), plan, train_config


def groups_of(policy: Policy, dataset: Path) -> list[Group]:
    """Two tasks' groups of four sampled completions, half of each group rewarded: every sample has an advantage."""
    backend = TransformersBackend(
        policy.model, policy.tokenizer, policy.stop_token_ids(), compute_dtype=policy.compute_dtype
    )
    tasks = [t for t in load_tasks(dataset) if t.split == "train"][:2]
    prompts = [t.prefix for t in tasks]
    rollouts = backend.generate(prompts, num_return=4, max_new_tokens=6, temperature=1.0, top_p=1.0, seed=3)
    groups = []
    for index, task in enumerate(tasks):
        mine = rollouts[index * 4 : (index + 1) * 4]
        verdicts = [Verdict.from_wire(verdict_for(task.id, "x", "x" if k % 2 == 0 else None)) for k in range(len(mine))]
        groups.append(Group(task, mine, [r.text for r in mine], verdicts))
    return groups


def one_step(policy: Policy, config: Any, groups: list[Group]) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """One RL optimiser step through the trainer's own `optimise`; per parameter (before, after) and its gradient."""
    algorithm = make("grpo", {"beta": 0.0, "max_completion_length": 6})
    models = LossModels(policy.model, policy.model, None, int(policy.tokenizer.pad_token_id), 1.0, policy.compute_dtype)
    weights = adapters.trainable_parameters(policy.model)
    optimizer = make_optimizer(weights, config)
    before = {n: p.detach().clone() for n, p in policy.model.named_parameters() if p.requires_grad}
    optimise(
        groups,
        step=1,
        algorithm=algorithm,
        models=models,
        optimizer=optimizer,
        config=config,
        ranks=Ranks(),
        device=CPU,
    )
    return {
        n: (before[n], p.detach())
        for n, p in policy.model.named_parameters()
        if p.requires_grad and p.grad is not None and bool(p.grad.ne(0).any())
    }


def test_bf16_full_fine_tuning_keeps_float32_master_weights_and_computes_in_bf16(toy_dataset: Path) -> None:
    policy, plan, _ = bf16_policy(toy_dataset)
    assert plan.dtype == torch.float32 and plan.compute_dtype == torch.bfloat16
    assert policy.compute_dtype == torch.bfloat16
    assert {p.dtype for p in policy.model.parameters()} == {torch.float32}
    assert "bf16 compute over float32 master weights" in describe.training(policy.model, plan)
    seen: list[torch.dtype] = []
    layer = next(m for m in policy.model.modules() if isinstance(m, torch.nn.Linear))
    handle = layer.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    try:
        groups_of(policy, toy_dataset)
    finally:
        handle.remove()
    assert seen and set(seen) == {torch.bfloat16}, "sampling and old log-probs compute in bf16"


def test_one_step_at_lr_1e_6_moves_every_weight_that_has_a_gradient(toy_dataset: Path) -> None:
    policy, _, config = bf16_policy(toy_dataset)
    moved = one_step(policy, config, groups_of(policy, toy_dataset))
    assert len(moved) == sum(1 for p in policy.model.parameters() if p.requires_grad), "every weight has a gradient"
    grads = {n: p.grad for n, p in policy.model.named_parameters() if p.grad is not None}
    for name, (before, after) in moved.items():
        has_gradient = grads[name].ne(0)
        unmoved = (before == after) & has_gradient
        assert not bool(unmoved.any()), f"{name}: {int(unmoved.sum())} of {int(has_gradient.sum())} entries stayed"


def test_bf16_weights_updated_in_place_lose_that_step(toy_dataset: Path) -> None:
    """The old way, for contrast (what the test above would catch): the same step on bfloat16 weights leaves most of
    them exactly as they were, since 1e-6 of a weight is far below bfloat16's rounding step (1/128 of it)."""
    policy, _, config = bf16_policy(toy_dataset)
    groups = groups_of(policy, toy_dataset)
    policy.model.to(torch.bfloat16)
    policy.compute_dtype = None
    moved = one_step(policy, config, groups)
    changed = sum(int((before != after).sum()) for before, after in moved.values())
    total = sum(before.numel() for before, _ in moved.values())
    assert changed < 0.1 * total, (changed, total)


def test_lora_in_bf16_keeps_float32_adapters_over_a_bf16_base_without_autocast(toy_dataset: Path) -> None:
    policy, plan, _ = bf16_policy(toy_dataset, lora_r=4)
    assert plan.dtype == torch.bfloat16 and plan.compute_dtype is None and policy.compute_dtype is None
    trained = {p.dtype for p in policy.model.parameters() if p.requires_grad}
    frozen = {p.dtype for p in policy.model.parameters() if not p.requires_grad}
    assert trained == {torch.float32} and frozen == {torch.bfloat16}


def test_a_bf16_full_fine_tuning_run_trains_with_a_bf16_reference(toy_dataset: Path, tmp_path: Path) -> None:
    """The whole loop in bf16 with master weights: GRPO with a KL anchor (beta 0.2) keeps a reference, stored in bf16
    (it is never updated), and the run's weights change."""
    events = RecordingEvents()
    trainer = make_trainer(
        toy_dataset, tmp_path, ParityVerifier(), events, steps=1, sft_steps=0, bf16=True, algo_config={"beta": 0.2}
    )
    before = {n: p.detach().clone() for n, p in trainer.policy.model.named_parameters()}
    trainer.run()
    assert events.of("train/done")[-1]["status"] == "completed", events.of("train/done")
    assert trainer.ref_model is not None and {p.dtype for p in trainer.ref_model.parameters()} == {torch.bfloat16}
    assert any(not torch.equal(before[n], p) for n, p in trainer.policy.model.named_parameters())
