"""report_to: the metrics line as flat numbers to TensorBoard, wandb or trackio; a clear error when the package is
missing. TensorBoard is not installed in the project's venv, so its adapter is tested with a fake writer (and with
the real one where `tensorboard` is importable); wandb and trackio with fake modules of their interface."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fakes import ExactMatchVerifier, RecordingEvents

from fim_rlvr.core.config import ConfigError, from_dict
from fim_rlvr.run import reporting
from fim_rlvr.run.reporting import ReportError, Reports, TensorBoardReport, open_reports, scalars
from fim_rlvr.run.trainer import Trainer, TrainerError

LINE = {"step": 3, "loss": 0.5, "pass_rate_by_kind": {"tactic": 0.25}, "verdicts": {"proved": 2}, "lr": 1e-4}


class FakeWriter:
    def __init__(self) -> None:
        self.scalars: list[tuple[str, float, int]] = []
        self.closed = False

    def add_scalar(self, name: str, value: float, step: int) -> None:
        self.scalars.append((name, value, step))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


class FakeRunLibrary:
    """wandb's and trackio's module-level interface."""

    def __init__(self) -> None:
        self.inits: list[dict[str, Any]] = []
        self.logged: list[tuple[dict[str, float], int]] = []
        self.finished = 0

    def init(self, **kwargs: Any) -> object:
        self.inits.append(kwargs)
        return SimpleNamespace()

    def log(self, numbers: dict[str, float], step: int) -> None:
        self.logged.append((numbers, step))

    def finish(self) -> None:
        self.finished += 1


def test_the_line_becomes_flat_numbers_at_its_step(tmp_path: Path) -> None:
    assert scalars(LINE) == {"loss": 0.5, "pass_rate_by_kind/tactic": 0.25, "verdicts/proved": 2.0, "lr": 1e-4}
    writer = FakeWriter()
    reports = Reports([TensorBoardReport(tmp_path, writer=writer)])
    reports.log(LINE)
    reports.close()
    assert ("loss", 0.5, 3) in writer.scalars and ("pass_rate_by_kind/tactic", 0.25, 3) in writer.scalars
    assert writer.closed


def test_a_missing_package_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reporting.importlib.util, "find_spec", lambda name: None)
    for target in ("tensorboard", "wandb", "trackio"):
        with pytest.raises(ReportError, match=f"pip install {target}"):
            open_reports([target], tmp_path, {})
    with pytest.raises(ConfigError, match="report_to must be one of"):
        from_dict({"report_to": "mlflow"})
    assert from_dict({"report_to": ["tensorboard", "wandb"]}).report_to == ["tensorboard", "wandb"]


@pytest.mark.parametrize("target", ["wandb", "trackio"])
def test_run_libraries_get_the_config_and_every_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    fake = FakeRunLibrary()
    monkeypatch.setitem(sys.modules, target, fake)
    monkeypatch.setattr(reporting.importlib.util, "find_spec", lambda name: SimpleNamespace())
    reports = open_reports([target], tmp_path / "my-run", {"algorithm": "grpo"})
    reports.log(LINE)
    reports.close()
    assert fake.inits == [{"project": "fim-rlvr", "name": "my-run", "config": {"algorithm": "grpo"}}]
    assert fake.logged == [(scalars(LINE), 3)] and fake.finished == 1


def test_a_run_reports_each_metrics_line(toy_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeRunLibrary()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        reporting.importlib.util,
        "find_spec",
        lambda name: SimpleNamespace() if name == "wandb" else real_find_spec(name),
    )
    config = {"steps": 2, "sft_steps": 0, "batch_size": 2, "group_size": 2, "max_new_tokens": 4, "eval_limit": 1}
    trainer = Trainer(
        from_dict({**config, "report_to": "wandb"}),
        toy_dataset,
        tmp_path,
        resume=False,
        verifier=ExactMatchVerifier(toy_dataset),
        events=RecordingEvents(),
    )
    trainer.prepare()
    trainer.run()
    assert [step for _, step in fake.logged] == [1, 2] and fake.finished == 1
    assert "loss" in fake.logged[0][0] and fake.inits[0]["config"]["report_to"] == "wandb"


def test_a_run_asking_for_a_missing_package_fails_before_it_starts(
    toy_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        reporting.importlib.util, "find_spec", lambda name: None if name == "trackio" else real_find_spec(name)
    )
    trainer = Trainer(
        from_dict({"report_to": "trackio", "sft_steps": 0}),
        toy_dataset,
        tmp_path,
        resume=False,
        verifier=ExactMatchVerifier(toy_dataset),
        events=RecordingEvents(),
    )
    with pytest.raises(TrainerError, match="pip install trackio"):
        trainer.prepare()


def test_the_real_tensorboard_writer_when_installed(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard", reason="tensorboard is not installed (the adapter is tested with a fake)")
    reports = open_reports(["tensorboard"], tmp_path, {})
    reports.log(LINE)
    reports.close()
    assert list((tmp_path / "runs").glob("events.out.tfevents.*"))
