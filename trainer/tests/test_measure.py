"""What a run measures: pass@k's unbiased estimator, held-out pass@1 on novel and memorised holes, the validation
curve, the compute-matched SFT baseline, and the timeout figures of metrics.jsonl."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
import torch
from conftest import write_dataset
from fakes import ExactMatchVerifier, RecordingEvents, verdict_for
from test_loop import make_trainer

from fim_rlvr.core.config import from_dict
from fim_rlvr.core.protocol import BatchVerdict, VerifyItem
from fim_rlvr.run.files import RunFiles
from fim_rlvr.run.measure import held_out_summary
from fim_rlvr.run.validation import ks_for, pass_at_k

SCHEMA = Path(__file__).resolve().parents[2] / "lean-bridge" / "protocol" / "trainer.schema.json"


@pytest.mark.parametrize("n", [1, 2, 5, 10])
def test_pass_at_k_is_the_unbiased_estimator(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            expected = 1.0 - math.comb(n - c, k) / math.comb(n, k)
            assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12), (n, c, k)
    assert pass_at_k(n, 1, 1) == pytest.approx(1 / n)


def test_pass_at_k_stays_exact_where_binomials_would_overflow_a_float() -> None:
    assert pass_at_k(2000, 0, 1000) == 0.0
    assert pass_at_k(2000, 1, 1000) == pytest.approx(0.5)  # one right of 2000: half the 1000-subsets hold it
    assert pass_at_k(2000, 1999, 1) == pytest.approx(1999 / 2000)
    with pytest.raises(ValueError):
        pass_at_k(4, 5, 1)
    with pytest.raises(ValueError):
        pass_at_k(4, 1, 5)
    assert ks_for(1) == [1] and ks_for(4) == [1, 2, 4] and ks_for(6) == [1, 2, 4, 6]


def measured_dataset(folder: Path) -> Path:
    """The toy dataset with a validation split (every 4th train task) and its test tasks marked `novel`."""
    write_dataset(folder)
    path = folder / "tasks.jsonl"
    tasks = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    train_seen = 0
    for index, task in enumerate(tasks):
        if task["split"] == "train":
            train_seen += 1
            if train_seen % 4 == 0:
                task["split"] = "validation"
        elif task["split"] == "test":
            task["novel"] = index % 2 == 0
            task["heldOut"] = "instance" if index % 3 else "family"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return measured_dataset(tmp_path_factory.mktemp("measured"))


def test_held_out_pass_at_1_is_split_into_novel_and_memorised(dataset: Path, tmp_path: Path) -> None:
    events = RecordingEvents()
    trainer = make_trainer(
        dataset, tmp_path, ExactMatchVerifier(dataset), events, steps=1, sft_steps=0, eval_limit=None
    )
    trainer.run()
    evals = RunFiles(tmp_path).read_evals()
    novelty = evals["before"]["by_novelty"]
    tests = [t for t in trainer.test_tasks]
    assert novelty["novel"]["tasks"] == sum(t.novel is True for t in tests) > 0
    assert novelty["memorised"]["tasks"] == sum(t.novel is False for t in tests) > 0
    assert "unknown" not in novelty
    wire = events.of("train/eval")[0]
    assert wire["byNovelty"]["novel"]["tasks"] == novelty["novel"]["tasks"]
    jsonschema = pytest.importorskip("jsonschema")
    defs = json.loads(SCHEMA.read_text(encoding="utf-8"))["$defs"]
    jsonschema.validate(wire, {"$ref": "#/$defs/TrainEvalParams", "$defs": defs})


def test_held_out_pass_at_1_per_held_out_set(dataset: Path, tmp_path: Path) -> None:
    trainer = make_trainer(
        dataset, tmp_path, ExactMatchVerifier(dataset), RecordingEvents(), steps=1, sft_steps=0, eval_limit=None
    )
    trainer.run()
    evals = RunFiles(tmp_path).read_evals()
    sets = evals["before"]["by_held_out"]
    tests = trainer.test_tasks
    assert sets["instance"]["tasks"] == sum(t.held_out == "instance" for t in tests) > 0
    assert sets["family"]["tasks"] == sum(t.held_out == "family" for t in tests) > 0
    proved = set(evals["before"]["proved"])
    instances = [t for t in tests if t.held_out == "instance"]
    assert sets["instance"]["pass_at_1"] == sum(t.id in proved for t in instances) / len(instances)
    line = held_out_summary(evals, len(tests))
    assert f"; held-out instances ({sets['instance']['tasks']} holes): before " in line
    assert f"; held-out families ({sets['family']['tasks']} holes): before " in line


def test_a_dataset_without_novel_marks_reports_no_split(toy_dataset: Path, tmp_path: Path) -> None:
    events = RecordingEvents()
    make_trainer(toy_dataset, tmp_path, ExactMatchVerifier(toy_dataset), events, steps=0, sft_steps=0).run()
    assert RunFiles(tmp_path).read_evals()["before"]["by_novelty"] == {}
    assert "byNovelty" not in events.of("train/eval")[0]


class ProvesEverything:
    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        future: Future[list[BatchVerdict]] = Future()
        future.set_result([verdict_for(i["taskId"], i["candidate"], i["candidate"] or "x") for i in items])
        return future

    def cancel(self, future: Future[list[BatchVerdict]]) -> None:
        pass


def test_the_validation_curve_gets_a_point_every_n_steps(dataset: Path, tmp_path: Path) -> None:
    trainer = make_trainer(
        dataset, tmp_path, ExactMatchVerifier(dataset), steps=3, validation_every=2, validation_samples=4
    )
    trainer.run()
    points = RunFiles(tmp_path).read_validation()
    assert [p["step"] for p in points] == [0, 2, 3]  # before RL, every 2 steps, and after the last
    for point in points:
        assert point["split"] == "validation" and point["tasks"] == len(trainer.validation_tasks) > 0
        assert set(point["pass_at_k"]) == {"1", "2", "4"} and point["samples"] == 4
        ks = [point["pass_at_k"][k] for k in ("1", "2", "4")]
        assert all(0.0 <= v <= 1.0 for v in ks) and ks == sorted(ks)  # pass@k never falls as k grows
        assert point["temperature"] == trainer.config.temperature


def test_validation_counts_every_proved_completion(dataset: Path, tmp_path: Path) -> None:
    trainer = make_trainer(dataset, tmp_path, ProvesEverything(), steps=0, sft_steps=0, validation_samples=2)
    trainer.run()
    [point] = RunFiles(tmp_path).read_validation()
    assert point["greedy_pass_at_1"] == 1.0 and point["pass_at_k"] == {"1": 1.0, "2": 1.0}


class WeightsAtWarmStart(RecordingEvents):
    """Keeps a copy of the model's weights as they were when the warm start was evaluated."""

    def __init__(self) -> None:
        super().__init__()
        self.model: Any = None
        self.warm: dict[str, torch.Tensor] = {}

    def emit(self, method: str, params: Any) -> None:
        super().emit(method, params)
        if method == "train/eval" and params["stage"] == "sft" and self.model is not None:
            self.warm = {n: p.detach().clone() for n, p in self.model.named_parameters()}


