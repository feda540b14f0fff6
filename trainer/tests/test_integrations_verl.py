"""The verl integration: compute_score and compute_score_batch through a real `fim-rlvr serve --simulator`."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
from service_process import ServiceProcess, export_dataset, read_tasks

from fim_rlvr.integrations import verl
from fim_rlvr.integrations.datasets_view import DATA_SOURCE, verl_rows


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_dataset(tmp_path_factory.mktemp("verl") / "dataset")


@pytest.fixture()
def service(dataset: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServiceProcess]:
    process = ServiceProcess(dataset, token="verl-test-token")
    monkeypatch.setenv("FIM_RLVR_SERVICE", process.address)
    monkeypatch.setenv("FIM_RLVR_TOKEN", "verl-test-token")
    monkeypatch.setattr(verl, "_client", None)
    yield process
    verl.client().close()
    process.stop()


def test_verl_rows_name_the_task_as_ground_truth(dataset: Path) -> None:
    rows = verl_rows(dataset, split="validation")
    assert rows
    row = rows[0]
    assert row["data_source"] == DATA_SOURCE
    assert row["prompt"][0]["role"] == "user" and row["prompt"][0]["content"].endswith("<|fim_middle|>")
    assert row["reward_model"] == {"style": "rule", "ground_truth": row["extra_info"]["task_id"]}
    assert {"indent", "fim", "stops", "index"} <= set(row["extra_info"])


def test_compute_score_one_and_batch(service: ServiceProcess, dataset: Path) -> None:
    rows = [r for r in verl_rows(dataset, split="train") if r["extra_info"]["kind"] == "proof"][:2]
    middles = {t["id"]: t["middle"] for t in read_tasks(dataset)}
    first = rows[0]
    right = middles[first["reward_model"]["ground_truth"]]
    truth, info = first["reward_model"]["ground_truth"], first["extra_info"]
    assert verl.compute_score(DATA_SOURCE, right, truth, info) == 1.0
    assert verl.compute_score(DATA_SOURCE, "exact no_such_lemma", truth, info) == 0.0
    scores = verl.compute_score_batch(
        [DATA_SOURCE] * 3,
        [right, "simp_all_wrong", middles[rows[1]["reward_model"]["ground_truth"]]],
        [truth, truth, rows[1]["reward_model"]["ground_truth"]],
        [info, info, rows[1]["extra_info"]],
    )
    assert scores == [
        {"score": 1.0, "proved": 1.0, "masked": 0.0},
        {"score": 0.0, "proved": 0.0, "masked": 0.0},
        {"score": 1.0, "proved": 1.0, "masked": 0.0},
    ]
    with pytest.raises(ValueError, match="data_source"):
        verl.compute_score("openai/gsm8k", right, truth, info)


def test_verl_can_load_the_file_by_path(service: ServiceProcess, dataset: Path) -> None:
    """verl imports custom_reward_function.path with spec_from_file_location, outside the package."""
    spec = importlib.util.spec_from_file_location("custom_module", verl.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    row = verl_rows(dataset, split="test")[0]
    middle = {t["id"]: t["middle"] for t in read_tasks(dataset)}[row["reward_model"]["ground_truth"]]
    try:
        assert module.compute_score(DATA_SOURCE, middle, row["reward_model"]["ground_truth"], row["extra_info"]) == 1.0
    finally:
        module.client().close()


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="pyarrow (for parquet) is not installed")
def test_verl_parquet_files(dataset: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from fim_rlvr.integrations.datasets_view import write_view

    written = write_view(dataset, tmp_path / "verl", layout="verl")
    assert [p.name for p in written] == ["train.parquet", "validation.parquet", "test.parquet"]
    table = pq.read_table(written[0])
    assert {"data_source", "prompt", "ability", "reward_model", "extra_info"} <= set(table.column_names)
