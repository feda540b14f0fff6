"""Tasks from an exported dataset folder (tasks.jsonl, contexts.jsonl, files.jsonl): loading, splits and kinds.

A task is one hole: the declaration text before it (`prefix`), after it (`suffix`), the original text (`middle`),
its kind (tactic, block, steps, proof), its split (train, validation, test) and where it lies in its file.

Datasets are indexed, not loaded: `load_tasks` reads tasks.jsonl once, as bytes, keeping per task only what
selecting and sampling need (id, file, kind, split, novel, heldOut, goal) and where its line is; the text fields
are read back from disk when first used (a few thousand rows stay cached). A million-task dataset thus starts in seconds
and costs its ids in memory, not its text. A task's `prefix` and `suffix` are its declaration's whole text
around the hole, from the declaration's row in contexts.jsonl (the row in tasks.jsonl holds a bounded window
only); a dataset without contexts.jsonl (exported before it existed) gives the row's own prefix and suffix.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from ..core.errors import UserError
from ..core.protocol import HOLE_KINDS, Range


class DatasetError(UserError, ValueError):
    """A dataset the trainer cannot use; the message says what happened and what to do."""


REQUIRED_FIELDS = ("id", "file", "kind", "split", "prefix", "suffix", "middle", "range")

# The head of a line as `fim-rlvr export` writes it; other layouts are parsed whole.
# (An exporter writes every key on every row, `null` where a task has no value; older exports left such keys out.)
_HEAD = re.compile(
    rb'^\{"id":"([^"\\]*)","file":"([^"\\]*(?:\\.[^"\\]*)*)","kind":"(\w+)","split":"(\w+)"'
    rb'(,"novel":(true|false|null))?(,"heldOut":(?:"(\w+)"|null))?'
)
# After the head, the keys whose presence (or absence) decides how a line is read, found in one pass. In JSON
# text a quote inside a string is escaped, so these occur only as keys.
_KEYS = re.compile(rb'"(range|middle|prefix|suffix|goal|reference)":')
# An exporter's line: these keys, in this order, and neither a goal (to read) nor `reference` (to honour): the
# two are absent (older exports) or last and null.
_EXPORTED_KEYS = [b"range", b"middle", b"prefix", b"suffix"]
_EXPORTED_NULL_KEYS = [*_EXPORTED_KEYS, b"goal", b"reference"]
_NULL_TAIL = b',"goal":null,"reference":null}'


def _exported_line(line: bytes, keys: list[bytes]) -> bool:
    """Whether a line's keys (from `_KEYS`) are an exporter's with no goal and a reference: read from its head."""
    if keys == _EXPORTED_KEYS:
        return True
    if keys != _EXPORTED_NULL_KEYS:
        return False
    end = len(line)
    while end and line[end - 1] in b"\r\n":
        end -= 1
    return line.endswith(_NULL_TAIL, 0, end)


class _Rows:
    """A JSONL file read back by byte offset; the last rows read stay parsed."""

    def __init__(self, path: Path, cache: int = 4096) -> None:
        self.path = path
        self._file: BinaryIO | None = None
        self._cache: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self._size = cache

    def read(self, offset: int, length: int) -> dict[str, Any]:
        row = self._cache.get(offset)
        if row is not None:
            self._cache.move_to_end(offset)
            return row
        if self._file is None:
            self._file = self.path.open("rb")
        self._file.seek(offset)
        row = json.loads(self._file.read(length))
        self._cache[offset] = row
        if len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return row

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "_file": None, "_cache": OrderedDict(), "_size": self._size}


class _Contexts:
    """contexts.jsonl by row index: offsets kept, rows read when asked for."""

    def __init__(self, path: Path) -> None:
        self._rows = _Rows(path, cache=1024)
        self._lines: list[tuple[int, int]] = []
        offset = 0
        with path.open("rb") as f:
            for line in f:
                self._lines.append((offset, len(line)))
                offset += len(line)

    def row(self, index: int) -> dict[str, Any] | None:
        if not 0 <= index < len(self._lines):
            return None
        return self._rows.read(*self._lines[index])


class Task:
    """One fill-in-the-middle hole.

    Built with every field (`Task(id=…, prefix=…, …)`), or by `load_tasks` with the light fields only, the rest
    read from the dataset on first use. Either way it reads the same; pickling (checkpoints) writes every field.
    """

    __slots__ = (
        "_at",
        "_contexts",
        "_fields",
        "_rows",
        "file",
        "goal",
        "held_out",
        "id",
        "kind",
        "novel",
        "reference",
        "split",
    )

    id: str
    """Stable id (the key of verify/batch items)."""
    file: str
    """Lean file, relative to the workspace root."""
    kind: str
    """tactic, block, steps or proof."""
    split: str
    """train, validation or test."""
    novel: bool | None
    """Validation and test tasks: whether no training task has the same middle (normalised); else None."""
    goal: str | None
    """The goal state at the hole, when the export recorded it."""
    reference: bool
    """False for an imported statement without a proof: its middle is the placeholder `sorry`, nothing to imitate."""
    held_out: str | None
    """Validation and test tasks: "instance" (training has their family) or "family" (it has none), when the
    dataset says (`heldOut`); else None."""

    def __init__(
        self,
        id: str,
        file: str,
        kind: str,
        split: str,
        prefix: str,
        suffix: str,
        middle: str,
        indent: int,
        hole: Range,
        goal: str | None = None,
        *,
        novel: bool | None = None,
        statement: str = "",
        imports: Sequence[str] = (),
        scope: Sequence[str] = (),
        variables: Sequence[str] = (),
        reference: bool = True,
        held_out: str | None = None,
    ) -> None:
        self.id, self.file, self.kind, self.split, self.goal, self.novel = id, file, kind, split, goal, novel
        self.reference = reference
        self.held_out = held_out
        self._fields: dict[str, Any] | None = {
            "prefix": prefix,
            "suffix": suffix,
            "middle": middle,
            "indent": indent,
            "hole": hole,
            "statement": statement,
            "imports": list(imports),
            "scope": list(scope),
            "variables": list(variables),
        }
        self._rows: _Rows | None = None
        self._at = (0, 0)
        self._contexts: _Contexts | None = None

    @classmethod
    def _stored(
        cls,
        head: tuple[str, str, str, str, bool | None, str | None, bool, str | None],
        rows: _Rows,
        at: tuple[int, int],
        contexts: _Contexts | None,
    ) -> Task:
        task = cls.__new__(cls)
        task.id, task.file, task.kind, task.split, task.novel, task.goal, task.reference, task.held_out = head
        task._fields = None
        task._rows, task._at, task._contexts = rows, at, contexts
        return task

    def _all(self) -> dict[str, Any]:
        if self._fields is not None:
            return self._fields
        assert self._rows is not None
        return _fields_of(self._rows.read(*self._at), self._contexts)

    @property
    def prefix(self) -> str:
        """The declaration's text before the hole (the whole of it, from its context row, when the dataset has one)."""
        return str(self._all()["prefix"])

    @property
    def suffix(self) -> str:
        """The declaration's text after the hole."""
        return str(self._all()["suffix"])

    @property
    def middle(self) -> str:
        """The original text of the hole (the SFT target; never sent to the verifier as a candidate by the loop)."""
        return str(self._all()["middle"])

    @property
    def indent(self) -> int:
        """Column of the hole's first line; later lines of a candidate are indented to it."""
        return int(self._all()["indent"])

    @property
    def hole(self) -> Range:
        """LSP range of the hole in its file."""
        hole: Range = self._all()["hole"]
        return hole

    @property
    def statement(self) -> str:
        """The declaration's header up to `:=` ("" when the dataset does not say)."""
        return str(self._all()["statement"])

    @property
    def imports(self) -> list[str]:
        """The file's imported modules."""
        return list(self._all()["imports"])

    @property
    def scope(self) -> list[str]:
        """`namespace`, `section`, `open` and `universe` commands in effect at the declaration, in file order."""
        return list(self._all()["scope"])

    @property
    def variables(self) -> list[str]:
        """`variable` commands in scope at the declaration."""
        return list(self._all()["variables"])

    def _key(self) -> tuple[Any, ...]:
        f = self._all()
        return (
            self.id,
            self.file,
            self.kind,
            self.split,
            f["middle"],
            f["prefix"],
            f["suffix"],
            f["indent"],
            self.goal,
        )

    def with_proof(self, middle: str) -> Task:
        """This task with `middle` as its proof to imitate (`reference` true): an open goal given a proof found by
        someone else (the data-matched SFT arm's portfolio proofs, step/portfolio.py)."""
        f = self._all()
        return Task(
            self.id,
            self.file,
            self.kind,
            self.split,
            f["prefix"],
            f["suffix"],
            middle,
            f["indent"],
            f["hole"],
            self.goal,
            novel=self.novel,
            statement=f["statement"],
            imports=f["imports"],
            scope=f["scope"],
            variables=f["variables"],
            reference=True,
            held_out=self.held_out,
        )

    @property
    def family(self) -> str:
        """The declaration's family, as the exporter names it (lean-bridge/dataset/splitPlan.ts `familyOf`): its file
        and the named namespaces and sections around it, `file#A.B`."""
        return family_of(self.file, self.scope)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Task) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"Task(id={self.id!r}, file={self.file!r}, kind={self.kind!r}, split={self.split!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        f = self._all()
        keywords = {k: f[k] for k in ("statement", "imports", "scope", "variables")} | {
            "novel": self.novel,
            "reference": self.reference,
            "held_out": self.held_out,
        }
        args = (
            self.id,
            self.file,
            self.kind,
            self.split,
            f["prefix"],
            f["suffix"],
            f["middle"],
            f["indent"],
            f["hole"],
            self.goal,
        )
        return (_rebuild, (args, keywords))


