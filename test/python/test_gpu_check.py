"""bench/gpu_check.py, the GPU checks in one go, starts and works here: its CPU-runnable parts run with `--device cpu
--tiny` (a 2-layer Qwen2-shaped model) on a PATH without Node, the GPU-only rows are skipped with their reasons, and
one JSON file holds the results. The figures mean nothing about GPUs; that each loop ran, trained and was timed is
what is checked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "gpu_check.py"
CHECKS = ["full_bf16", "lora_bf16", "vllm", "trl_grpo", "trl_grpo_vllm", "trl_async_grpo", "vllm_lora"]


def without_node(tmp_path: Path) -> dict[str, str]:
    """The environment with a PATH that holds this Python and nothing else: no node, npm or lake."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    return {**os.environ, "PATH": str(bin_dir)}


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = without_node(tmp_path)
    assert shutil.which("node", path=env["PATH"]) is None
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=600, check=False
    )


def has(*modules: str) -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in modules)


def test_the_cpu_runnable_checks_run_without_node_and_the_rest_say_why_they_were_skipped(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = run(tmp_path, "--device", "cpu", "--tiny", "--out", str(out))
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr[-4000:]}"
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert report["device"]["kind"] == "cpu" and report["model"]["layers"] == 2
    assert list(report["checks"]) == CHECKS
    checks = report["checks"]
    full = checks["full_bf16"]
    assert full["status"] == "passed", full
    assert full["results"]["master_dtype"] == "float32" and full["results"]["compute_dtype"] == "bfloat16"
    assert full["results"]["tensors_moved"] == full["results"]["tensors_trained"] > 0
    assert full["results"]["tokens_per_second"] > 0 and full["results"]["timed_steps"] == 1
    lora = checks["lora_bf16"]
    assert lora["status"] == "passed", lora
    assert lora["results"]["lora_b_moved"] == lora["results"]["lora_b"] > 0
    assert lora["results"]["base_tensors_moved"] == 0 and lora["results"]["base_dtype"] == "bfloat16"
    for name in ("vllm", "trl_grpo_vllm", "trl_async_grpo", "vllm_lora"):
        assert checks[name]["status"] == "skipped" and "CUDA" in checks[name]["why"], checks[name]
    if has("trl", "datasets"):
        trl = checks["trl_grpo"]
        assert trl["status"] == "passed", trl
        assert trl["results"]["tokens_per_second"] > 0 and trl["results"]["timed_steps"] == 1
        assert "full_bf16/trl_grpo" in report["ratios"]
    elif os.environ.get("CI") == "true":
        pytest.fail("trl and datasets are missing: `npm run test:setup` installs them (trainer[test])")
    else:
        assert checks["trl_grpo"]["status"] == "skipped"
    # The printed table: one row per check, the skipped ones with their reason, and where the JSON went.
    for name in CHECKS:
        assert any(line.startswith(name) for line in done.stdout.splitlines()), done.stdout
    assert "needs a CUDA GPU (vLLM runs on CUDA only)" in done.stdout
    assert f"results: {out}" in done.stdout and "0 failed, 4 skipped" in done.stdout


