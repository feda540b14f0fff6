"""Shared fixtures: a small exported dataset written by the tests themselves (no Lean, no host needed)."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS.parent))

# No test reaches the network: a name lookup of anything but this machine fails loudly, naming the host, instead
# of waiting on a resolver (CI runners and sandboxes have none) or fetching from the Hub behind the test's back.
_LOOPBACK = {"localhost", "127.0.0.1", "::1", "0.0.0.0", "", None}
_real_getaddrinfo = socket.getaddrinfo


def _loopback_only(host: object, *args: object, **kwargs: object) -> object:
    name = host.decode() if isinstance(host, bytes) else host
    if name not in _LOOPBACK and not (isinstance(name, str) and name.startswith("127.")):
        raise OSError(f"a test tried a network lookup of {name!r}: tests use only this machine (tests/conftest.py)")
    return _real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]


socket.getaddrinfo = _loopback_only  # type: ignore[assignment]
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # transformers and datasets read local files only

# One intra-op thread whatever the machine: seeded runs (the learning and resume tests) then take the same
# floating-point path on every CI runner.
os.environ["FIM_RLVR_THREADS"] = "1"

# Lean-like declarations with one-line tactic proofs: the tiny model can learn them in seconds.
_PROOFS = [
    ("theorem t{i} (a b : Nat) (h : a ≤ b) : a + {i} ≤ b + {i} := by\n  ", "omega"),
    ("theorem s{i} (n : Nat) : n + {i} = {i} + n := by\n  ", "simp [Nat.add_comm]"),
    ("theorem r{i} : ({i} : Nat) = {i} := by\n  ", "rfl"),
    ("theorem d{i} : {i} < {i} + 1 := by\n  ", "decide"),
]


def write_dataset(folder: Path, per_pattern: int = 12, kinds: tuple[str, ...] = ("tactic", "proof")) -> Path:
    """tasks.jsonl + files.jsonl for a toy workspace; every 4th declaration goes to the test split."""
    folder.mkdir(parents=True, exist_ok=True)
    tasks, text = [], []
    n = 0
    for i in range(per_pattern):
        for j, (prefix, middle) in enumerate(_PROOFS):
            decl = prefix.format(i=i + 1)
            text.append(decl + middle + "\n")
            kind = kinds[n % len(kinds)]
            tasks.append(
                {
                    "id": f"task-{i}-{j}",
                    "file": "Toy.lean",
                    "decl": f"Toy.x{n}",
                    "declKind": "theorem",
                    "kind": kind,
                    "range": {"start": {"line": n, "character": 2}, "end": {"line": n, "character": 2 + len(middle)}},
                    "middle": middle,
                    "indent": 2,
                    "imports": [],
                    "split": "test" if i % 4 == 3 else "train",
                    "statement": decl.split(" := ")[0],
                    "prefix": decl,
                    "suffix": "",
                    "declStart": {"line": n, "character": 0},
                    "variables": [],
                    "offsets": {"start": 0, "end": len(middle)},
                }
            )
            n += 1
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    (folder / "files.jsonl").write_text(
        json.dumps({"file": "Toy.lean", "sha256": "0", "text": "".join(text)}) + "\n", encoding="utf-8"
    )
    return folder


@pytest.fixture(scope="session")
def toy_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("toy-dataset"))
