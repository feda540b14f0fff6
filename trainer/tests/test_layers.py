"""fim_rlvr is layered as the host is: every module imports only layers below its own (or its own folder), and the
import graph has no cycle. Every import counts, at module level, inside a function or under TYPE_CHECKING: a lazy
import that climbs a layer is still a dependency on it.

    core/          protocol messages, the masking rule, the run's config, user errors       (no torch)
    tasks/         the dataset, prompts, cleaning, repair prompts, curriculum               (no torch)
    algorithms/    the objectives as pure tensor functions (public: fim_rlvr.algorithms.make)
    model/         policy, adapters, precision, rollouts, log-probs, checkpoints on disk, exports
    verifier/      the verifier service's client, waiting on a check
    step/          one RL step as functions of explicit inputs (sample, check, score, loss, metrics), SFT
    run/           the Trainer, its files, measurements, the stdio server, the ranks
    integrations/  TRL and verl: reward functions and dataset rows
    fim_rlvr/*.py  entry points (`python -m fim_rlvr`); fim_rlvr/__init__.py holds the version and is below all

Folders of the same rank (tasks and algorithms; model and verifier) do not import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "fim_rlvr"

RANKS = {
    "core": 0,
    "tasks": 1,
    "algorithms": 1,
    "model": 2,
    "verifier": 2,
    "step": 3,
    "run": 4,
    "integrations": 5,
    "": 6,  # the package root's entry points: __main__
    "fim_rlvr": -1,  # the package itself (__init__: the version, nothing else)
}
"""Each folder's layer; a module may import its own folder and folders of a lower rank."""

NO_TORCH = ("core", "tasks")
"""Layers that must not import torch (the host's Python checks and listings need none)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def folder_of(module: str) -> str:
    """The layer folder of `fim_rlvr.X.Y` ("" for the package root's own modules)."""
    parts = module.split(".")
    if len(parts) < 2:
        return "fim_rlvr"
    candidate = parts[1]
    return candidate if candidate in RANKS else ""


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(source: str, name: str, is_package: bool, known: set[str]) -> set[str]:
    """The fim_rlvr modules that module `name` (with `source`) imports; a package import counts as its __init__."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("fim_rlvr"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module and node.module.startswith("fim_rlvr"):
                target = node.module
            else:
                continue
            for alias in node.names:  # `from . import x` names a module when x is one
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    return {m for m in found if m in known and m != name}


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {
        name: imports_of(path.read_text(encoding="utf-8"), name, path.name == "__init__.py", known)
        for name, path in mods.items()
    }


def climbing(edges: dict[str, set[str]]) -> list[str]:
    """Every import of a layer above (or beside) the importer's own."""
    offenders = []
    for name, targets in sorted(edges.items()):
        own = folder_of(name)
        for target in sorted(targets):
            other = folder_of(target)
            if other != own and RANKS[other] >= RANKS[own]:
                offenders.append(f"{name} ({own or 'root'}) imports {target} ({other or 'root'})")
    return offenders


def test_every_folder_of_the_package_has_a_layer() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert folders <= set(RANKS), f"give {sorted(folders - set(RANKS))} a rank in RANKS (and docs/ARCHITECTURE.md)"


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert climbing(graph()) == []


def test_the_import_graph_has_no_cycle() -> None:
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)) is not None:
            raise AssertionError("import cycle: " + " -> ".join(cycle))


def test_core_and_tasks_import_no_torch() -> None:
    offenders = []
    for name, path in modules().items():
        if folder_of(name) not in NO_TORCH:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            offenders += [f"{name} imports {n}" for n in names if n.split(".")[0] == "torch"]
    assert offenders == []


def test_the_checker_sees_a_lazy_climbing_import_and_a_sibling_import() -> None:
    """The rule can fail: an import inside a function that climbs from core/ to run/, and one from model/ into its
    sibling verifier/, are both reported."""
    known = {"fim_rlvr.core.config", "fim_rlvr.run.trainer", "fim_rlvr.model.policy", "fim_rlvr.verifier.check"}
    lazy = "def f():\n    from ..run.trainer import Trainer\n    return Trainer\n"
    sibling = "from fim_rlvr.verifier import check\n"
    edges = {
        "fim_rlvr.core.config": imports_of(lazy, "fim_rlvr.core.config", False, known),
        "fim_rlvr.model.policy": imports_of(sibling, "fim_rlvr.model.policy", False, known),
    }
    assert climbing(edges) == [
        "fim_rlvr.core.config (core) imports fim_rlvr.run.trainer (run)",
        "fim_rlvr.model.policy (model) imports fim_rlvr.verifier.check (verifier)",
    ]