def test_without_a_gpu_the_gpu_run_skips_everything_and_says_so(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU: the default run would measure it")
    out = tmp_path / "results.json"
    done = run(tmp_path, "--out", str(out), "--only", "full_bf16,vllm")
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert list(report["checks"]) == ["full_bf16", "vllm"]
    assert all(c["status"] == "skipped" and "no CUDA GPU is visible" in c["why"] for c in report["checks"].values())


def test_an_unknown_check_is_a_usage_error(tmp_path: Path) -> None:
    done = run(tmp_path, "--only", "full_bf16,warp_drive")
    assert done.returncode == 2 and "unknown check(s) warp_drive" in done.stderr


@pytest.mark.skipif(not has("trl", "datasets"), reason="trl is not installed (trainer[test] installs it)")
def test_trls_configs_take_the_settings_held_equal(tmp_path: Path) -> None:
    """The GPU-only TRL rows cannot run here, but their configs can be built: this TRL knows the options, and the
    batch is one generation of prompts x group completions trained micro_batch at a time, as ours."""
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_check

    try:
        gpu_check.async_grpo_classes()
    except ImportError:
        pytest.skip("this TRL has no AsyncGRPOTrainer")
    settings = gpu_check.GPU_SETTINGS
    config, dropped = gpu_check.async_grpo_config(settings, tmp_path / "async", "http://127.0.0.1:1", cuda=False)
    assert config.num_generations == settings.group and config.max_completion_length == settings.max_new_tokens
    assert config.per_device_train_batch_size * config.gradient_accumulation_steps == settings.prompts * settings.group
    assert config.learning_rate == settings.lr_lora
    assert not getattr(config, "activation_checkpointing", getattr(config, "gradient_checkpointing", None))
    assert "vllm_server_base_url" not in dropped
    command = gpu_check.vllm_serve_command("vllm", tmp_path / "model", 8000, settings, 3)
    assert command[:3] == ["vllm", "serve", str(tmp_path / "model")]
    assert "--enable-lora" in command and command[command.index("--max-lora-rank") + 1] == str(settings.lora_r)


def fake_vllm_trainer(stale: bool) -> Any:
    """What `vllm_sync` reads of a trainer whose rollouts are vLLM's, with the engine's model standing behind a wrapper
    module (as a CUDA-graph wrapper puts its name in front of vLLM's) and a push that copies the weights in, as
    ColocatedEngine.load_weights does, or (`stale`) copies nothing."""
    import copy
    from types import SimpleNamespace

    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    sys.path.insert(0, str(SCRIPT.parent))
    sys.path.insert(0, str(REPO / "trainer"))
    import gpu_check
    from fim_rlvr.model.vllm_backend import vllm_weights

    torch.manual_seed(0)
    policy: Any = Qwen2ForCausalLM(Qwen2Config(**gpu_check.TINY_MODEL))
    engine_model: Any = copy.deepcopy(policy).to(torch.bfloat16)
    wrapper = torch.nn.Module()
    wrapper.runnable = engine_model
    with torch.no_grad():
        for parameter in policy.parameters():
            parameter.add_(0.01)  # the trainer has stepped since the engine last got its weights

    def push(model: Any) -> None:
        if stale:
            return
        inner = dict(engine_model.named_parameters())
        with torch.no_grad():
            for name, tensor in vllm_weights(model, torch.bfloat16):
                inner[name].copy_(tensor)

    worker = SimpleNamespace(model_runner=SimpleNamespace(model=wrapper))
    engine = SimpleNamespace(
        llm=SimpleNamespace(llm_engine=SimpleNamespace(model_executor=SimpleNamespace(driver_worker=worker)))
    )
    backend = SimpleNamespace(engine=engine, compute_dtype=torch.bfloat16, sync_weights=push)
    return SimpleNamespace(backend=backend, policy=SimpleNamespace(model=policy))


@pytest.mark.parametrize("stale", [False, True])
def test_the_vllm_weight_sync_comparison(tmp_path: Path, stale: bool) -> None:
    """The GPU-only comparison of vLLM's weights with the trainer's, on stand-ins: equal after a push, and an engine
    that kept old weights is a failure naming them."""
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_check

    trainer = fake_vllm_trainer(stale)
    ctx = gpu_check.Context("vllm", "cpu", gpu_check.TINY_SETTINGS, tmp_path, tmp_path, tmp_path, trainer=trainer)
    tensors = len(list(trainer.policy.model.named_parameters()))
    if not stale:
        found = gpu_check.vllm_sync(ctx)
        assert found["sync_tensors_compared"] == tensors and found["sync_tensors_different"] == 0
        return
    with pytest.raises(gpu_check.CheckFailed, match="vLLM holds other weights than the trainer pushed") as failed:
        gpu_check.vllm_sync(ctx)
    assert failed.value.results["sync_tensors_different"] == tensors
