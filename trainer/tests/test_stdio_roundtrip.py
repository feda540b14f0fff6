"""The real trainer process over real pipes, driven by the fake host (its candidates go to the host's fake service)."""

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
    "compare": [],  # no compute-matched baseline arm: this run is about the pipes
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


def test_hung_and_crashed_checks_over_pipes(toy_dataset: Path, tmp_path: Path) -> None:
    # Requests: 0 before-eval, 1 sft-eval, 2 step 1 (never answered), 3 step 2 (answered with an error), 4 step 1
    # sent again (never answered either), 5 step 3. Step 1's samples are the candidates' timeouts (counted, never
    # masked: a candidate must not earn the masked outcome by stalling the verifier); step 2's are masked.
    host = FakeHost(toy_dataset, hang=[2, 4], fail=[3])
    try:
        host.initialize({**SMALL, "steps": 3, "verify_timeout_s": 1.0}, toy_dataset, tmp_path / "run")
        assert host.done.wait(timeout=120), "".join(host.stderr_lines)
        assert host.of("train/done")[0]["status"] == "completed"
        progress = host.of("train/progress")
        assert [p["metrics"]["masked_samples"] for p in progress] == [0, 4, 0]
        assert [p["metrics"]["candidate_timeouts"] for p in progress] == [4, 0, 0]
        verdicts = [s["verdict"] for s in host.of("train/sample")]
        assert verdicts[:4] == ["timeout"] * 4 and verdicts[4:8] == ["crashed"] * 4
        assert len(host.service.hung) == 2 and not host.service.violations
        assert host.shutdown() == 0
    finally:
        host.kill()


def test_stop_checkpoints_then_answers_and_reports_done(toy_dataset: Path, tmp_path: Path) -> None:
    host = FakeHost(toy_dataset, hang=[3])  # step 2's batch is never answered: the run is mid-check when stopped
    try:
        host.initialize({**SMALL, "steps": 4, "verify_timeout_s": 600.0}, toy_dataset, tmp_path / "run")
        deadline = 120
        while not host.of("train/progress") and deadline > 0:
            host.done.wait(timeout=0.5)
            deadline -= 0.5
        assert host.of("train/progress"), "".join(host.stderr_lines)
        stop = host.request("train/stop", {})
        assert stop["step"] == 1 and stop["checkpoint"].endswith("step-1")
        assert host.done.wait(timeout=60)
        assert host.of("train/done")[0]["status"] == "stopped"
        assert host.shutdown() == 0
    finally:
        host.kill()
