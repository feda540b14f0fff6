"""The TRL integration: the datasets view, the reward function on a few completions, and two GRPOTrainer steps on a
tiny local model on CPU, all verified through a real `fim-rlvr serve --simulator` on loopback."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_process import ServiceProcess, export_dataset, read_tasks

from fim_rlvr.core.protocol import VERDICT_KINDS
from fim_rlvr.integrations.datasets_view import TRL_COLUMNS, load_view, trl_rows, write_view
from fim_rlvr.integrations.trl import AsyncLeanReward, LeanReward, lean_reward
from fim_rlvr.tasks.prompt_context import prompt_header
from fim_rlvr.tasks.prompts import HOLE_MARK
from fim_rlvr.verifier.client import ServiceClient

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
    contexts = [json.loads(line) for line in (dataset / "contexts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and all(tuple(r) == TRL_COLUMNS for r in rows)
    assert len(rows) == sum(1 for t in tasks.values() if t["split"] == "train")
    for row in rows[:20]:
        task = tasks[row["task_id"]]
        # The prompt: the file's header (imports, scope, variables), then the declaration up to the hole.
        context = contexts[task["context"]]
        header = prompt_header(context["imports"], context["scope"], context["variables"])
        assert header.startswith("namespace FimExamples.")
        assert row["prompt"] == f"<|fim_prefix|>{header}{task['prefix']}<|fim_suffix|>{task['suffix']}<|fim_middle|>"
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
    # Whole proofs the workspace holds (its open goals, `reference: false`, have no middle to propose).
    referenced = {t["id"] for t in read_tasks(dataset) if t.get("reference") is not False}
    rows = [r for r in trl_rows(dataset, split="train") if r["kind"] == "proof" and r["task_id"] in referenced][:2]
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


def _proof_rows(dataset: Path, count: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Whole-proof training rows with a reference, and every task's middle."""
    referenced = {t["id"] for t in read_tasks(dataset) if t.get("reference") is not False}
    rows = [r for r in trl_rows(dataset, split="train") if r["kind"] == "proof" and r["task_id"] in referenced]
    return rows[:count], {t["id"]: t["middle"] for t in read_tasks(dataset)}


@pytest.mark.parametrize("asynchronous", [False, True])
def test_the_reward_pickles_and_builds_its_client_in_the_process_that_calls_it(
    service: ServiceProcess, dataset: Path, asynchronous: bool
) -> None:
    """TRL's AsyncGRPOTrainer pickles its reward functions into a spawned rollout worker and calls them there with
    keyword arguments and chat-message completions."""
    import multiprocessing
    import pickle

    from reward_worker import score_in_worker
    from trl.trainer.utils import is_async_callable

    rows, middles = _proof_rows(dataset, 2)
    chat = [[{"role": "assistant", "content": f"```lean\n{middles[r['task_id']]}\n```"}] for r in rows]
    columns = _columns(rows) | {"fim": [False, False]}
    reward = lean_reward(service.address, asynchronous=asynchronous)
    assert is_async_callable(reward) is asynchronous
    assert reward.client is not None  # a client made in this process...
    copy = pickle.loads(pickle.dumps(reward))  # ...does not travel: the copy makes its own on first use
    assert copy._client is None
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(score_in_worker, (reward, chat, columns)) == [1.0, 1.0]
    reward.close()
    given = lean_reward(ServiceClient(service.address))
    with pytest.raises(TypeError, match="build it from addresses"):
        pickle.dumps(given)
    given.client.close()


def test_the_view_offers_chat_message_prompts(dataset: Path) -> None:
    rows = trl_rows(dataset, split="train", prompt_format="messages")
    text = trl_rows(dataset, split="train")
    assert [r["task_id"] for r in rows] == [r["task_id"] for r in text]
    for row in rows[:20]:
        ((message,),) = [row["prompt"]]
        assert message["role"] == "user" and HOLE_MARK in message["content"]
        assert row["fim"] is False, "the answer's ```lean block is the candidate"
    with pytest.raises(ValueError, match="prompt_format must be text or messages"):
        trl_rows(dataset, prompt_format="xml")


def test_a_batch_larger_than_the_services_queue_is_split_to_fit(dataset: Path) -> None:
    import time

    small = ServiceProcess(dataset, "--max-queue", "3")
    rows, middles = _proof_rows(dataset, 4)
    items = [{"taskId": r["task_id"], "candidate": middles[r["task_id"]]} for r in rows for _ in range(2)]
    try:
        with ServiceClient(small.address, busy_window=30) as client:
            started = time.monotonic()
            verdicts = client.verify(items)
            assert [v["kind"] for v in verdicts] == ["proved"] * len(items)
            assert client._services[0].queue_limit == 3
            assert time.monotonic() - started < 30, "split at once, not waited on as a busy service"
    finally:
        small.stop()


