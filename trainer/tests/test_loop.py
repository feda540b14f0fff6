"""The training loop in-process with a fake verifier: parameters move, reward rises, masked checks, exact resume."""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
import torch
from conftest import write_dataset
from fakes import ExactMatchVerifier, RecordingEvents, verdict_for

from fim_rlvr.core.config import from_dict
from fim_rlvr.core.protocol import BatchVerdict, VerifyItem
from fim_rlvr.run.files import DETERMINISTIC_KEYS, RunFiles
from fim_rlvr.run.trainer import Trainer

TINY = {
    "sft_steps": 4,
    "batch_size": 2,
    "group_size": 3,
    "max_new_tokens": 6,
    "eval_limit": 2,
    "checkpoint_every": 2,
    "curriculum": False,
    "seed": 7,
    "compare": [],  # the baseline arms after RL have their own tests (test_rft.py)
}


def make_trainer(
    dataset: Path, run: Path, verifier: Any, events: Any = None, resume: bool = False, **config: Any
) -> Trainer:
    trainer = Trainer(
        from_dict({**TINY, **config}),
        dataset,
        run,
        resume=resume,
        verifier=verifier,
        events=events or RecordingEvents(),
    )
    trainer.prepare()
    return trainer


class ParityVerifier:
    """Rewards candidates of even length: varied rewards without any learning needed."""

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        future: Future[list[BatchVerdict]] = Future()
        future.set_result(
            [
                verdict_for(i["taskId"], i["candidate"], i["candidate"] if len(i["candidate"]) % 2 == 0 else None)
                for i in items
            ]
        )
        return future

    def cancel(self, future: Future[list[BatchVerdict]]) -> None:
        pass


def test_one_rl_step_changes_the_parameters(toy_dataset: Path, tmp_path: Path) -> None:
    trainer = make_trainer(toy_dataset, tmp_path, ParityVerifier(), steps=1, sft_steps=0)
    before = {name: p.detach().clone() for name, p in trainer.policy.model.named_parameters()}
    trainer.run()
    changed = [name for name, p in trainer.policy.model.named_parameters() if not torch.equal(before[name], p)]
    assert len(changed) == len(before), f"unchanged: {set(before) - set(changed)}"
    line = RunFiles(tmp_path).read_metrics()[0]
    assert line["verdicts"].get("proved", 0) > 0 and line["verdicts"].get("failed", 0) > 0


@pytest.mark.parametrize("algorithm", ["grpo", "drgrpo", "dapo", "gspo", "dgpo"])
def test_every_algorithm_trains(toy_dataset: Path, tmp_path: Path, algorithm: str) -> None:
    trainer = make_trainer(
        toy_dataset,
        tmp_path,
        ParityVerifier(),
        steps=2,
        sft_steps=0,
        algorithm=algorithm,
        eval_limit=1,
        temperature=1.0,
    )
    before = [p.detach().clone() for p in trainer.policy.model.parameters()]
    trainer.run()
    lines = RunFiles(tmp_path).read_metrics()
    assert [m["step"] for m in lines] == [1, 2]
    assert all(math.isfinite(m["loss"]) for m in lines)
    assert any(not torch.equal(b, p) for b, p in zip(before, trainer.policy.model.parameters(), strict=True))
    if algorithm == "dapo":  # dynamic sampling keeps at most batch_size informative groups
        assert all(m["groups_trained"] <= TINY["batch_size"] for m in lines)


def test_a_stalled_batch_is_sent_again_then_counted_and_a_failed_one_costs_its_samples(
    toy_dataset: Path, tmp_path: Path
) -> None:
    # batch 0 is the "before" eval; batch 1 is step 1, batch 2 step 2 (sampled while step 1 is checked), batch 3 step
    # 1 sent again after its silence. Step 1 stalls twice: its samples are the candidates' timeouts, never masked (a
    # candidate that stalls the verifier must not earn the masked outcome); step 2's batch is answered with an error:
    # masked, the infrastructure's fault.
    verifier = ExactMatchVerifier(toy_dataset, hang=[1, 3], fail=[2])
    events = RecordingEvents()
    trainer = make_trainer(toy_dataset, tmp_path, verifier, events, steps=3, sft_steps=0, verify_timeout_s=0.5)
    trainer.run()
    assert events.of("train/done")[0]["status"] == "completed"
    lines = RunFiles(tmp_path).read_metrics()
    assert [m["step"] for m in lines] == [1, 2, 3]
    assert lines[0]["verdicts"] == {"timeout": 6} and lines[0]["masked_samples"] == 0
    assert lines[0]["candidate_timeouts"] == 6
    assert lines[1]["verdicts"] == {"crashed": 6} and lines[1]["masked_samples"] == 6
    assert lines[2]["masked_samples"] == 0
    assert verifier.cancelled == 2  # the host was told each stalled sending is no longer wanted


