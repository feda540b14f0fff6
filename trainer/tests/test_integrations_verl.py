"""The verl integration: verl 0.9's `compute_score` contract through a real `fim-rlvr serve --simulator`.

verl's reward loop (verl/experimental/reward_loop: the `naive` reward manager under RewardLoopManager) awaits an async
custom function with keyword arguments `data_source, solution_str, ground_truth, extra_info`, its own
`reward_router_address` and `reward_model_tokenizer` when a reward model router is set, and the config's
`reward_kwargs`; it keeps every key of a dict result per sample. The contract tests below call `compute_score` exactly
so. With verl installed and FIM_RLVR_VERL=1, the last test runs verl's own RewardLoopManager on a loopback Ray cluster:
verl pins transformers < 5.11, so it lives in trainer/.venv-verl, layered over the trainer's environment
(scripts/setup-verl.sh), and scripts/run-tests.mjs runs this file there after the main suite.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_process import ServiceProcess, export_dataset, read_tasks

from fim_rlvr.integrations import verl
from fim_rlvr.integrations.datasets_view import DATA_SOURCE, verl_rows

TOKEN = "verl-test-token"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_dataset(tmp_path_factory.mktemp("verl") / "dataset")


@pytest.fixture()
def service(dataset: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServiceProcess]:
    process = ServiceProcess(dataset, token=TOKEN)
    monkeypatch.setenv("FIM_RLVR_VERIFIER_SERVICE", process.address)
    monkeypatch.setenv("FIM_RLVR_VERIFIER_TOKEN", TOKEN)
    yield process
    verl.close_clients()
    process.stop()


def proof_rows(dataset: Path, n: int) -> list[dict[str, Any]]:
    """Whole-proof rows with a reference (open goals, `reference: false`, have no middle to propose)."""
    referenced = {t["id"] for t in read_tasks(dataset) if t.get("reference") is not False}
    rows = [
        r
        for r in verl_rows(dataset, split="train")
        if r["extra_info"]["kind"] == "proof" and r["reward_model"]["ground_truth"] in referenced
    ]
    return rows[:n]


def middle_of(dataset: Path, row: dict[str, Any]) -> str:
    return {t["id"]: t["middle"] for t in read_tasks(dataset)}[row["reward_model"]["ground_truth"]]


async def as_verl_calls(row: dict[str, Any], solution: str, **reward_kwargs: Any) -> dict[str, Any]:
    """One call as verl 0.9's naive reward manager makes it (keywords; extra_info gains num_turns and
    rollout_reward_scores; the config's reward_kwargs merged in)."""
    extra_info = {**row["extra_info"], "num_turns": None, "rollout_reward_scores": {}}
    return await verl.compute_score(
        data_source=row["data_source"],
        solution_str=solution,
        ground_truth=row["reward_model"]["ground_truth"],
        extra_info=extra_info,
        **reward_kwargs,
    )


def test_verl_rows_name_the_task_as_ground_truth(dataset: Path) -> None:
    rows = verl_rows(dataset, split="validation")
    assert rows
    row = rows[0]
    assert row["data_source"] == DATA_SOURCE
    assert row["prompt"][0]["role"] == "user" and row["prompt"][0]["content"].endswith("<|fim_middle|>")
    assert row["reward_model"] == {"style": "rule", "ground_truth": row["extra_info"]["task_id"]}
    assert {"indent", "fim", "stops", "index"} <= set(row["extra_info"])


def test_compute_score_is_async_and_returns_verls_dict_form(service: ServiceProcess, dataset: Path) -> None:
    assert asyncio.iscoroutinefunction(verl.compute_score), "verl awaits coroutine functions on its own loop"
    [row] = proof_rows(dataset, 1)
    right = middle_of(dataset, row)
    proved = asyncio.run(as_verl_calls(row, right, reward_router_address=None, reward_model_tokenizer=None))
    assert proved == {"score": 1.0, "verdict": "proved", "proved": True, "masked": False, "timed_out": False}
    failed = asyncio.run(as_verl_calls(row, "exact no_such_lemma", timeout_s=120))
    assert failed["score"] == 0.0 and failed["verdict"] in ("failed", "rejected") and failed["masked"] is False
    with pytest.raises(ValueError, match="data_source"):
        asyncio.run(verl.compute_score("openai/gsm8k", right, row["reward_model"]["ground_truth"], row["extra_info"]))
    with pytest.raises(ValueError, match="on_masked"):
        asyncio.run(as_verl_calls(row, right, on_masked="ignore"))