_SCOPE_NAME = re.compile(r"^(?:namespace|section)\s+(\S+)")


def family_of(file: str, scope: Sequence[str]) -> str:
    """`file#A.B` from the file and the scope's `namespace A` / `section B` commands (splitPlan.ts `familyOf`)."""
    names = [m.group(1) for command in scope if (m := _SCOPE_NAME.match(command))]
    return f"{file}#{'.'.join(names)}"


def _rebuild(args: tuple[Any, ...], keywords: dict[str, Any]) -> Task:
    return Task(*args, **keywords)


def _fields_of(raw: dict[str, Any], contexts: _Contexts | None) -> dict[str, Any]:
    """A row's text fields; prefix and suffix from its declaration's context row when there is one."""
    context = contexts.row(int(raw["context"])) if contexts is not None and "context" in raw else None
    prefix, suffix = str(raw["prefix"]), str(raw["suffix"])
    if context is not None:
        text = str(context["text"])
        start = int(raw["offsetsCodePoints"]["start"]) - int(context["offsetsCodePoints"]["start"])
        end = int(raw["offsetsCodePoints"]["end"]) - int(context["offsetsCodePoints"]["start"])
        if 0 <= start <= end <= len(text) and text[start:end] == raw["middle"]:
            prefix, suffix = text[:start], text[end:]
    source = context if context is not None else raw
    return {
        "prefix": prefix,
        "suffix": suffix,
        "middle": str(raw["middle"]),
        "indent": int(raw.get("indent", 0)),
        "hole": raw["range"],
        "statement": str(source.get("statement", "")),
        "imports": list(source.get("imports", [])),
        "scope": list(source.get("scope", [])),
        "variables": list(source.get("variables", [])),
    }


