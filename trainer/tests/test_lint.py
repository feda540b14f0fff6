"""The trainer's code stays ruff-clean, ruff-formatted and mypy-typed (the project's Python rules), in CI too."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

TRAINER = Path(__file__).resolve().parents[1]


def run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e 'trainer[test]')")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=TRAINER, capture_output=True, text=True)


def test_ruff_check() -> None:
    result = run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = run("ruff", "format", "--check", ".")
    assert result.returncode == 0, f"run `ruff format` in trainer/:\n{result.stdout}{result.stderr}"


def test_mypy() -> None:
    result = run("mypy", "fim_rlvr")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_skipped_test_prints_its_reason(tmp_path: Path) -> None:
    """The suite's own options (pyproject's addopts) print every skip's reason, as the README promises, without -rs."""
    test_file = tmp_path / "test_skipping.py"
    test_file.write_text(
        "import pytest\n\n\ndef test_needs_a_tool() -> None:\n    pytest.skip('the tool is not installed here')\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(TRAINER / "pyproject.toml"),
            "-p",
            "no:cacheprovider",
            str(test_file),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SKIPPED [1]" in result.stdout and "the tool is not installed here" in result.stdout, result.stdout
