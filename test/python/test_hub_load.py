"""An export loads with 🤗 `datasets` as a Hub dataset does: `load_dataset(DIR)` reads the card's YAML configs.

The export of the example workspace (with both views) is loaded by folder, each config by name; every row of a
file has the same keys (a value a task lacks is written null), those the card declares, and the rows are the file's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder: nothing to fetch

import datasets
import pytest

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "dist" / "cli.js"


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the export needs it")
    if not CLI.exists():
        pytest.fail(f"{CLI} is missing: run `npm run build` first")
    out = tmp_path_factory.mktemp("hub") / "dataset"
    views = ["--format", "native,lean-grpo,fim-text", "--fim-tokens", "qwen"]
    subprocess.run(
        [node, str(CLI), "export", str(REPO / "lean-env"), "--out", str(out), *views],
        check=True,
        capture_output=True,
        timeout=180,
    )
    return out


def rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_load_dataset_of_the_folder_gives_the_tasks(export: Path) -> None:
    loaded = datasets.load_dataset(str(export))
    assert list(loaded) == ["tasks"]
    tasks = loaded["tasks"]
    written = rows(export / "tasks.jsonl")
    assert tasks.num_rows == len(written)
    assert tasks["id"] == [r["id"] for r in written]
    # Every row has every field, null where a task has no value (novel on a training task, reference on a proved one).
    assert {tuple(r) for r in written} == {tuple(tasks.column_names)}
    first_train = next(i for i, r in enumerate(written) if r["split"] == "train")
    assert tasks[first_train]["novel"] is None and tasks[first_train]["heldOut"] is None
    assert written[first_train]["novel"] is None and written[first_train]["heldOut"] is None
    held_out = {r["heldOut"] for r in written if r["heldOut"] is not None}
    assert held_out and set(tasks.filter(lambda t: t["heldOut"] is not None)["heldOut"]) == held_out
    assert [t["id"] for t in tasks if t["reference"] is False] == [r["id"] for r in written if r["reference"] is False]


@pytest.mark.parametrize(
    ("config", "file"),
    [
        ("contexts", "contexts.jsonl"),
        ("files", "files.jsonl"),
        ("lean-grpo", "lean-grpo.jsonl"),
        ("fim-text", "fim-text.jsonl"),
    ],
)
def test_each_file_is_a_config_of_its_own(export: Path, config: str, file: str) -> None:
    loaded = datasets.load_dataset(str(export), config)
    ((_, table),) = loaded.items()
    written = rows(export / file)
    assert table.num_rows == len(written)
    assert {tuple(r) for r in written} == {tuple(table.column_names)}
    assert table[0] == written[0]


def test_an_import_loads_by_folder_with_its_own_fields(tmp_path: Path) -> None:
    """`fim-rlvr import` writes its tasks with the declaration's context inline: its card declares those fields."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the import needs it")
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "lean-env" / "lean-toolchain", project / "lean-toolchain")
    (project / "lakefile.toml").write_text('name = "imp"\n', encoding="utf-8")
    source = REPO / "test" / "fixtures" / "import" / "theorems.jsonl"
    subprocess.run(
        [node, str(CLI), "import", str(source), "--project", str(project), "--simulator"],
        check=True,
        capture_output=True,
        timeout=180,
    )
    (dataset,) = (project / ".fim-rlvr" / "imported").iterdir()
    loaded = datasets.load_dataset(str(dataset))
    written = rows(dataset / "tasks.jsonl")
    assert list(loaded) == ["tasks"] and loaded["tasks"].num_rows == len(written)
    assert {tuple(r) for r in written} == {tuple(loaded["tasks"].column_names)}
    assert "context" not in loaded["tasks"].column_names and "statement" in loaded["tasks"].column_names
    files = datasets.load_dataset(str(dataset), "files")["files"]
    assert files.num_rows == len(rows(dataset / "files.jsonl"))
