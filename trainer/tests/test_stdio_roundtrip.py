"""The real trainer process over real pipes, driven by the fake host."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_host import FakeHost
from pylsp_jsonrpc.exceptions import JsonRpcException

SMALL = {
    "steps": 2,
    "sft_steps": 5,
    "batch_size": 2,
    "group_size": 2,
    "max_new_tokens": 8,
    "eval_limit": 4,
    "checkpoint_every": 1,
}


def test_a_whole_run_over_pipes(toy_dataset: Path, tmp_path: Path) -> None:
    host = FakeHost(toy_dataset)
    try:
        result = host.initialize(SMALL, toy_dataset, tmp_path / "run")
        assert result["trainer"].startswith("fim_rlvr ")
        assert result["device"] == "cpu" and result["resumedFromStep"] is None and result["totalSteps"] == 2
        assert host.done.wait(timeout=120), "".join(host.stderr_lines)
        done = host.of("train/done")[0]
        assert done["status"] == "completed" and done["step"] == 2
        assert [e["stage"] for e in host.of("train/eval")] == ["before", "sft", "after"]
        assert [p["step"] for p in host.of("train/progress")] == [1, 2]
        assert len(host.of("train/sample")) == 2 * 2 * 2
        assert [c["step"] for c in host.of("train/checkpoint")] == [0, 1, 2]
        # stop after the end answers at once with the last checkpoint
        stop = host.request("train/stop", {})
        assert stop["step"] == 2 and stop["checkpoint"].endswith("step-2")
        assert host.shutdown() == 0
    finally:
        host.kill()


def test_bad_config_is_a_trainer_error(toy_dataset: Path, tmp_path: Path) -> None:
    host = FakeHost(toy_dataset)
    try:
        with pytest.raises(JsonRpcException) as caught:
            host.initialize({"stepz": 3}, toy_dataset, tmp_path / "run")
        assert caught.value.code == -32001 and "valid keys" in str(caught.value.message)
        with pytest.raises(JsonRpcException) as caught:
            host.initialize({"kinds": ["steps"]}, toy_dataset, tmp_path / "run")
        assert caught.value.code == -32001 and "no train-split tasks" in str(caught.value.message)
        with pytest.raises(JsonRpcException) as caught:
            host.initialize({"model": str(tmp_path / "nope")}, toy_dataset, tmp_path / "run")
        assert caught.value.code == -32001 and "not a Hugging Face model directory" in str(caught.value.message)
        assert host.shutdown() == 0
    finally:
        host.kill()
