"""The run folder's record files: metrics.jsonl, samples.jsonl, validation.jsonl, eval.json, config.json.

metrics.jsonl, samples.jsonl and validation.jsonl (the validation curve, fim_rlvr.run.validation) are append-only
(one JSON object per line, flushed per step, fsynced at each checkpoint); a checkpoint records how many lines each
had, and a resumed run first cuts them back to that, so the files never hold steps the model has forgotten.
eval.json and config.json are replaced atomically.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..model.checkpoint import write_text_atomic

DETERMINISTIC_KEYS = (
    "step",
    "loss",
    "reward_mean",
    "pass_rate",
    "pass_rate_by_kind",
    "kl",
    "clip_fraction",
    "tokens",
    "verdicts",
    "masked_samples",
    "timeout_rate",
    "candidate_timeouts",
    "lr",
)
"""metrics.jsonl keys that depend only on the seed (the rest are wall-clock timings)."""


class RunFiles:
    """Writer for one run folder."""

    def __init__(self, run_dir: str | Path) -> None:
        self.root = Path(run_dir)
        self.root.mkdir(parents=True, exist_ok=True)
        self.metrics_path = self.root / "metrics.jsonl"
        self.samples_path = self.root / "samples.jsonl"
        self.validation_path = self.root / "validation.jsonl"
        self.eval_path = self.root / "eval.json"
        self.config_path = self.root / "config.json"

    def _appended(self) -> dict[str, Path]:
        return {
            "metrics_lines": self.metrics_path,
            "samples_lines": self.samples_path,
            "validation_lines": self.validation_path,
        }

    def line_counts(self) -> dict[str, int]:
        """Lines in each append-only file now (saved in checkpoints)."""
        return {key: _count_lines(path) for key, path in self._appended().items()}

    def truncate_to(self, counts: dict[str, int]) -> None:
        """Drop lines written after the checkpoint being resumed (a checkpoint from before validation.jsonl existed
        keeps none of it)."""
        for key, path in self._appended().items():
            _truncate(path, int(counts.get(key, 0)))

    def reset(self) -> None:
        """A fresh (not resumed) run starts with empty record files."""
        for path in (*self._appended().values(), self.eval_path):
            path.unlink(missing_ok=True)

    def append_metrics(self, line: dict[str, Any]) -> None:
        _append(self.metrics_path, [line])

    def append_samples(self, lines: list[dict[str, Any]]) -> None:
        _append(self.samples_path, lines)

    def append_validation(self, line: dict[str, Any]) -> None:
        _append(self.validation_path, [line])

    def sync(self) -> None:
        """fsync the append-only files (called before a checkpoint records their line counts)."""
        for path in self._appended().values():
            if path.exists():
                with open(path, "rb") as handle:
                    os.fsync(handle.fileno())

    def read_evals(self) -> dict[str, Any]:
        if not self.eval_path.is_file():
            return {}
        try:
            data = json.loads(self.eval_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            return {}
        return data if isinstance(data, dict) else {}

    def write_evals(self, evals: dict[str, Any]) -> None:
        write_text_atomic(self.eval_path, json.dumps(evals, indent=1) + "\n")

    def write_config(self, config: dict[str, Any]) -> None:
        write_text_atomic(self.config_path, json.dumps(config, indent=1) + "\n")

    def read_metrics(self) -> list[dict[str, Any]]:
        return _read_lines(self.metrics_path)

    def read_validation(self) -> list[dict[str, Any]]:
        return _read_lines(self.validation_path)


class RankRunFiles(RunFiles):
    """The record files of a rank other than 0, which writes none of the run's: kept in memory for the run (what
    the rank reads back it wrote itself), so nothing is left on disk however the process ends. Samples are only
    counted: no rank reads them back."""

    def __init__(self) -> None:  # no folder: every method is overridden
        self._lines: dict[str, list[dict[str, Any]]] = {"metrics_lines": [], "validation_lines": []}
        self._samples = 0
        self._evals: dict[str, Any] = {}

    def line_counts(self) -> dict[str, int]:
        return {
            "metrics_lines": len(self._lines["metrics_lines"]),
            "samples_lines": self._samples,
            "validation_lines": len(self._lines["validation_lines"]),
        }

    def truncate_to(self, counts: dict[str, int]) -> None:
        for key, lines in self._lines.items():
            del lines[int(counts.get(key, 0)) :]
        self._samples = min(self._samples, int(counts.get("samples_lines", 0)))

    def reset(self) -> None:
        for lines in self._lines.values():
            lines.clear()
        self._samples = 0
        self._evals = {}

    def append_metrics(self, line: dict[str, Any]) -> None:
        self._lines["metrics_lines"].append(_copy(line))

    def append_samples(self, lines: list[dict[str, Any]]) -> None:
        self._samples += len(lines)

    def append_validation(self, line: dict[str, Any]) -> None:
        self._lines["validation_lines"].append(_copy(line))

    def sync(self) -> None:
        return None

    def read_evals(self) -> dict[str, Any]:
        return dict(self._evals)

    def write_evals(self, evals: dict[str, Any]) -> None:
        self._evals = _copy(evals)

    def write_config(self, config: dict[str, Any]) -> None:
        return None

    def read_metrics(self) -> list[dict[str, Any]]:
        return list(self._lines["metrics_lines"])

    def read_validation(self) -> list[dict[str, Any]]:
        return list(self._lines["validation_lines"])


def _copy(value: dict[str, Any]) -> dict[str, Any]:
    """What writing `value` as JSON and reading it back gives (a later change to `value` does not reach it)."""
    copied: dict[str, Any] = json.loads(json.dumps(value, ensure_ascii=False))
    return copied


def _read_lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _append(path: Path, lines: list[dict[str, Any]]) -> None:
    if not lines:
        return
    with open(path, "a", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        handle.flush()


def _count_lines(path: Path) -> int:
    if not path.is_file():
        return 0
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.endswith(b"\n"))


def _truncate(path: Path, keep: int) -> None:
    """Keep the first `keep` complete lines (a torn last line from a kill is dropped too)."""
    if not path.is_file():
        return
    with open(path, "rb") as handle:
        lines = [line for line in handle if line.endswith(b"\n")][:keep]
    write_text_atomic(path, b"".join(lines).decode("utf-8"))
