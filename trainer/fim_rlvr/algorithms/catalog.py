"""What each algorithm is, for listings (`fim-rlvr algorithms`). Imports neither torch nor YAML, so
the list prints fast and before the trainer's dependencies are installed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.config import PRESETS
from .config import ALGORITHM_NAMES, PAPER_DEFAULTS, paper_defaults


@dataclass(frozen=True)
class Entry:
    name: str
    """The name `make` and `--algorithm` take."""
    paper: str
    """Where the objective is published (or "ours")."""
    summary: str
    """One line: what sets it apart."""


CATALOG: tuple[Entry, ...] = (
    Entry(
        "grpo",
        "DeepSeekMath, arXiv 2402.03300",
        "group-normalised advantages, PPO clip per token, per-sequence token mean, k3 KL to a reference",
    ),
    Entry(
        "drgrpo",
        "Understanding R1-Zero-Like Training, arXiv 2503.20783",
        "GRPO without std scaling; token sum over the constant max_completion_length x sequences",
    ),
    Entry(
        "dapo",
        "DAPO, arXiv 2503.14476",
        "clip-higher, token mean over the batch, dynamic sampling, overlong reward shaping",
    ),
    Entry(
        "gspo",
        "GSPO, arXiv 2507.18071",
        "length-normalised sequence ratio, clipped per sequence (tiny clip range), mean over sequences",
    ),
    Entry(
        "dgpo",
        "ours (GRPO + DPO pairs within each group; no paper owns the name)",
        "GRPO plus dpo_coef x a DPO loss over every (better, worse) pair of the same group",
    ),
)
assert tuple(entry.name for entry in CATALOG) == ALGORITHM_NAMES


EMBEDDED_SOURCE = 'trainer/fim_rlvr/core/config.py PRESETS (why: trainer/README.md, "The embedded model")'
"""Where the embedded model's own algorithm defaults are set, and explained."""


def describe() -> list[dict[str, Any]]:
    """Each algorithm's name, paper, one-line description, full paper defaults, the defaults in which it differs from
    GRPO's, and what a run on the embedded model uses instead of the paper's (for `fim-rlvr algorithms` and
    `python -m fim_rlvr.algorithms --json`): the one source is core/config.py's PRESETS."""
    embedded = PRESETS["embedded"]
    return [
        {
            "name": entry.name,
            "paper": entry.paper,
            "description": entry.summary,
            "defaults": paper_defaults(entry.name).to_dict(),
            "differs_from_grpo": dict(PAPER_DEFAULTS[entry.name]),
            "embedded_model": dict(embedded.algo.get(entry.name, {})),
            "embedded_model_source": EMBEDDED_SOURCE if entry.name in embedded.algo else None,
        }
        for entry in CATALOG
    ]
