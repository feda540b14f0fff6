"""The TRL integration: the datasets view, the reward function on a few completions, and two GRPOTrainer steps on a
tiny local model on CPU, all verified through a real `fim-rlvr serve --simulator` on loopback."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_process import ServiceProcess, export_dataset, read_tasks

from fim_rlvr.core.protocol import VERDICT_KINDS
from fim_rlvr.integrations.datasets_view import TRL_COLUMNS, load_view, trl_rows, write_view
from fim_rlvr.integrations.trl import AsyncLeanReward, LeanReward, lean_reward

HAVE_DATASETS = importlib.util.find_spec("datasets") is not None
HAVE_TRL = importlib.util.find_spec("trl") is not None


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_dataset(tmp_path_factory.mktemp("trl") / "dataset")


@pytest.fixture(scope="module")
def service(dataset: Path) -> Iterator[ServiceProcess]:
    process = ServiceProcess(dataset)
    yield process
    process.stop()


def test_view_rows_carry_the_prompt_and_what_the_reward_needs(dataset: Path) -> None:
    rows = trl_rows(dataset, split="train")
    tasks = {t["id"]: t for t in read_tasks(dataset)}
    assert rows and all(tuple(r) == TRL_COLUMNS for r in rows)
    assert len(rows) == sum(1 for t in tasks.values() if t["split"] == "train")
    for row in rows[:20]:
        task = tasks[row["task_id"]]
        assert row["prompt"] == f"<|fim_prefix|>{task['prefix']}<|fim_suffix|>{task['suffix']}<|fim_middle|>"
        assert (row["kind"], row["split"], row["file"], row["indent"]) == (
            task["kind"],
            "train",
            task["file"],
            task["indent"],
        )
    assert {r["kind"] for r in trl_rows(dataset, split=None, kinds=["tactic"])} == {"tactic"}


@pytest.mark.skipif(not HAVE_DATASETS, reason="the `datasets` library is not installed")
def test_view_loads_with_datasets(dataset: Path, tmp_path: Path) -> None:
    from datasets import load_dataset

    view = load_view(dataset, split="test")
    assert set(view.column_names) == set(TRL_COLUMNS)
    written = write_view(dataset, tmp_path / "view")
    assert [p.name for p in written] == ["train.jsonl", "validation.jsonl", "test.jsonl"]
    loaded = load_dataset("json", data_files={"test": str(tmp_path / "view" / "test.jsonl")})["test"]
    assert loaded["task_id"] == view["task_id"]


def _columns(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    return {key: [r[key] for r in rows] for key in TRL_COLUMNS if key != "prompt"}


def test_reward_function_on_a_few_completions(service: ServiceProcess, dataset: Path) -> None:
    rows = [r for r in trl_rows(dataset, split="train") if r["kind"] == "proof"][:2]
    middles = {t["id"]: t["middle"] for t in read_tasks(dataset)}
    right = middles[rows[0]["task_id"]]
    completions = [right + "<|endoftext|>junk after the stop", "exact no_such_lemma", middles[rows[1]["task_id"]]]
    batch = [rows[0], rows[0], rows[1]]
    reward = lean_reward(service.address)
    try:
        assert isinstance(reward, LeanReward) and reward.__name__ == "lean_verifier"
        logged: dict[str, float] = {}
        rewards = reward(
            [r["prompt"] for r in batch], completions, None, log_metric=logged.__setitem__, **_columns(batch)
        )
        assert rewards == [1.0, 0.0, 1.0]
        assert [v["kind"] for v in reward.last_verdicts] == ["proved", "failed", "proved"]
        assert logged == {"lean/proved_rate": 2 / 3, "lean/timeout_rate": 0.0, "lean/masked_rate": 0.0}
        async_reward = lean_reward(service.address, asynchronous=True)
        assert isinstance(async_reward, AsyncLeanReward)
        assert asyncio.run(async_reward([], completions[:2], None, **_columns(batch[:2]))) == [1.0, 0.0]
        async_reward.client.close()
    finally:
        reward.client.close()


def test_reward_is_none_when_no_verifier_answers(dataset: Path) -> None:
    rows = trl_rows(dataset, split="train")[:2]
    reward = lean_reward("127.0.0.1:9", retry_window=0.2)
    try:
        assert reward([], ["rfl", "simp"], None, **_columns(rows)) == [None, None]
        assert {(v["kind"], v.get("cause")) for v in reward.last_verdicts} == {("crashed", "infrastructure")}
    finally:
        reward.client.close()


@pytest.mark.skipif(not (HAVE_TRL and HAVE_DATASETS), reason="trl or datasets is not installed")
def test_two_grpo_trainer_steps_on_a_tiny_local_model(service: ServiceProcess, dataset: Path, tmp_path: Path) -> None:
    import torch
    from trl import GRPOConfig, GRPOTrainer

    from fim_rlvr.model.tiny_model import build_model, train_tokenizer
    from fim_rlvr.tasks.data import lean_texts, load_tasks
    from fim_rlvr.verifier.client import ServiceClient

    torch.manual_seed(0)
    tokenizer = train_tokenizer(lean_texts(dataset, load_tasks(dataset)))
    model = build_model(tokenizer, seed=0)
    train = load_view(dataset, split="train", kinds=["tactic"], tokenizer=tokenizer, max_prompt_tokens=96)
    reward = lean_reward(service.address)
    before = ServiceClient(service.address).stats()[0]["checks"]
    config = GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=12,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        seed=0,
        dataloader_num_workers=0,
    )
    trainer = GRPOTrainer(
        model=model, reward_funcs=reward, args=config, train_dataset=train, processing_class=tokenizer
    )
    trainer.train()
    try:
        assert trainer.state.global_step == 2
        checked = ServiceClient(service.address).stats()[0]["checks"] - before
        assert checked == 2 * 4, "every completion of both steps was verified by the service"
        assert reward.last_verdicts and all(v["kind"] in VERDICT_KINDS for v in reward.last_verdicts)
        assert all(v["verifier"]["kind"] == "simulator" for v in reward.last_verdicts)
        assert any("rewards/lean_verifier/mean" in entry for entry in trainer.state.log_history)
    finally:
        reward.client.close()