def test_a_stalled_batch_answered_when_sent_again_is_taken(toy_dataset: Path, tmp_path: Path) -> None:
    verifier = ExactMatchVerifier(toy_dataset, hang=[1])  # step 1's first sending; batch 3 is its second
    trainer = make_trainer(toy_dataset, tmp_path, verifier, steps=2, sft_steps=0, verify_timeout_s=0.5)
    trainer.run()
    lines = RunFiles(tmp_path).read_metrics()
    assert [m["masked_samples"] for m in lines] == [0, 0]
    assert lines[0]["candidate_timeouts"] == 0 and "timeout" not in lines[0]["verdicts"]


class AnswersWhenTheNextBatchArrives(ExactMatchVerifier):
    """Answers batch i only once batch i+1 is submitted: a loop that waited for a verdict before sampling the next
    step would never get one (its checks would all time out)."""

    def __init__(self, dataset: Path) -> None:
        super().__init__(dataset)
        self.waiting: list[tuple[Future[list[BatchVerdict]], Sequence[VerifyItem]]] = []

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        for pending, earlier in self.waiting:
            pending.set_result(super().submit(earlier).result())
        future: Future[list[BatchVerdict]] = Future()
        self.waiting = [(future, items)]
        return future


def test_verification_of_a_step_overlaps_generation_of_the_next(toy_dataset: Path, tmp_path: Path) -> None:
    verifier = AnswersWhenTheNextBatchArrives(toy_dataset)
    trainer = make_trainer(toy_dataset, tmp_path, verifier, steps=3, sft_steps=0, verify_timeout_s=1.0)
    trainer.run()
    lines = RunFiles(tmp_path).read_metrics()
    # steps 1 and 2 were answered while the next batch was being sampled; nothing follows step 3's batch, which is
    # sent again once and then counted as the candidates' timeouts
    assert [m["masked_samples"] for m in lines] == [0, 0, 0]
    assert [m["candidate_timeouts"] for m in lines] == [0, 0, 6]


class StopAt(RecordingEvents):
    """Asks the trainer to stop when it reports `step`."""

    def __init__(self, step: int) -> None:
        super().__init__()
        self.step = step
        self.trainer: Trainer | None = None

    def emit(self, method: str, params: Any) -> None:
        super().emit(method, params)
        if method == "train/progress" and params["step"] == self.step and self.trainer is not None:
            self.trainer.request_stop()


class StopWhileChecking(ExactMatchVerifier):
    """Stops the run while the host is checking batch `index` (which it never answers)."""

    def __init__(self, dataset: Path, index: int) -> None:
        super().__init__(dataset, hang=[index])
        self.index = index
        self.trainer: Trainer | None = None

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        future = super().submit(items)
        if self.batches - 1 == self.index and self.trainer is not None:
            self.trainer.request_stop()
        return future


def deterministic(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: line[k] for k in DETERMINISTIC_KEYS} for line in lines]


def test_stop_and_resume_reproduce_an_uninterrupted_run(toy_dataset: Path, tmp_path: Path) -> None:
    steps = 5
    straight = make_trainer(toy_dataset, tmp_path / "straight", ExactMatchVerifier(toy_dataset), steps=steps)
    straight.run()
    expected = deterministic(RunFiles(tmp_path / "straight").read_metrics())
    assert [m["step"] for m in expected] == [1, 2, 3, 4, 5]

    # Stopped at a step boundary (after step 3, between checkpoints), then resumed.
    events = StopAt(3)
    first = make_trainer(toy_dataset, tmp_path / "boundary", ExactMatchVerifier(toy_dataset), events, steps=steps)
    events.trainer = first
    first.run()
    assert events.of("train/done")[-1]["status"] == "stopped"
    assert events.of("train/checkpoint")[-1]["step"] == 3
    resumed_events = RecordingEvents()
    second = make_trainer(
        toy_dataset, tmp_path / "boundary", ExactMatchVerifier(toy_dataset), resumed_events, resume=True, steps=steps
    )
    assert second.resumed_from == 3
    second.run()
    assert resumed_events.of("train/done")[-1]["status"] == "completed"
    assert deterministic(RunFiles(tmp_path / "boundary").read_metrics()) == expected
    assert [e["stage"] for e in resumed_events.of("train/eval")] == ["after"]
    assert set(RunFiles(tmp_path / "boundary").read_evals()) == {"before", "sft", "after"}

    # Stopped while the host was checking step 4's batch (abandoned step), then resumed.
    # Batches: 0 before-eval, 1 sft-eval, 2 step 1, 3 step 2, 4 step 3, 5 step 4.
    verifier = StopWhileChecking(toy_dataset, index=5)
    third = make_trainer(toy_dataset, tmp_path / "abandon", verifier, steps=steps, checkpoint_every=100)
    verifier.trainer = third
    third.run()
    assert third.step == 3
    fourth = make_trainer(
        toy_dataset,
        tmp_path / "abandon",
        ExactMatchVerifier(toy_dataset),
        resume=True,
        steps=steps,
        checkpoint_every=100,
    )
    assert fourth.resumed_from == 3
    fourth.run()
    assert deterministic(RunFiles(tmp_path / "abandon").read_metrics()) == expected