def _goal(value: Any) -> str | None:
    return str(value) if isinstance(value, str) and value.strip() else None


def load_tasks(dataset_dir: str | Path) -> list[Task]:
    """Index dataset_dir/tasks.jsonl. Blank lines are skipped; a malformed line is an error naming its line number."""
    path = Path(dataset_dir) / "tasks.jsonl"
    if not path.is_file():
        raise DatasetError(
            f"{path} does not exist: point the trainer at a folder written by `fim-rlvr export WORKSPACE --out DIR`"
        )
    contexts_path = Path(dataset_dir) / "contexts.jsonl"
    contexts = _Contexts(contexts_path) if contexts_path.is_file() else None
    rows = _Rows(path)
    tasks: list[Task] = []
    seen: set[str] = set()
    names: dict[bytes, str] = {}  # file, kind and split strings shared by every task that has them
    offset = 0
    with path.open("rb") as f:
        for number, line in enumerate(f, start=1):
            at = (offset, len(line))
            offset += len(line)
            if line.isspace():  # Stops at the first other byte, where strip() would copy the line.
                continue
            head = _HEAD.match(line)
            # The head holds id, file, kind and split; the other required keys are looked for in one scan.
            if head and _exported_line(line, _KEYS.findall(line, head.end())):
                kind = names.get(head[3]) or names.setdefault(head[3], head[3].decode())
                if kind not in HOLE_KINDS:
                    raise DatasetError(
                        f"{path}:{number}: unknown hole kind {kind!r} (expected one of {', '.join(HOLE_KINDS)})"
                    )
                file = names.get(head[2]) or names.setdefault(head[2], json.loads(b'"' + head[2] + b'"'))
                novel = None if head[6] is None or head[6] == b"null" else head[6] == b"true"
                split = names.get(head[4]) or names.setdefault(head[4], head[4].decode())
                held_out = (
                    None if head[8] is None else names.get(head[8]) or names.setdefault(head[8], head[8].decode())
                )
                task = Task._stored(
                    (head[1].decode(), file, kind, split, novel, None, True, held_out), rows, at, contexts
                )
            else:
                task = _parsed(line, f"{path}:{number}", rows, at, contexts)
            if task.id in seen:
                raise DatasetError(f"{path}:{number}: duplicate task id {task.id}; re-export the dataset")
            seen.add(task.id)
            tasks.append(task)
    if not tasks:
        raise DatasetError(f"{path} holds no tasks: export a workspace with tactic proofs")
    return tasks


