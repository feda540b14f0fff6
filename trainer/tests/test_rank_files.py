"""A rank other than 0 keeps its record files in memory (fim_rlvr.run.files.RankRunFiles): it reads back what a run
folder would give it, and leaves nothing on disk, since a rank ends by os._exit or its launcher's SIGKILL."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from fim_rlvr.run.files import RankRunFiles, RunFiles


def _session(files: RunFiles) -> list[Any]:
    """The same writes and reads on either kind of files; what was read, in order."""
    seen: list[Any] = []
    files.reset()
    for step in range(1, 4):
        files.append_metrics({"step": step, "loss": 0.5 / step, "name": "ä"})
        files.append_samples([{"step": step, "k": k} for k in range(2)])
        files.append_validation({"step": step, "pass_rate": step / 10})
    files.write_config({"steps": 3})
    files.write_evals({"before": {"pass_at_1": 0.25}})
    files.sync()
    seen += [files.line_counts(), files.read_metrics(), files.read_validation(), files.read_evals()]
    files.truncate_to({"metrics_lines": 2, "samples_lines": 3, "validation_lines": 1})
    seen += [files.line_counts(), files.read_metrics(), files.read_validation()]
    files.reset()
    seen += [files.line_counts(), files.read_evals()]
    return seen


def test_a_rank_reads_back_what_a_run_folder_gives(tmp_path: Path) -> None:
    assert _session(RankRunFiles()) == _session(RunFiles(tmp_path))


def test_a_rank_writes_nothing_in_the_temp_folder(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    _session(RankRunFiles())
    assert list(tmp_path.iterdir()) == []
