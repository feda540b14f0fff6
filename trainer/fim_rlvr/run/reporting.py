"""`report_to`: each metrics.jsonl line also goes to TensorBoard, Weights & Biases or Trackio, as Hugging Face
trainers do. The packages are optional: a run that asks for one that is not installed fails at start-up with
what to install. Only rank 0 reports (it alone writes the run's files).

What is logged: every number of the metrics line under its own name, the per-kind pass rates as
`pass_rate/<kind>` and the verdict counts as `verdicts/<kind>`, at the RL step.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..core.errors import UserError

PACKAGES = {"tensorboard": "tensorboard", "wandb": "wandb", "trackio": "trackio"}
"""The module each target imports (pip installs it under the same name)."""


class ReportError(UserError, RuntimeError):
    """A report_to target that cannot start here; the message says what to install or change."""


class Report(Protocol):
    def log(self, numbers: Mapping[str, float], step: int) -> None: ...

    def close(self) -> None: ...


def scalars(line: Mapping[str, Any]) -> dict[str, float]:
    """The metrics line as flat numbers: nested per-kind maps become `name/kind`."""
    out: dict[str, float] = {}
    for key, value in line.items():
        if key == "step":
            continue
        if isinstance(value, (int, float)):  # bool is an int
            out[key] = float(value)
        elif isinstance(value, Mapping):
            out.update({f"{key}/{k}": float(v) for k, v in value.items() if isinstance(v, (int, float))})
    return out


class TensorBoardReport:
    """Scalars into runs/ under the run folder (`tensorboard --logdir RUN/runs`)."""

    def __init__(self, run_dir: Path, writer: Any = None) -> None:
        if writer is None:
            from torch.utils.tensorboard import SummaryWriter

            writer = SummaryWriter(log_dir=str(run_dir / "runs"))
        self.writer = writer

    def log(self, numbers: Mapping[str, float], step: int) -> None:
        for name, value in numbers.items():
            self.writer.add_scalar(name, value, step)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class RunLibraryReport:
    """wandb and trackio share one interface: init(project, name, config), log(numbers, step), finish()."""

    def __init__(self, module: Any, run_dir: Path, config: Mapping[str, Any]) -> None:
        self.module = module
        project = os.environ.get("WANDB_PROJECT") or os.environ.get("TRACKIO_PROJECT") or "fim-rlvr"
        self.run = module.init(project=project, name=run_dir.name, config=dict(config))

    def log(self, numbers: Mapping[str, float], step: int) -> None:
        self.module.log(dict(numbers), step=step)

    def close(self) -> None:
        self.module.finish()


class Reports:
    """Every target of report_to (none: nothing happens)."""

    def __init__(self, reports: Sequence[Report] = ()) -> None:
        self.reports = list(reports)

    def log(self, line: Mapping[str, Any]) -> None:
        if not self.reports:
            return
        numbers, step = scalars(line), int(line["step"])
        for report in self.reports:
            report.log(numbers, step)

    def close(self) -> None:
        for report in self.reports:
            report.close()
        self.reports = []


def _require(target: str) -> None:
    module = PACKAGES[target]
    if importlib.util.find_spec(module) is None:
        raise ReportError(
            f"report_to {target} needs the {module} package, which is not installed in the trainer's Python: "
            f"pip install {module} (in trainer/.venv), or leave {target} out of report_to"
        )


def open_reports(targets: Sequence[str], run_dir: str | Path, config: Mapping[str, Any]) -> Reports:
    """The reports `targets` name, started (a ReportError when one cannot start)."""
    folder = Path(run_dir)
    reports: list[Report] = []
    for target in targets:
        _require(target)
        try:
            if target == "tensorboard":
                reports.append(TensorBoardReport(folder))
            else:
                import importlib

                reports.append(RunLibraryReport(importlib.import_module(PACKAGES[target]), folder, config))
        except Exception as error:  # a library's own start-up failure (no login, no server): say which and why
            Reports(reports).close()
            raise ReportError(f"report_to {target} could not start: {error}; fix that or leave {target} out") from error
    return Reports(reports)
