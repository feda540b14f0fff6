"""The optimiser's batch mechanics in a real run: several optimiser steps per RL step, micro-batches, the
learning-rate schedule, the GSPO clip warning; and the config rules for them and for prompts."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import RecordingEvents
from test_loop import ParityVerifier, make_trainer

from fim_rlvr.core.config import ConfigError, from_dict
from fim_rlvr.core.protocol import TRAIN_LOG
from fim_rlvr.run.files import RunFiles


def test_iterations_and_slices_make_several_optimiser_steps_on_a_schedule(toy_dataset: Path, tmp_path: Path) -> None:
    trainer = make_trainer(
        toy_dataset,
        tmp_path,
        ParityVerifier(),
        steps=2,
        sft_steps=0,
        num_iterations=2,
        steps_per_generation=2,
        micro_batch_size=2,
        lr_scheduler="linear",
        warmup_ratio=0.25,
        learning_rate=1e-3,
        weight_decay=0.3,
    )
    trainer.run()
    lines = RunFiles(tmp_path).read_metrics()
    assert [line["optimizer_steps"] for line in lines] == [4, 4]
    # 8 optimiser steps, 2 of warm-up: step 8 (index 7) runs at (1 - 5/6) of the rate.
    assert lines[-1]["lr"] == pytest.approx(1e-3 * (1 - 5 / 6))
    assert trainer.optimizer is not None
    assert int(trainer.optimizer.state_dict()["state"][0]["step"]) == 8
    assert {group["weight_decay"] for group in trainer.optimizer.param_groups} == {0.3}


def test_a_clip_that_removes_most_of_the_gradient_is_reported(toy_dataset: Path, tmp_path: Path) -> None:
    events = RecordingEvents()
    trainer = make_trainer(
        toy_dataset, tmp_path, ParityVerifier(), events, steps=2, sft_steps=0, algorithm="gspo", num_iterations=2,
        learning_rate=1e-2,
    )  # fmt: skip
    trainer.run()
    warnings = [
        p["message"] for p in events.of(TRAIN_LOG) if p["level"] == "warning" and "clip removed" in p["message"]
    ]
    assert warnings and "gspo" in warnings[0] and "epsilon" in warnings[0]
    assert RunFiles(tmp_path).read_metrics()[-1]["clip_fraction"] >= 0.5


def test_config_rules_for_the_new_options() -> None:
    with pytest.raises(ConfigError, match=r"num_generations \(16\) differs from group_size \(8\)"):
        from_dict({"algo_config": {"num_generations": 16}})
    with pytest.raises(ConfigError, match=r"max_completion_length \(64\) differs from max_new_tokens \(48\)"):
        from_dict({"algo_config": {"max_completion_length": 64}})
    assert from_dict({"group_size": 16, "algo_config": {"num_generations": 16}}).group_size == 16
    with pytest.raises(ConfigError, match="prompt_style must be one of"):
        from_dict({"prompt_style": "raw"})
    with pytest.raises(ConfigError, match="unknown field"):
        from_dict({"prompt_template": "{prefix}{answer}"})
    with pytest.raises(ConfigError, match="prompt_thinking needs"):
        from_dict({"prompt_style": "fim", "prompt_thinking": True})
    with pytest.raises(ConfigError, match="cannot exceed batch_size"):
        from_dict({"steps_per_generation": 9})
    for bad in ({"num_iterations": 0}, {"micro_batch_size": 0}, {"lr_scheduler": "step"}, {"warmup_ratio": 1.0}):
        with pytest.raises(ConfigError):
            from_dict(bad)


def test_prompt_options_reach_the_run(toy_dataset: Path, tmp_path: Path) -> None:
    from fim_rlvr.run.trainer import TrainerError

    with pytest.raises(TrainerError, match="no chat template"):
        make_trainer(toy_dataset, tmp_path / "chat", ParityVerifier(), prompt_style="chat")
    trainer = make_trainer(toy_dataset, tmp_path / "plain", ParityVerifier(), steps=1, sft_steps=2,
                           prompt_style="instruction")  # fmt: skip
    assert trainer.policy.style.name == "instruction" and "```" in trainer.policy.style.stop_strings
    trainer.run()
    assert RunFiles(tmp_path / "plain").read_metrics()[0]["tokens"] > 0


def test_goal_and_statement_come_from_tasks_jsonl(tmp_path: Path) -> None:
    import json

    from conftest import write_dataset

    from fim_rlvr.tasks.data import load_tasks

    folder = write_dataset(tmp_path / "ds", per_pattern=1)
    rows = [json.loads(line) for line in (folder / "tasks.jsonl").read_text().splitlines()]
    rows[0]["goal"] = "a b : Nat\n⊢ a ≤ b"
    (folder / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    first, second = load_tasks(folder)[:2]
    assert first.goal == "a b : Nat\n⊢ a ≤ b" and second.goal is None
    assert first.statement == rows[0]["statement"]