def _parsed(line: bytes, where: str, rows: _Rows, at: tuple[int, int], contexts: _Contexts | None) -> Task:
    """A line in another layout (or carrying a goal): parsed and checked whole, its text still read on demand."""
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as error:
        raise DatasetError(f"{where}: not JSON ({error.msg}); re-export the dataset") from error
    if not isinstance(raw, dict):
        raise DatasetError(f"{where}: expected a JSON object per line")
    missing = [name for name in REQUIRED_FIELDS if name not in raw]
    if missing:
        raise DatasetError(f"{where}: missing field(s) {', '.join(missing)}; re-export the dataset")
    if raw["kind"] not in HOLE_KINDS:
        raise DatasetError(f"{where}: unknown hole kind {raw['kind']!r} (expected one of {', '.join(HOLE_KINDS)})")
    novel = raw.get("novel")
    held_out = raw.get("heldOut")
    head = (
        str(raw["id"]),
        str(raw["file"]),
        str(raw["kind"]),
        str(raw["split"]),
        novel if isinstance(novel, bool) else None,
        _goal(raw.get("goal")),
        raw.get("reference", True) is not False,
        held_out if isinstance(held_out, str) else None,
    )
    return Task._stored(head, rows, at, contexts)


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
        with files.open(encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    record = json.loads(line)
                    if isinstance(record, dict) and isinstance(record.get("text"), str):
                        texts.append(record["text"])
    if not texts:
        texts = [t.prefix + t.middle + t.suffix for t in tasks]
    return texts
