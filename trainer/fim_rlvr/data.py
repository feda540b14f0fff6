"""Tasks from an exported dataset folder (tasks.jsonl, files.jsonl): loading, splits and kinds.

A task is one hole: the declaration text before it (`prefix`), after it (`suffix`), the original text (`middle`),
its kind (tactic, block, steps, proof), its split (train, validation, test) and where it lies in its file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .protocol import HOLE_KINDS, Range


class DatasetError(ValueError):
    """A dataset the trainer cannot use; the message says what happened and what to do."""


@dataclass(frozen=True)
class Task:
    """One fill-in-the-middle hole."""

    id: str
    """Stable id (the key of verify/batch items)."""
    file: str
    """Lean file, relative to the workspace root."""
    kind: str
    """tactic, block, steps or proof."""
    split: str
    """train, validation or test."""
    prefix: str
    """Declaration text before the hole."""
    suffix: str
    """Declaration text after the hole."""
    middle: str
    """The original text of the hole (the SFT target; never sent to the verifier as a candidate by the loop)."""
    indent: int
    """Column of the hole's first line; later lines of a candidate are indented to it."""
    hole: Range
    """LSP range of the hole in its file."""
    goal: str | None = None
    """The goal state at the hole, when the export recorded it."""
    novel: bool | None = None
    """For test tasks of a de-duplicated export: True when the middle (normalised) occurs nowhere in the training
    split, False when it does (a memorised hole); None when the dataset does not say."""


REQUIRED_FIELDS = ("id", "file", "kind", "split", "prefix", "suffix", "middle", "range")


def load_tasks(dataset_dir: str | Path) -> list[Task]:
    """Read dataset_dir/tasks.jsonl. Blank lines are skipped; a malformed line is an error naming its line number."""
    path = Path(dataset_dir) / "tasks.jsonl"
    if not path.is_file():
        raise DatasetError(
            f"{path} does not exist: point the trainer at a folder written by `fim-rlvr export WORKSPACE --out DIR`"
        )
    tasks: list[Task] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            raise DatasetError(f"{path}:{number}: not JSON ({error.msg}); re-export the dataset") from error
        task = _task_from_json(raw, f"{path}:{number}")
        if task.id in seen:
            raise DatasetError(f"{path}:{number}: duplicate task id {task.id}; re-export the dataset")
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise DatasetError(f"{path} holds no tasks: export a workspace with tactic proofs")
    return tasks


def _task_from_json(raw: Any, where: str) -> Task:
    if not isinstance(raw, dict):
        raise DatasetError(f"{where}: expected a JSON object per line")
    missing = [name for name in REQUIRED_FIELDS if name not in raw]
    if missing:
        raise DatasetError(f"{where}: missing field(s) {', '.join(missing)}; re-export the dataset")
    if raw["kind"] not in HOLE_KINDS:
        raise DatasetError(f"{where}: unknown hole kind {raw['kind']!r} (expected one of {', '.join(HOLE_KINDS)})")
    goal = raw.get("goal")
    return Task(
        id=str(raw["id"]),
        file=str(raw["file"]),
        kind=str(raw["kind"]),
        split=str(raw["split"]),
        prefix=str(raw["prefix"]),
        suffix=str(raw["suffix"]),
        middle=str(raw["middle"]),
        indent=int(raw.get("indent", 0)),
        hole=raw["range"],
        goal=str(goal) if isinstance(goal, str) and goal.strip() else None,
        novel=raw["novel"] if isinstance(raw.get("novel"), bool) else None,
    )


def select(tasks: Iterable[Task], split: str, kinds: Sequence[str]) -> list[Task]:
    """Tasks of one split whose kind is among `kinds`, in file order."""
    wanted = set(kinds)
    return [t for t in tasks if t.split == split and t.kind in wanted]


def by_kind(tasks: Iterable[Task]) -> dict[str, list[Task]]:
    """Tasks grouped by hole kind, kinds in curriculum order (tactic, block, steps, proof), empty kinds left out."""
    groups: dict[str, list[Task]] = {kind: [] for kind in HOLE_KINDS}
    for task in tasks:
        groups[task.kind].append(task)
    return {kind: group for kind, group in groups.items() if group}


def require_tasks(tasks: Sequence[Task], kinds: Sequence[str], dataset_dir: str | Path) -> None:
    """Fail clearly when the train split holds none of the requested kinds."""
    train = select(tasks, "train", kinds)
    if not train:
        present = sorted({t.kind for t in tasks if t.split == "train"})
        raise DatasetError(
            f"{dataset_dir} has no train-split tasks of kind(s) {', '.join(kinds)} "
            f"(it has: {', '.join(present) or 'none'}); choose other kinds or export a larger workspace"
        )


def lean_texts(dataset_dir: str | Path, tasks: Sequence[Task]) -> list[str]:
    """The workspace's Lean text for training a tokenizer: files.jsonl when present, else the tasks' own text."""
    files = Path(dataset_dir) / "files.jsonl"
    texts: list[str] = []
    if files.is_file():
        for line in files.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                if isinstance(record, dict) and isinstance(record.get("text"), str):
                    texts.append(record["text"])
    if not texts:
        texts = [t.prefix + t.middle + t.suffix for t in tasks]
    return texts
