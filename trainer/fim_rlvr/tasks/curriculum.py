"""Which training holes come next: a curriculum over hole kinds and a resumable, seeded task sampler.

Kinds unlock in order tactic -> block -> steps -> proof (small holes first). The frontier kind (the last one
unlocked) opens the next when its measured pass rate (an exponential moving average over steps) reaches
`unlock_at`, or after `patience` steps at the frontier so a hard kind never stalls the run. Prompts are drawn
from unlocked kinds in proportion to their tasks, weighted toward the kinds the model fails more often: every
training task is about equally likely, tilted by at most 1.1 : 0.1 between kinds. Drawing each kind equally
instead spent a workspace's RL steps on its rarest kind: on lean-env (444 training tasks, 14 of them `steps` holes
and 335 whole proofs, most of them open goals) a quarter of the draws went to the 14 `steps` holes, which the
model never proved, and each open goal was drawn about once in a run; drawn by task, RL's held-out pass@1 on
lean-env's validation instances went from 25.7% to 31.4% (seed 0; docs/BENCHMARKS.md, "Choosing the settings").
With `task_sampling: learnability`, the task within a kind is drawn by how much its group can teach, not in
shuffled order: a group whose rewards are all equal has no group-relative advantage and trains nothing, and one with
pass rate p carries signal in proportion to p(1 - p) (the expected variance of its binary rewards; Foster & Foerster
2025, "Learning to Reason at the Frontier of Learnability"). Per-task rates are too sparse to learn from in a short
run (each task is drawn about once), so the rate is the task's Lean file's: its declarations share statement shapes
(lean-env-prelude's families are files). A file not yet drawn counts as p = 0.5, so every file is tried; a file the
model always fails, or always proves, keeps a floor weight so that it is drawn again as the policy moves.
Everything the sampler needs to continue exactly lives in `state()` (plain JSON, saved in checkpoints).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.protocol import HOLE_KINDS
from .data import Task

EMA_WEIGHT = 0.3
"""Weight of the newest step in the pass-rate average."""


def moving_average(old: float | None, rate: float) -> float:
    """A pass rate's exponential moving average after one more step's rate (the first step's rate as it is)."""
    return rate if old is None else (1 - EMA_WEIGHT) * old + EMA_WEIGHT * rate


@dataclass
class Curriculum:
    """Unlocked kinds and measured pass rates."""

    kinds: list[str]
    """Kinds in curriculum order (only those with training tasks)."""
    enabled: bool = True
    unlock_at: float = 0.5
    patience: int = 8
    unlocked: int = 1
    rates: dict[str, float] = field(default_factory=dict)
    steps_at_frontier: int = 0

    def __post_init__(self) -> None:
        self.kinds = [k for k in HOLE_KINDS if k in self.kinds]
        if not self.enabled:
            self.unlocked = len(self.kinds)

    @property
    def active(self) -> list[str]:
        """Kinds prompts are drawn from now."""
        return self.kinds[: self.unlocked]

    def update(self, results: Mapping[str, tuple[int, int]]) -> str | None:
        """Fold one step's (proved, checked) counts per kind in; returns the kind unlocked by it, if any."""
        for kind, (proved, checked) in results.items():
            if checked <= 0:
                continue
            self.rates[kind] = moving_average(self.rates.get(kind), proved / checked)
        if not self.enabled or self.unlocked >= len(self.kinds):
            return None
        self.steps_at_frontier += 1
        frontier = self.kinds[self.unlocked - 1]
        if self.rates.get(frontier, 0.0) >= self.unlock_at or self.steps_at_frontier >= self.patience:
            self.unlocked += 1
            self.steps_at_frontier = 0
            return self.kinds[self.unlocked - 1]
        return None

    def weights(self) -> dict[str, float]:
        """Sampling weight per active kind, per task of the kind (TaskSampler multiplies by the kind's task count):
        more for kinds the model fails more often."""
        return {k: 1.1 - self.rates.get(k, 0.0) for k in self.active}

    def state(self) -> dict[str, Any]:
        return {"unlocked": self.unlocked, "rates": dict(self.rates), "steps_at_frontier": self.steps_at_frontier}

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Continue from a checkpoint's state (with the curriculum off, every kind stays unlocked)."""
        self.unlocked = int(state["unlocked"]) if self.enabled else len(self.kinds)
        self.rates = {str(k): float(v) for k, v in state["rates"].items()}
        self.steps_at_frontier = int(state["steps_at_frontier"])


LEARNABILITY_FLOOR = 0.02
"""Weight of a file whose measured pass rate is 0 or 1, against 0.25 at p = 0.5: drawn again, 1 in 12.5 as often."""


def learnability(rate: float | None) -> float:
    """p(1 - p) of a file's measured pass rate, an unmeasured file as p = 0.5, never below the floor."""
    p = 0.5 if rate is None else rate
    return max(LEARNABILITY_FLOOR, p * (1 - p))


class TaskSampler:
    """Seeded draws of training tasks: per kind, an endless sequence of shuffled epochs; the kind of each draw
    is chosen by the curriculum's weight of the kind times its number of tasks. With `by_learnability` the task within
    the kind is drawn in proportion to its file's learnability instead (no task twice in one draw), from the pass
    rates `observe` folds in. Its position (draw count, per-kind epoch and cursor, file rates) is its state."""

    def __init__(self, tasks_by_kind: Mapping[str, Sequence[Task]], seed: int, by_learnability: bool = False) -> None:
        self.tasks_by_kind = {k: list(v) for k, v in tasks_by_kind.items() if v}
        self.seed = seed
        self.by_learnability = by_learnability
        self.draws = 0
        self.cursor: dict[str, list[int]] = {k: [0, 0] for k in self.tasks_by_kind}  # kind -> [epoch, index]
        self.file_rates: dict[str, float] = {}

    def _order(self, kind: str, epoch: int) -> list[int]:
        order = list(range(len(self.tasks_by_kind[kind])))
        random.Random(f"{self.seed}:{kind}:{epoch}").shuffle(order)
        return order

    def draw(self, n: int, weights: Mapping[str, float]) -> list[Task]:
        """The next n tasks."""
        kinds = [k for k in weights if k in self.tasks_by_kind]
        if not kinds:
            raise ValueError("no training tasks among the active kinds")
        out: list[Task] = []
        for _ in range(n):
            rng = random.Random(f"{self.seed}:draw:{self.draws}")
            self.draws += 1
            chances = [max(weights[k], 1e-6) * len(self.tasks_by_kind[k]) for k in kinds]
            kind = rng.choices(kinds, weights=chances)[0]
            out.append(self._learnable(kind, rng, out) if self.by_learnability else self._next_in_order(kind))
        return out

    def _next_in_order(self, kind: str) -> Task:
        epoch, index = self.cursor[kind]
        task = self.tasks_by_kind[kind][self._order(kind, epoch)[index]]
        index += 1
        if index >= len(self.tasks_by_kind[kind]):
            epoch, index = epoch + 1, 0
        self.cursor[kind] = [epoch, index]
        return task

    def _learnable(self, kind: str, rng: random.Random, drawn: Sequence[Task]) -> Task:
        taken = {t.id for t in drawn}
        pool = [t for t in self.tasks_by_kind[kind] if t.id not in taken] or self.tasks_by_kind[kind]
        return rng.choices(pool, weights=[learnability(self.file_rates.get(t.file)) for t in pool])[0]

    def observe(self, results: Mapping[str, tuple[int, int]]) -> None:
        """Fold one step's (proved, checked) counts per file in (an exponential moving average, as the curriculum's)."""
        for file, (proved, checked) in results.items():
            if checked <= 0:
                continue
            self.file_rates[file] = moving_average(self.file_rates.get(file), proved / checked)

    def state(self) -> dict[str, Any]:
        return {
            "draws": self.draws,
            "cursor": {k: list(v) for k, v in self.cursor.items()},
            "file_rates": dict(self.file_rates),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.draws = int(state["draws"])
        for kind, (epoch, index) in state["cursor"].items():
            if kind in self.cursor:
                self.cursor[kind] = [int(epoch), int(index)]
        # Checkpoints written before learnability sampling have no file rates: they start unmeasured.
        self.file_rates = {str(k): float(v) for k, v in state.get("file_rates", {}).items()}
