"""LoRA, precision and gradient checkpointing on the embedded model (CPU): only the adapter trains, the reference
is the base with the adapters disabled (no second copy), LoRA runs resume exactly, and the GPU-only options say
clearly what they need."""

from __future__ import annotations

import copy
import json
import threading
import types
from pathlib import Path
from typing import Any

import pytest
import torch
from fakes import RecordingEvents
from test_loop import ParityVerifier, StopAt, deterministic, make_trainer

from fim_rlvr.core.config import from_dict
from fim_rlvr.model import adapters, checkpoint, describe
from fim_rlvr.model.policy import Policy, PolicyError, build_embedded
from fim_rlvr.model.rollout import token_logprobs
from fim_rlvr.run.files import RunFiles
from fim_rlvr.run.trainer import TrainerError
from fim_rlvr.step.sft import warm_start
from fim_rlvr.tasks.data import load_tasks

CPU = torch.device("cpu")
# With a KL anchor (beta 0.2; the embedded model's GRPO has none by default): the LoRA reference is in the loss.
LORA: dict[str, Any] = {"lora_r": 4, "algo_config": {"beta": 0.2}}


def _is_adapter(name: str) -> bool:
    return "lora_" in name


def _policy(dataset: Path, **config: Any) -> tuple[Policy, adapters.Plan]:
    train_config = from_dict({"seed": 3, **config})
    plan = adapters.resolve(train_config, CPU)
    return adapters.load_policy(train_config, plan, CPU, dataset, load_tasks(dataset)), plan


def _logprobs(model: Any, policy: Policy) -> torch.Tensor:
    """Log-probs of two fixed completions after two fixed prompts."""
    tokenizer = policy.tokenizer
    prompts = [tokenizer("theorem r1 : (1 : Nat) = 1 := by\n  ")["input_ids"], tokenizer("theorem d2 :")["input_ids"]]
    completions = [tokenizer("rfl")["input_ids"], tokenizer(" 2 < 2 + 1 := by decide")["input_ids"]]
    logp, mask = token_logprobs(model, prompts, completions, int(tokenizer.pad_token_id))
    return logp * mask


def _save_base(dataset: Path, folder: Path) -> Path:
    """A Hugging Face model folder to start from (the embedded model, saved)."""
    base = build_embedded(dataset, load_tasks(dataset), 1, CPU)
    base.model.save_pretrained(folder)
    base.tokenizer.save_pretrained(folder)
    return folder


def _perturb_adapter(model: Any) -> None:
    """Stands for some optimiser steps: every lora_B away from zero."""
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.05)


