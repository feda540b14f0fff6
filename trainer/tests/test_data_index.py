"""Datasets are indexed, not loaded (issue 14): tasks keep their light fields, their text is read back from
tasks.jsonl on first use, prefix and suffix are the declaration's whole text from contexts.jsonl, and pickling a
task (a checkpoint) writes every field."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from fim_rlvr.tasks.data import Task, _Rows, load_tasks

STATEMENT = "theorem t{d} (a : Nat) : a + {d} = a + {d}"


def _dataset(folder: Path, declarations: int, *, exporter_bytes: bool = False) -> Path:
    """tasks.jsonl and contexts.jsonl in the exporter's layout: two holes per declaration, windows of 8 chars.

    `exporter_bytes`: the rows as the exporter writes them (compact JSON, every key, null where a task has no value);
    else with Python's default separators and the null keys left out, as an older export or another tool writes."""
    folder.mkdir(parents=True, exist_ok=True)
    tasks, contexts = [], []
    for d in range(declarations):
        statement = STATEMENT.format(d=d)
        text = f"/-- doc {d} -/\n{statement} := by\n  skip\n  rfl"
        contexts.append(
            {
                "context": d,
                "file": "A.lean",
                "decl": f"t{d}",
                "declKind": "theorem",
                "declStart": {"line": 4 * d, "character": 0},
                "offsets": {"start": 100 * d, "end": 100 * d + len(text)},
                "offsetsCodePoints": {"start": 100 * d, "end": 100 * d + len(text)},
                "imports": ["Mathlib.Data.Nat.Basic"],
                "scope": ["namespace A"],
                "variables": [],
                "statement": statement,
                "text": text,
            }
        )
        for k, middle in enumerate(("skip", "rfl")):
            start = text.index(middle, text.index(":= by"))
            split = "test" if d % 4 == 3 else "train"
            row: dict[str, object] = {"id": f"{d}-{k}", "file": "A.lean", "kind": "tactic", "split": split}
            if split == "test":
                row["novel"] = d % 8 == 3
                row["heldOut"] = "instance" if d % 8 == 3 else "family"
            elif exporter_bytes:
                row |= {"novel": None, "heldOut": None}
            row |= {
                "decl": f"t{d}",
                "context": d,
                "range": {
                    "start": {"line": 4 * d + 2 + k, "character": 2},
                    "end": {"line": 4 * d + 2 + k, "character": 2 + len(middle)},
                },
                "middle": middle,
                "indent": 2,
                "prefix": text[max(0, start - 8) : start],
                "suffix": text[start + len(middle) : start + len(middle) + 2],
                "offsets": {"start": 100 * d + start, "end": 100 * d + start + len(middle)},
                "offsetsCodePoints": {"start": 100 * d + start, "end": 100 * d + start + len(middle)},
            }
            if exporter_bytes:
                row |= {"goal": None, "reference": False if d == 1 else None}
            tasks.append(row)
    separators = (",", ":") if exporter_bytes else None
    (folder / "tasks.jsonl").write_text(
        "".join(json.dumps(t, ensure_ascii=False, separators=separators) + "\n" for t in tasks), encoding="utf-8"
    )
    (folder / "contexts.jsonl").write_text("".join(json.dumps(c) + "\n" for c in contexts), encoding="utf-8")
    return folder


def test_tasks_hold_light_fields_and_read_their_text_back(tmp_path: Path) -> None:
    tasks = load_tasks(_dataset(tmp_path, 40))
    assert len(tasks) == 80
    assert all(t._fields is None for t in tasks), "no task's text is loaded by indexing"
    first = tasks[0]
    assert (first.id, first.kind, first.split, first.novel) == ("0-0", "tactic", "train", None)
    assert first.prefix == "/-- doc 0 -/\ntheorem t0 (a : Nat) : a + 0 = a + 0 := by\n  ", (
        "the whole declaration before the hole"
    )
    assert first.suffix == "\n  rfl"
    assert (first.middle, first.indent, first.statement, first.imports, first.scope) == (
        "skip",
        2,
        STATEMENT.format(d=0),
        ["Mathlib.Data.Nat.Basic"],
        ["namespace A"],
    )
    assert first._fields is None, "reading a field does not pin the task's text to it"
    novel = {t.id: t.novel for t in tasks if t.split == "test"}
    assert novel["3-0"] is True and novel["7-0"] is False
    held_out = {t.id: t.held_out for t in tasks}
    assert (held_out["3-0"], held_out["7-0"], held_out["0-0"]) == ("instance", "family", None)


def test_reading_every_task_keeps_only_a_bounded_cache(tmp_path: Path) -> None:
    tasks = load_tasks(_dataset(tmp_path, 3000))
    rows = tasks[0]._rows
    assert isinstance(rows, _Rows)
    for task in tasks:
        assert task.middle in ("skip", "rfl")
    assert len(rows._cache) <= rows._size < len(tasks)


def test_a_pickled_task_carries_every_field(tmp_path: Path) -> None:
    task = load_tasks(_dataset(tmp_path, 2))[1]
    copy = pickle.loads(pickle.dumps(task))
    assert copy == task
    assert copy._fields is not None and copy._rows is None
    assert (copy.prefix, copy.suffix, copy.hole, copy.statement) == (
        task.prefix,
        task.suffix,
        task.hole,
        task.statement,
    )


def test_rows_in_other_layouts_and_goals_are_read_whole(tmp_path: Path) -> None:
    row = {
        "split": "train",
        "kind": "proof",
        "id": "x",
        "file": "B.lean",
        "prefix": "theorem b : True := by\n  ",
        "suffix": "",
        "middle": "trivial",
        "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 9}},
        "goal": "⊢ True",
    }
    (tmp_path / "tasks.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    [task] = load_tasks(tmp_path)
    assert (task.id, task.kind, task.goal, task.prefix, task.statement) == ("x", "proof", "⊢ True", row["prefix"], "")
    assert isinstance(task, Task)


def test_exporter_rows_with_null_fields_are_indexed_from_their_head(tmp_path: Path, monkeypatch) -> None:
    """Rows whose goal and reference are null are read from their head, never parsed whole; one whose `reference`
    is false (declaration 1) is parsed, so that it is honoured."""
    from fim_rlvr.tasks import data

    parse_whole = data._parsed
    parsed: list[str] = []

    def counted(line: bytes, where: str, *rest: object) -> Task:
        parsed.append(json.loads(line)["id"])
        return parse_whole(line, where, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(data, "_parsed", counted)
    tasks = load_tasks(_dataset(tmp_path, 8, exporter_bytes=True))
    assert parsed == ["1-0", "1-1"]
    assert [t.id for t in tasks if not t.reference] == ["1-0", "1-1"]
    rows = [json.loads(line) for line in (tmp_path / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len({tuple(r) for r in rows}) == 1, "every row has the same keys"
    assert [(t.novel, t.held_out, t.goal) for t in tasks] == [(r["novel"], r["heldOut"], None) for r in rows]
    assert {t.held_out for t in tasks} == {None, "instance", "family"}
