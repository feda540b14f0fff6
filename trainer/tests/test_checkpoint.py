"""Atomic checkpoints: a save killed before its rename is never taken as `latest`; record files cut on resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from fim_rlvr.model import checkpoint
from fim_rlvr.model.tiny_model import build_model, train_tokenizer
from fim_rlvr.run.files import RunFiles


class Killed(Exception):
    """Stands for the process dying at the hook's moment."""


@pytest.fixture(scope="module")
def tiny() -> tuple[object, object]:
    tokenizer = train_tokenizer(["theorem a : 1 = 1 := by\n  rfl\n"] * 5, vocab_size=300)
    return build_model(tokenizer, seed=0), tokenizer


def _save(run: Path, step: int, tiny: tuple[object, object], **kwargs: object) -> Path:
    model, tokenizer = tiny
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)  # type: ignore[attr-defined]
    return checkpoint.save(
        run,
        step,
        model=model,
        tokenizer=tokenizer,
        optimizer=optimizer,
        state={"marker": step},
        pending={"step": step + 1},
        **kwargs,
    )  # type: ignore[arg-type]


def test_a_save_killed_before_the_rename_is_never_latest(tmp_path: Path, tiny: tuple[object, object]) -> None:
    first = _save(tmp_path, 1, tiny)
    assert checkpoint.latest(tmp_path) == first

    def die(folder: Path) -> None:
        assert (folder / "state.json").is_file()  # everything is written, only the rename is missing
        raise Killed()

    with pytest.raises(Killed):
        _save(tmp_path, 2, tiny, before_rename=die)
    assert checkpoint.latest(tmp_path) == first
    assert checkpoint.load_state(first)["marker"] == 1
    assert not (tmp_path / "checkpoints" / "step-2").exists()
    # the next save sweeps the leftover and becomes latest
    third = _save(tmp_path, 3, tiny)
    assert checkpoint.latest(tmp_path) == third
    assert [p.name for p in (tmp_path / "checkpoints").iterdir() if p.name.startswith(".tmp")] == []
    assert checkpoint.load_tensors(third, "pending.pt") == {"step": 4}


def test_latest_falls_back_to_the_newest_complete_folder(tmp_path: Path, tiny: tuple[object, object]) -> None:
    _save(tmp_path, 1, tiny)
    second = _save(tmp_path, 2, tiny)
    (tmp_path / "checkpoints" / "latest").unlink()  # e.g. lost with a disk that ignored fsync
    assert checkpoint.latest(tmp_path) == second
    (tmp_path / "checkpoints" / "latest").write_text("step-99\n")
    assert checkpoint.latest(tmp_path) == second


def test_old_checkpoints_are_pruned_and_a_step_can_be_saved_again(tmp_path: Path, tiny: tuple[object, object]) -> None:
    for step in range(0, 6):
        _save(tmp_path, step, tiny)
    names = sorted(p.name for p in (tmp_path / "checkpoints").iterdir() if p.is_dir())
    assert names == ["step-0", "step-3", "step-4", "step-5"], "step-0 (after SFT) and the three newest"
    again = _save(tmp_path, 5, tiny)
    assert checkpoint.latest(tmp_path) == again


def test_record_files_are_cut_back_to_the_checkpoint(tmp_path: Path) -> None:
    files = RunFiles(tmp_path)
    for step in (1, 2):
        files.append_metrics({"step": step})
        files.append_samples([{"step": step, "n": 0}, {"step": step, "n": 1}])
        files.append_validation({"step": step})
    counts = files.line_counts()
    assert counts == {"metrics_lines": 2, "samples_lines": 4, "validation_lines": 2}
    files.append_validation({"step": 3})
    files.append_metrics({"step": 3})
    files.append_samples([{"step": 3, "n": 0}])
    with open(files.metrics_path, "a", encoding="utf-8") as handle:
        handle.write('{"step": 4, "torn')  # a kill mid-write
    files.truncate_to(counts)
    assert [m["step"] for m in files.read_metrics()] == [1, 2]
    assert [m["step"] for m in files.read_validation()] == [1, 2]
    assert len(files.samples_path.read_text().splitlines()) == 4


def test_the_retention_rule_is_the_hosts() -> None:
    fixture = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "checkpoint-retention.json"
    cases = json.loads(fixture.read_text(encoding="utf-8"))["cases"]
    assert len(cases) >= 5
    for case in cases:
        assert checkpoint.kept_steps(case["steps"]) == case["kept"], case["name"]


def test_the_latest_checkpoint_rule_is_the_hosts(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "latest-checkpoint.json"
    cases = json.loads(fixture.read_text(encoding="utf-8"))["cases"]
    assert len(cases) >= 6
    for index, case in enumerate(cases):
        run = tmp_path / str(index)
        for path, text in case["files"].items():
            full = run / "checkpoints" / path
            if path.endswith("/"):
                full.mkdir(parents=True, exist_ok=True)
            else:
                full.parent.mkdir(parents=True, exist_ok=True)
                full.write_text(text, encoding="utf-8")
        found = checkpoint.latest(run)
        expected = None if case["expected"] is None else run / "checkpoints" / case["expected"]
        assert found == expected, case["name"]