def test_the_sft_baseline_spends_the_rl_steps_on_sft_from_the_same_warm_start(dataset: Path, tmp_path: Path) -> None:
    config = {"steps": 2, "batch_size": 2, "group_size": 3, "sft_batch_size": 4, "validation_every": 0}
    assert from_dict(config | {"baseline": "sft"}).baseline_sft_steps() == 3  # 2 x 2 x 3 sequences / 4 per step
    # Each optimiser pass over a generated batch is another forward and backward pass of every sequence in it.
    assert from_dict(config | {"baseline": "sft", "num_iterations": 2}).baseline_sft_steps() == 6
    assert from_dict(config | {"baseline": "sft", "steps_per_generation": 2}).baseline_sft_steps() == 3
    rl = make_trainer(dataset, tmp_path / "rl", ExactMatchVerifier(dataset), **config)
    rl.run()
    events = WeightsAtWarmStart()
    baseline = make_trainer(dataset, tmp_path / "sft", ExactMatchVerifier(dataset), events, baseline="sft", **config)
    events.model = baseline.policy.model
    baseline.run()
    assert events.of("train/done")[0]["status"] == "completed"
    assert not RunFiles(tmp_path / "sft").read_metrics()  # no RL step
    rl_evals, sft_evals = RunFiles(tmp_path / "rl").read_evals(), RunFiles(tmp_path / "sft").read_evals()
    assert set(sft_evals) == {"before", "sft", "after"}
    assert sft_evals["sft"] == rl_evals["sft"]  # the same run up to the warm start: a paired comparison
    assert any("3 more SFT steps" in e["message"] for e in events.of("train/log"))
    assert any(not torch.equal(events.warm[n], p) for n, p in baseline.policy.model.named_parameters())
    assert events.of("train/checkpoint")[-1]["step"] == 2
    again = RecordingEvents()
    resumed = make_trainer(
        dataset, tmp_path / "sft", ExactMatchVerifier(dataset), again, resume=True, baseline="sft", **config
    )
    resumed.run()
    assert resumed.resumed_from == 2 and [e["stage"] for e in again.of("train/eval")] == ["after"]


class TimesOut(ExactMatchVerifier):
    """Answers every failing candidate with a timeout the candidate caused (a check past its own limit)."""

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        answered = super().submit(items).result()
        future: Future[list[BatchVerdict]] = Future()
        future.set_result(
            [v if v["kind"] == "proved" else {**v, "kind": "timeout", "cause": "candidate"} for v in answered]
        )
        return future


@pytest.mark.parametrize("timeout_reward", ["failure", "mask"])
def test_metrics_report_the_timeout_rate_and_what_was_masked(
    toy_dataset: Path, tmp_path: Path, timeout_reward: str
) -> None:
    trainer = make_trainer(
        toy_dataset, tmp_path, TimesOut(toy_dataset), steps=2, sft_steps=0, timeout_reward=timeout_reward
    )
    trainer.run()
    for line in RunFiles(tmp_path).read_metrics():
        timeouts = line["verdicts"].get("timeout", 0)
        assert timeouts > 0 and line["timeout_rate"] == pytest.approx(timeouts / 6, abs=1e-6)
        assert line["candidate_timeouts"] == timeouts
        assert line["masked_samples"] == (timeouts if timeout_reward == "mask" else 0)


def test_the_sft_warm_start_says_where_it_is_at_least_every_ten_seconds() -> None:
    from fim_rlvr.run.trainer import PROGRESS_EVERY_S, progress_due

    assert PROGRESS_EVERY_S <= 10
    assert progress_due(1, 60, 0.0), "the first step says the phase has begun"
    assert progress_due(60, 60, 0.0), "the last step says it is done"
    assert not progress_due(2, 60, 1.5)
    assert progress_due(7, 60, PROGRESS_EVERY_S), "a slow step is followed by a line"