def test_reward_rises_on_a_small_task_set(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds", per_pattern=3, kinds=("tactic",))
    trainer = make_trainer(
        dataset,
        tmp_path / "run",
        ExactMatchVerifier(dataset),
        steps=24,
        sft_steps=35,
        batch_size=4,
        group_size=8,
        max_new_tokens=12,
        learning_rate=5e-4,
        temperature=1.0,
        seed=0,
        algo_config={"beta": 0.0},
        checkpoint_every=100,
    )
    trainer.run()
    rewards = [m["reward_mean"] for m in RunFiles(tmp_path / "run").read_metrics()]
    early, late = sum(rewards[:6]) / 6, sum(rewards[-6:]) / 6
    assert late >= early + 0.1, rewards


def test_sft_is_skipped_with_a_reason_when_no_training_task_has_a_proof(tmp_path: Path) -> None:
    """Statements without proofs (`reference: false`, as `fim-rlvr import` writes them): the warm start has nothing to
    imitate, so it does not run, and the log says why instead of "SFT: 60 steps in 0.0 s"."""
    import json

    dataset = write_dataset(tmp_path / "dataset", per_pattern=2)
    rows = [json.loads(line) for line in (dataset / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    (dataset / "tasks.jsonl").write_text("".join(json.dumps({**r, "reference": False}) + "\n" for r in rows))
    events = RecordingEvents()
    trainer = make_trainer(dataset, tmp_path / "run", ExactMatchVerifier(dataset), events, steps=0, sft_steps=5)
    trainer.run()
    messages = [p["message"] for p in events.of("train/log")]
    assert any(m.startswith("SFT warm start skipped (5 steps asked for): none of the") for m in messages), messages
    assert not any(m.startswith("SFT:") or m.startswith("SFT step") for m in messages), messages
    assert "sft" not in RunFiles(tmp_path / "run").read_evals()
    assert events.of("train/done")[-1]["status"] == "completed"


def test_config_json_records_what_each_default_resolved_to(tmp_path: Path) -> None:
    """report.html's configuration table shows these for the options left at None, never null."""
    import json

    from fim_rlvr.core.config import valid_keys

    dataset = write_dataset(tmp_path / "dataset", per_pattern=2)
    events = RecordingEvents()
    make_trainer(dataset, tmp_path / "run", ExactMatchVerifier(dataset), events, steps=0, sft_steps=0).run()
    config = json.loads((tmp_path / "run" / "config.json").read_text(encoding="utf-8"))
    left_to_trainer = sorted(key for key in valid_keys() if config.get(key, 0) is None)
    assert left_to_trainer, "the run leaves some options to the trainer"
    resolved = config["resolved"]
    assert [key for key in left_to_trainer if resolved.get(key) is None] == []
    assert resolved["goal_in_prompt"] in (True, False)
    # The algorithm's options left at None are worded too (the report showed `"epsilon_high": null`).
    algorithm_unset = sorted(key for key, value in config["algo_config_resolved"].items() if value is None)
    assert algorithm_unset, "grpo leaves some of its options unset"
    assert sorted(resolved["algo_config_resolved"]) == algorithm_unset


def test_the_sft_warm_start_says_it_has_begun_and_where_it_is(tmp_path: Path) -> None:
    """The quick start was silent for 95 s of SFT: the warm start says what it trains on before its first step, then its
    first and last steps (and one at least every PROGRESS_EVERY_S between), before its summary line."""
    dataset = write_dataset(tmp_path / "dataset", per_pattern=2)
    events = RecordingEvents()
    make_trainer(dataset, tmp_path / "run", ExactMatchVerifier(dataset), events, steps=0, sft_steps=3).run()
    messages = [p["message"] for p in events.of("train/log")]
    sft = [m for m in messages if m.startswith("SFT")]
    assert [m.split(":")[0] for m in sft] == ["SFT", "SFT step 1/3", "SFT step 3/3", "SFT"], sft
    assert sft[0].startswith("SFT: 3 steps on the training proofs"), sft
    assert sft[-1].startswith("SFT: 3 steps in "), sft