def test_lora_trains_only_the_adapter_and_keeps_no_reference_copy(
    toy_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_copy(_: object) -> None:
        raise AssertionError("the reference must not be a copy of the model with LoRA")

    monkeypatch.setattr(adapters, "copy", types.SimpleNamespace(deepcopy=no_copy, copy=copy.copy))
    events = RecordingEvents()
    trainer = make_trainer(toy_dataset, tmp_path, ParityVerifier(), events, steps=1, sft_steps=0, **LORA)
    assert trainer.algorithm.needs_reference  # a KL anchor (beta 0.2), which LoRA serves without a copy
    model = trainer.policy.model
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    trainer.run()
    assert events.of("train/done")[-1]["status"] == "completed"
    assert trainer.ref_model is None
    changed = {name for name, p in model.named_parameters() if not torch.equal(before[name], p)}
    adapter_b = {name for name in before if "lora_B" in name}
    assert adapter_b and adapter_b <= changed
    assert all(_is_adapter(name) for name in changed), f"base weights moved: {sorted(changed)[:3]}"
    assert trainer.optimizer is not None
    optimised = sum(p.numel() for group in trainer.optimizer.param_groups for p in group["params"])
    assert optimised == sum(p.numel() for name, p in model.named_parameters() if _is_adapter(name))
    assert optimised < 0.1 * sum(p.numel() for p in model.parameters())
    line = next(m for m in events.of("train/log") if m["message"].startswith("training: "))["message"]
    assert "LoRA r=4 alpha=8 on down_proj,gate_proj,k_proj,o_proj,q_proj,up_proj,v_proj (" in line
    assert "parameters trainable), float32" in line
    final = tmp_path / "checkpoints" / "step-1"
    assert not (final / "ref_model").exists()


def test_the_reference_is_the_base_model_with_adapters_disabled(toy_dataset: Path) -> None:
    policy, _ = _policy(toy_dataset, **LORA)
    plain = build_embedded(toy_dataset, load_tasks(toy_dataset), 3, CPU)  # the same seeded base, no adapter
    plain.model.eval()
    expected = _logprobs(plain.model, plain)
    _perturb_adapter(policy.model)
    with adapters.reference_mode(policy.model):
        reference = _logprobs(policy.model, policy)
        assert not policy.model.training
    assert policy.model.training  # back in train mode for the policy's own forward
    assert torch.equal(reference, expected)
    policy.model.eval()
    assert not torch.allclose(_logprobs(policy.model, policy), expected, atol=1e-4)


def _warm_start(policy: Policy, dataset: Path) -> list[float]:
    train = [t for t in load_tasks(dataset) if t.split == "train"]
    options = {"batch_size": 8, "learning_rate": 3e-3, "seed": 0, "show_goal": False, "budget": 128}
    return warm_start(policy, train, steps=3, stop=threading.Event(), **options).losses  # type: ignore[arg-type]


def test_the_embedded_models_warm_start_trains_its_base_not_the_adapter(toy_dataset: Path) -> None:
    full, _ = _policy(toy_dataset)
    lora, _ = _policy(toy_dataset, **LORA)
    adapter = {n: p.detach().clone() for n, p in lora.model.named_parameters() if _is_adapter(n)}
    base = {n: p.detach().clone() for n, p in lora.model.named_parameters() if not _is_adapter(n)}
    # A random base gives an adapter nothing to adapt: the warm start is the embedded model's pretraining.
    assert _warm_start(lora, toy_dataset) == _warm_start(full, toy_dataset)
    after = dict(lora.model.named_parameters())
    assert all(torch.equal(adapter[n], after[n]) for n in adapter)
    assert all(not torch.equal(base[n], after[n]) for n in base)
    assert {n for n, p in after.items() if p.requires_grad} == set(adapter)  # the base is frozen again for RL


def test_a_model_paths_warm_start_trains_the_adapter_and_folds_it_into_the_base(
    toy_dataset: Path, tmp_path: Path
) -> None:
    folder = _save_base(toy_dataset, tmp_path / "base")
    policy, _ = _policy(toy_dataset, model=str(folder), **LORA)
    base = {n: p.detach().clone() for n, p in policy.model.named_parameters() if not _is_adapter(n)}
    _warm_start(policy, toy_dataset)
    after = dict(policy.model.named_parameters())
    assert any(not torch.equal(base[n], after[n]) for n in base)  # the fold moved the adapted base weights
    assert all(torch.count_nonzero(p) == 0 for n, p in after.items() if "lora_B" in n)  # a fresh adapter for RL
    assert policy.base_path is None  # so checkpoints carry the changed base in base_model/


def test_folding_the_adapter_after_sft_makes_the_policy_the_reference(toy_dataset: Path) -> None:
    policy, _ = _policy(toy_dataset, **LORA)
    _perturb_adapter(policy.model)  # what an SFT warm start teaches the adapter
    policy.model.eval()
    sft_policy = _logprobs(policy.model, policy)
    adapters.fold_adapter(policy.model, seed=3)
    assert all(torch.count_nonzero(p) == 0 for n, p in policy.model.named_parameters() if "lora_B" in n)
    assert torch.allclose(_logprobs(policy.model, policy), sft_policy, atol=1e-5)
    with adapters.reference_mode(policy.model):
        assert torch.allclose(_logprobs(policy.model, policy), sft_policy, atol=1e-5)


def test_named_targets_and_alpha_are_what_is_adapted(toy_dataset: Path) -> None:
    policy, plan = _policy(toy_dataset, lora_r=2, lora_alpha=5, lora_targets=["q_proj", "v_proj"])
    adapted = {n.split(".lora_")[0].rsplit(".", 1)[-1] for n, p in policy.model.named_parameters() if p.requires_grad}
    assert adapted == {"q_proj", "v_proj"}
    assert "LoRA r=2 alpha=5 on q_proj,v_proj (" in describe.training(policy.model, plan)
    with pytest.raises(PolicyError, match=r"LoRA cannot adapt \['nope_proj'\].*lora_targets"):
        _policy(toy_dataset, lora_r=2, lora_targets=["nope_proj"])


def test_merged_weights_are_the_policy_as_one_model_and_change_nothing(toy_dataset: Path) -> None:
    policy, _ = _policy(toy_dataset, **LORA)
    _perturb_adapter(policy.model)
    policy.model.eval()
    before = {n: p.detach().clone() for n, p in policy.model.named_parameters()}
    plain = build_embedded(toy_dataset, load_tasks(toy_dataset), 3, CPU)
    weights = dict(adapters.merged_weights(policy.model))
    assert weights.keys() == {n for n, _ in plain.model.named_parameters()}
    plain.model.load_state_dict(weights, strict=False)
    plain.model.eval()
    assert torch.allclose(_logprobs(plain.model, plain), _logprobs(policy.model, policy), atol=1e-5)
    assert all(torch.equal(before[n], p) for n, p in policy.model.named_parameters())


def test_a_stopped_lora_run_resumes_exactly(toy_dataset: Path, tmp_path: Path) -> None:
    steps = 4
    straight = make_trainer(toy_dataset, tmp_path / "straight", ParityVerifier(), steps=steps, **LORA)
    straight.run()
    expected = deterministic(RunFiles(tmp_path / "straight").read_metrics())
    assert [m["step"] for m in expected] == [1, 2, 3, 4]
    assert any(m["kl"] != 0 for m in expected)  # the disabled-adapter reference is in the loss

    events = StopAt(3)
    first = make_trainer(toy_dataset, tmp_path / "stopped", ParityVerifier(), events, steps=steps, **LORA)
    events.trainer = first
    first.run()
    assert events.of("train/checkpoint")[-1]["step"] == 3
    folder = tmp_path / "stopped" / "checkpoints" / "step-3"
    # The layout export-model reads: the adapter in model/, the SFT-changed embedded base in base_model/.
    assert (folder / "model" / "adapter_config.json").is_file()
    assert (folder / "model" / "adapter_model.safetensors").is_file()
    assert (folder / "base_model" / "config.json").is_file()
    assert not (folder / "ref_model").exists()
    assert json.loads((folder / "state.json").read_text())["lora"] is True

    resumed = make_trainer(toy_dataset, tmp_path / "stopped", ParityVerifier(), resume=True, steps=steps, **LORA)
    assert resumed.resumed_from == 3 and resumed.ref_model is None
    resumed.run()
    assert deterministic(RunFiles(tmp_path / "stopped").read_metrics()) == expected


def test_a_lora_run_on_a_model_path_names_its_base_and_resumes(toy_dataset: Path, tmp_path: Path) -> None:
    _save_base(toy_dataset, tmp_path / "base")
    options: dict[str, Any] = {"model": str(tmp_path / "base"), "sft_steps": 0, "device": "cpu", **LORA}
    first = make_trainer(toy_dataset, tmp_path / "run", ParityVerifier(), steps=2, **options)
    first.run()
    folder = tmp_path / "run" / "checkpoints" / "step-2"
    assert not (folder / "base_model").exists()  # the unchanged base is named, not copied
    named = json.loads((folder / "model" / "adapter_config.json").read_text())["base_model_name_or_path"]
    assert named == str((tmp_path / "base").resolve())
    assert json.loads((folder / "state.json").read_text())["base_model"] == named
    resumed = make_trainer(toy_dataset, tmp_path / "run", ParityVerifier(), resume=True, steps=3, **options)
    assert resumed.resumed_from == 2
    trained = {n: p.detach().clone() for n, p in first.policy.model.named_parameters()}
    assert all(torch.equal(trained[n], p) for n, p in resumed.policy.model.named_parameters())
    plain, _ = _policy(toy_dataset)
    checkpoint.save(tmp_path / "full", 1, model=plain.model, tokenizer=plain.tokenizer, optimizer=None, state={})
    with pytest.raises(TrainerError, match="holds a fully fine-tuned model but this run trains LoRA"):
        make_trainer(toy_dataset, tmp_path / "full", ParityVerifier(), resume=True, steps=3, **options)
    with pytest.raises(TrainerError, match="holds a LoRA adapter"):
        make_trainer(
            toy_dataset, tmp_path / "run", ParityVerifier(), resume=True, steps=3, **{**options, "lora_r": None}
        )


def _checkpointing(model: Any) -> bool:
    return bool(getattr(model, "is_activation_checkpointing", None) or model.is_gradient_checkpointing)


@pytest.mark.parametrize("lora", [True, False], ids=["lora", "full"])
def test_gradient_checkpointing_gives_the_same_gradients(toy_dataset: Path, lora: bool) -> None:
    options = LORA if lora else {}
    gradients = []
    for checkpointing in (False, True):
        policy, _ = _policy(toy_dataset, gradient_checkpointing=checkpointing, **options)
        if lora:
            _perturb_adapter(policy.model)  # else lora_A's gradient is zero and proves little
        assert _checkpointing(policy.model) == checkpointing
        loss = -_logprobs(policy.model, policy).sum()
        loss.backward()
        gradients.append({n: p.grad.clone() for n, p in policy.model.named_parameters() if p.grad is not None})
    plain, recomputed = gradients
    assert plain and plain.keys() == recomputed.keys()
    assert all(torch.allclose(plain[n], recomputed[n], atol=1e-6) for n in plain)


def test_bf16_on_cpu_loads_the_base_in_bfloat16(toy_dataset: Path) -> None:
    policy, plan = _policy(toy_dataset, bf16=True, **LORA)
    assert plan.dtype == torch.bfloat16
    dtypes = {n: p.dtype for n, p in policy.model.named_parameters()}
    assert {d for n, d in dtypes.items() if not _is_adapter(n)} == {torch.bfloat16}
    assert {d for n, d in dtypes.items() if _is_adapter(n)} == {torch.float32}  # peft keeps adapters in float32
    assert "bf16" in describe.training(policy.model, plan)
    default, plan = _policy(toy_dataset)
    assert plan.dtype == torch.float32 and next(default.model.parameters()).dtype == torch.float32


def test_a_bf16_lora_run_with_gradient_checkpointing_trains_on_cpu(toy_dataset: Path, tmp_path: Path) -> None:
    events = RecordingEvents()
    options = {"bf16": True, "gradient_checkpointing": True, "sft_steps": 0, **LORA}
    trainer = make_trainer(toy_dataset, tmp_path, ParityVerifier(), events, steps=1, **options)
    before = {n: p.detach().clone() for n, p in trainer.policy.model.named_parameters() if "lora_B" in n}
    trainer.run()
    assert events.of("train/done")[-1]["status"] == "completed"
    after = dict(trainer.policy.model.named_parameters())
    assert all(not torch.equal(before[n], after[n]) for n in before)
    line = next(m for m in events.of("train/log") if m["message"].startswith("training: "))["message"]
    assert "bf16 base, float32 adapters (on CPU: slower than float32 there), gradient checkpointing" in line


def test_gpu_only_options_say_what_they_need_here(toy_dataset: Path, tmp_path: Path) -> None:
    def plan(device: str, **config: Any) -> adapters.Plan:
        return adapters.resolve(from_dict({"lora_r": 4, "bf16": False, **config}), torch.device(device))

    with pytest.raises(PolicyError, match="needs a CUDA GPU"):
        plan("cpu", load_in_4bit=True)
    if not adapters._importable("bitsandbytes"):
        with pytest.raises(PolicyError, match=r"pip install 'fim_rlvr\[qlora\]'"):
            plan("cuda", load_in_4bit=True)
    with pytest.raises(PolicyError, match=r"unsloth was asked for but cannot be used: .*CUDA GPU"):
        plan("cpu", unsloth=True, model=str(tmp_path))
    assert plan("cpu").unsloth is False  # the default: peft on CPU
    with pytest.raises(TrainerError, match="needs a CUDA GPU"):
        make_trainer(toy_dataset, tmp_path / "run", ParityVerifier(), load_in_4bit=True, **LORA)


def test_the_embedded_models_width_and_depth_are_config_keys(toy_dataset: Path) -> None:
    """`embedded_width` and `embedded_layers` size the embedded model (the larger-model arm of bench:rl-variants);
    a head per 32 of width and the MLP's 2.75 x width keep the default's shape."""
    default, _ = _policy(toy_dataset)
    wide, _ = _policy(toy_dataset, embedded_width=256, embedded_layers=6)
    shape = wide.model.config
    assert (shape.hidden_size, shape.num_hidden_layers, shape.num_attention_heads) == (256, 6, 8)
    assert shape.intermediate_size == 704 and default.model.config.intermediate_size == 352
    assert default.model.config.num_attention_heads == 4
    count = lambda policy: sum(p.numel() for p in policy.model.parameters())  # noqa: E731
    assert count(wide) > 4 * count(default)
