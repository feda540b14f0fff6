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