def test_concurrent_samples_share_one_request(
    service: ServiceProcess, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reward worker gathers its chunk's samples at once: they go out in one verify/batch."""
    rows = proof_rows(dataset, 2)
    sent: list[int] = []
    real = verl._verify

    async def counting(items: list[dict[str, Any]], options: verl.VerlOptions) -> Any:
        sent.append(len(items))
        return await real(items, options)

    monkeypatch.setattr(verl, "_verify", counting)

    async def worker_chunk() -> list[dict[str, Any]]:
        calls = [as_verl_calls(r, middle_of(dataset, r)) for r in rows for _ in range(4)]
        return await asyncio.gather(*calls)

    results = asyncio.run(worker_chunk())
    assert [r["score"] for r in results] == [1.0] * 8
    assert sent == [8]


def test_a_sample_past_its_timeout_scores_nothing_and_says_so(
    dataset: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Imports take 5 s (simulated) on the service: the right answer cannot arrive within the sample's 0.5 s.
    process = ServiceProcess(dataset, "--sim-header-ms", "5000", token=TOKEN)
    monkeypatch.setenv("FIM_RLVR_VERIFIER_SERVICE", process.address)
    monkeypatch.setenv("FIM_RLVR_VERIFIER_TOKEN", TOKEN)
    try:
        [row] = proof_rows(dataset, 1)
        with caplog.at_level(logging.WARNING, logger="fim_rlvr.verl"):
            late = asyncio.run(as_verl_calls(row, middle_of(dataset, row), timeout_s=0.5))
        assert late == {"score": 0.0, "verdict": "timeout", "proved": False, "masked": True, "timed_out": True}
        assert "no verdict within timeout_s=0.5 s" in caplog.text

        async def never(items: list[dict[str, Any]], options: verl.VerlOptions) -> Any:
            return await asyncio.get_running_loop().create_future()

        monkeypatch.setattr(verl, "_verify", never)
        with pytest.raises(verl.MaskedVerdict, match=r"timeout_s=0\.2"):
            asyncio.run(as_verl_calls(row, middle_of(dataset, row), timeout_s=0.2, on_masked="raise"))
    finally:
        verl.close_clients()
        process.stop()


def test_an_unreachable_verifier_stops_the_run_instead_of_scoring_zeros(dataset: Path) -> None:
    [row] = proof_rows(dataset, 1)
    # Port 9 (discard) on loopback: nothing listens.
    with pytest.raises(verl.VerifierUnavailable, match="FIM_RLVR_VERIFIER_SERVICE"):
        asyncio.run(as_verl_calls(row, "simp", service="127.0.0.1:9", unreachable_s=0.3))
    verl.close_clients()


def test_a_masked_verdict_is_logged_and_can_stop_the_run(
    dataset: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def environment(items: list[dict[str, Any]], options: verl.VerlOptions) -> Any:
        return [
            {
                "taskId": item["taskId"],
                "kind": "environment",
                "reward": 0.0,
                "rewardMetrics": {},
                "diagnostics": [{"severity": 1, "message": "lake build failed", "candidateRange": None}],
                "elapsedMs": 1.0,
                "cached": False,
                "verifier": {"kind": "simulator", "version": "-", "label": "test"},
            }
            for item in items
        ]

    monkeypatch.setattr(verl, "_verify", environment)
    [row] = proof_rows(dataset, 1)
    with caplog.at_level(logging.WARNING, logger="fim_rlvr.verl"):
        masked = asyncio.run(as_verl_calls(row, "simp"))
    assert masked["score"] == 0.0 and masked["masked"] is True and masked["verdict"] == "environment"
    assert "lake build failed" in caplog.text and "masked" in caplog.text
    with pytest.raises(verl.MaskedVerdict, match="lake build failed"):
        asyncio.run(as_verl_calls(row, "simp", on_masked="raise"))


def test_verl_can_load_the_file_by_path(service: ServiceProcess, dataset: Path) -> None:
    """verl imports custom_reward_function.path with spec_from_file_location, outside the package."""
    spec = importlib.util.spec_from_file_location("custom_module", verl.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    row = verl_rows(dataset, split="test")[0]
    try:
        result = asyncio.run(
            module.compute_score(
                DATA_SOURCE, middle_of(dataset, row), row["reward_model"]["ground_truth"], row["extra_info"]
            )
        )
        assert result["score"] == 1.0
    finally:
        module.close_clients()


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="pyarrow (for parquet) is not installed")
def test_verl_parquet_files(dataset: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from fim_rlvr.integrations.datasets_view import write_view

    written = write_view(dataset, tmp_path / "verl", layout="verl")
    assert [p.name for p in written] == ["train.parquet", "validation.parquet", "test.parquet"]
    table = pq.read_table(written[0])
    assert {"data_source", "prompt", "ability", "reward_model", "extra_info"} <= set(table.column_names)


def require_verl() -> None:
    """verl itself runs only where asked (FIM_RLVR_VERL=1); asked and missing fails."""
    if os.environ.get("FIM_RLVR_VERL") != "1":
        pytest.skip(
            "verl's own RewardLoopManager runs in trainer/.venv-verl (verl 0.9.1 pins transformers < 5.11): "
            "`npm test` runs this file there with FIM_RLVR_VERL=1 (scripts/setup-verl.sh makes it; docs/SCALING.md)"
        )
    for module in ("verl", "ray"):
        if importlib.util.find_spec(module) is None:
            pytest.fail(f"FIM_RLVR_VERL=1 but {module} is not installed: pip install verl==0.9.1")


def test_verls_reward_loop_manager_scores_a_batch(service: ServiceProcess, dataset: Path, tmp_path: Path) -> None:
    require_verl()
    import numpy as np
    import ray
    import torch
    from omegaconf import OmegaConf
    from tiny_chat import tokenizer as tiny_tokenizer
    from verl import DataProto
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    tok = tiny_tokenizer()
    tok.save_pretrained(tmp_path / "tokenizer")
    rows = proof_rows(dataset, 2)
    solutions = [middle_of(dataset, rows[0]), "exact no_such_lemma", middle_of(dataset, rows[1]), "simp_all_wrong"]
    batch_rows = [rows[0], rows[0], rows[1], rows[1]]
    prompt_len, response_len = 4, 48
    responses = torch.full((4, response_len), tok.pad_token_id, dtype=torch.long)
    mask = torch.zeros((4, prompt_len + response_len), dtype=torch.long)
    mask[:, :prompt_len] = 1
    for k, text in enumerate(solutions):
        ids = tok(text, add_special_tokens=False)["input_ids"][:response_len]
        assert tok.decode(ids, skip_special_tokens=True) == text, "the tiny tokenizer round-trips the completions"
        responses[k, : len(ids)] = torch.tensor(ids)
        mask[k, prompt_len : prompt_len + len(ids)] = 1
    data = DataProto.from_dict(
        tensors={
            "prompts": torch.ones((4, prompt_len), dtype=torch.long),
            "responses": responses,
            "attention_mask": mask,
        },
        non_tensors={
            "data_source": np.array([r["data_source"] for r in batch_rows], dtype=object),
            "reward_model": np.array([r["reward_model"] for r in batch_rows], dtype=object),
            "extra_info": np.array([dict(r["extra_info"]) for r in batch_rows], dtype=object),
        },
    )
    config = OmegaConf.create(
        {
            "actor_rollout_ref": {"model": {"path": str(tmp_path / "tokenizer"), "tokenizer_path": None}},
            "reward": {
                "num_workers": 2,
                "reward_manager": {"name": "naive", "source": "register", "module": {"path": None, "name": None}},
                "custom_reward_function": {
                    "path": verl.__file__,
                    "name": "compute_score",
                    "reward_kwargs": {"timeout_s": 120, "on_masked": "raise"},
                },
                "reward_model": {"enable": False, "enable_resource_pool": False},
            },
        }
    )
    trainer = str(Path(verl.__file__).resolve().parents[2])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        runtime_env={
            "env_vars": {
                "PYTHONPATH": trainer,
                "FIM_RLVR_VERIFIER_SERVICE": service.address,
                "FIM_RLVR_VERIFIER_TOKEN": TOKEN,
            }
        },
    )
    try:
        scored = RewardLoopManager(config).compute_rm_score(data)
        scores = scored.batch["rm_scores"].sum(dim=1).tolist()
        assert scores == [1.0, 0.0, 1.0, 0.0]
        assert list(scored.non_tensor_batch["verdict"][[0, 2]]) == ["proved", "proved"]
        assert not scored.non_tensor_batch["masked"].any()
    finally:
        ray.shutdown()
