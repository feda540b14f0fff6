"""The run folder's record files: metrics.jsonl, samples.jsonl, eval.json, config.json.

metrics.jsonl and samples.jsonl are append-only (one JSON object per line, flushed per step, fsynced at each
checkpoint); a checkpoint records how many lines each had, and a resumed run first cuts them back to that,
so the files never hold steps the model has forgotten. eval.json and config.json are replaced atomically.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .checkpoint import write_text_atomic

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
        self.eval_path = self.root / "eval.json"
        self.config_path = self.root / "config.json"

    def line_counts(self) -> dict[str, int]:
        """Lines in metrics.jsonl and samples.jsonl now (saved in checkpoints)."""
        return {"metrics_lines": _count_lines(self.metrics_path), "samples_lines": _count_lines(self.samples_path)}

    def truncate_to(self, counts: dict[str, int]) -> None:
        """Drop lines written after the checkpoint being resumed."""
        _truncate(self.metrics_path, int(counts.get("metrics_lines", 0)))
        _truncate(self.samples_path, int(counts.get("samples_lines", 0)))

    def reset(self) -> None:
        """A fresh (not resumed) run starts with empty record files."""
        for path in (self.metrics_path, self.samples_path, self.eval_path):
            path.unlink(missing_ok=True)

    def append_metrics(self, line: dict[str, Any]) -> None:
        _append(self.metrics_path, [line])

    def append_samples(self, lines: list[dict[str, Any]]) -> None:
        _append(self.samples_path, lines)

    def sync(self) -> None:
        """fsync the append-only files (called before a checkpoint records their line counts)."""
        for path in (self.metrics_path, self.samples_path):
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
        if not self.metrics_path.is_file():
            return []
        return [json.loads(line) for line in self.metrics_path.read_text(encoding="utf-8").splitlines() if line]


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