def test_one_name_for_the_service_address_the_old_one_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    from fim_rlvr.verifier.environment import SERVICE_ENV, TOKEN_ENV, setting

    for name in (SERVICE_ENV, TOKEN_ENV, "FIM_RLVR_SERVICE", "FIM_RLVR_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert setting(SERVICE_ENV) is None
    monkeypatch.setenv("FIM_RLVR_SERVICE", "10.0.0.7:8470")
    with pytest.warns(FutureWarning, match="FIM_RLVR_SERVICE is an old name: set FIM_RLVR_VERIFIER_SERVICE"):
        assert setting(SERVICE_ENV) == "10.0.0.7:8470"
    monkeypatch.setenv(SERVICE_ENV, "10.0.0.8:8470")
    assert setting(SERVICE_ENV) == "10.0.0.8:8470", "the name wins over the old one"


def test_the_trl_example_runs_with_a_tiny_model(service: ServiceProcess, dataset: Path, tmp_path: Path) -> None:
    """examples/trl_grpo.py as a user runs it, on the installed (newest) TRL, with tiny settings."""
    import os
    import subprocess
    import sys

    example = Path(__file__).resolve().parents[2] / "examples" / "trl_grpo.py"
    settings = ["--max-steps", "1", "--batch-size", "4", "--num-generations", "2", "--max-completion-length", "8"]
    settings += ["--max-prompt-tokens", "96", "--output-dir", str(tmp_path / "out")]
    run = subprocess.run(
        [sys.executable, str(example), "--dataset", str(dataset), "--service", service.address, *settings],
        env={**os.environ, "PYTHONPATH": str(example.parents[1] / "trainer")},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    assert "last step: reward" in run.stderr


def test_the_trl_example_runs_on_trls_async_trainer(service: ServiceProcess, dataset: Path, tmp_path: Path) -> None:
    """examples/trl_grpo.py --async-trainer on the installed TRL's AsyncGRPOTrainer, two steps on CPU: TRL's own
    trainer and rollout worker (a spawned process that unpickles the reward, builds its client there and scores
    through the service), with the CUDA and vLLM parts replaced as async_grpo_cpu.py lists. A verifier that did not
    answer would make the reward NaN; a reward that could not travel would stop the rollout worker."""
    import math
    import os
    import re
    import subprocess
    import sys

    tests = Path(__file__).resolve().parent
    example = tests.parents[1] / "examples" / "trl_grpo.py"
    settings = ["--max-steps", "2", "--batch-size", "4", "--num-generations", "2", "--max-completion-length", "8"]
    settings += ["--max-prompt-tokens", "96", "--output-dir", str(tmp_path / "out")]
    settings += ["--service", service.address, "--async-trainer", "--vllm-server", "http://stand-in"]
    run = subprocess.run(
        [sys.executable, str(tests / "async_grpo_cpu.py"), str(example), "--dataset", str(dataset), *settings],
        env={**os.environ, "PYTHONPATH": str(example.parents[1] / "trainer"), "TRL_EXPERIMENTAL_SILENCE": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    assert "'rewards/lean_verifier'" in run.stdout + run.stderr, "TRL logged no reward column of ours"
    found = re.search(r"last step: reward (\S+)", run.stderr)
    assert found and math.isfinite(float(found.group(1))), run.stderr[-2000:]


def test_the_async_example_asks_for_its_vllm_server(dataset: Path) -> None:
    import subprocess
    import sys

    example = Path(__file__).resolve().parents[2] / "examples" / "trl_grpo.py"
    run = subprocess.run(
        [sys.executable, str(example), "--dataset", str(dataset), "--async-trainer"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode != 0 and "give --vllm-server URL" in run.stderr


def test_the_cpu_attention_is_causal_attention_per_segment() -> None:
    """async_grpo_cpu's stand-in for FlashAttention-3's varlen kernel, against plain causal attention: each segment's
    queries are the last of its keys (bottom-right causal), grouped-query heads repeated."""
    import torch
    from async_grpo_cpu import varlen_causal_attention

    torch.manual_seed(0)
    heads, kv_heads, dim = 4, 2, 8
    key_lengths, query_lengths = [5, 3], [2, 3]  # segment 0: 2 queries over 5 keys; segment 1: a whole sequence
    k = torch.randn(sum(key_lengths), kv_heads, dim)
    v = torch.randn(sum(key_lengths), kv_heads, dim)
    full_q = [torch.randn(n, heads, dim) for n in key_lengths]
    q = torch.cat([fq[n - m :] for fq, n, m in zip(full_q, key_lengths, query_lengths, strict=True)])
    cu_k = torch.tensor([0, 5, 8], dtype=torch.int32)
    cu_q = torch.tensor([0, 2, 5], dtype=torch.int32)
    out = varlen_causal_attention(q, k, v, cu_q, cu_k, 3, 5)
    expected = []
    for i, (n, m) in enumerate(zip(key_lengths, query_lengths, strict=True)):
        ks = k[cu_k[i] : cu_k[i + 1]].transpose(0, 1).repeat_interleave(2, 0)
        vs = v[cu_k[i] : cu_k[i + 1]].transpose(0, 1).repeat_interleave(2, 0)
        dense = torch.nn.functional.scaled_dot_product_attention(full_q[i].transpose(0, 1), ks, vs, is_causal=True)
        expected.append(dense.transpose(0, 1)[n - m :])
    assert torch.allclose(out, torch.cat(expected), atol=1e-5)
