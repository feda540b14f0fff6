"""The dataset card's own Python snippet, run on an export of the example workspace (issues #8, #14).

The card tells Python users to slice with ``offsetsCodePoints`` (``offsets`` counts UTF-16 code units, as
LSP does). This runs the card's standard-library snippet exactly as written, in the dataset folder, and
checks that it reconstructed every middle — including those after astral characters, where the two kinds
of offsets differ — and built each task's bounded prompt from its row and its declaration's context row.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "dist" / "cli.js"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH: the export needs it")
    if not CLI.exists():
        pytest.fail(f"{CLI} is missing: run `npm run build` first")
    out = tmp_path_factory.mktemp("card") / "dataset"
    subprocess.run(
        [node, str(CLI), "export", str(REPO / "lean-env"), "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out


def python_blocks(card: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", card, flags=re.DOTALL)


def test_the_cards_stdlib_snippet_reconstructs_every_middle(dataset: Path) -> None:
    blocks = [b for b in python_blocks((dataset / "README.md").read_text(encoding="utf-8")) if "datasets" not in b]
    assert len(blocks) == 1, "the card has one standard-library loading snippet"
    run = subprocess.run(
        [sys.executable, "-c", blocks[0]],
        check=False,
        cwd=dataset,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    tasks = [json.loads(line) for line in (dataset / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    assert run.stdout.strip() == f"all {len(tasks)} middles reconstructed"
    assert "bounded = prompt(context, task)" in blocks[0], "the snippet shows the bounded prompt"
    assert "contexts.jsonl" in blocks[0] and "files.jsonl" in blocks[0]
    differ = [t for t in tasks if t["offsets"] != t["offsetsCodePoints"]]
    assert differ, "some holes come after astral characters, so UTF-16 slicing would have failed"


def test_utf16_offsets_slice_wrongly_in_python_where_the_card_says_so(
    dataset: Path,
) -> None:
    files = {
        r["file"]: r["text"]
        for r in map(
            json.loads,
            (dataset / "files.jsonl").read_text(encoding="utf-8").splitlines(),
        )
    }
    tasks = [json.loads(line) for line in (dataset / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    wrong = [t for t in tasks if files[t["file"]][t["offsets"]["start"] : t["offsets"]["end"]] != t["middle"]]
    assert wrong, "the example workspace exercises the difference"
    assert all(t["offsets"] != t["offsetsCodePoints"] for t in wrong)


def test_the_datasets_snippet_loads_when_the_library_is_installed(
    dataset: Path,
) -> None:
    pytest.importorskip("datasets", reason="🤗 datasets is not installed in this environment")
    block = next(b for b in python_blocks((dataset / "README.md").read_text(encoding="utf-8")) if "datasets" in b)
    run = subprocess.run(
        [sys.executable, "-c", block],
        check=False,
        cwd=dataset,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr


def test_rows_are_bounded_by_the_context_window(dataset: Path) -> None:
    report = json.loads((dataset / "report.json").read_text(encoding="utf-8"))
    window = report["contextChars"]
    tasks = [json.loads(line) for line in (dataset / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(len(t["prefix"]) <= window and len(t["suffix"]) <= -(-window // 4) for t in tasks)
    contexts = (dataset / "contexts.jsonl").read_text(encoding="utf-8").splitlines()
    assert {t["context"] for t in tasks} <= set(range(len(contexts)))
