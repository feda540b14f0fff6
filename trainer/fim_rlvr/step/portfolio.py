"""The data-matched SFT arm's data: the reference proofs plus the fixed portfolio's verified proofs of the training
split's open goals.

The SFT arm learns from the tasks that have a proof; RL and expert iteration also practise, with the verifier, on the
open goals (`reference: false`). To tell what the verifier's answers add from what a fixed prover would have told
the model about the same goals, this arm gets, for every open goal of the training split, the proof the fixed
portfolio (TrainConfig.portfolio, the tactics bench/portfolio.ts tries as `first | ...`) finds for it, checked by the
run's own verifier (on the real-Lean workspace, Lean). The tactics are tried one at a time, in order, on the goals
still open: a goal's proof is the first tactic that proves it by itself. That proves every goal `first | ...` proves
and a few more (`first` commits to an alternative that succeeds without closing the goal, where a later one alone
would have closed it), so the arm is never short of what the portfolio knows.

The arm then trains exactly like the SFT arm (step/sft.py, as many sequences as RL trains on), on this larger set.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.protocol import VerifyItem
from ..tasks.data import Task
from ..verifier.check import Verifier, send


@dataclass(frozen=True)
class PortfolioProofs:
    """What the portfolio found on the open goals."""

    proofs: dict[str, str]
    """Task id -> the first tactic of the portfolio that proved it, for the open goals it proved."""
    open_goals: int
    """Training tasks without a reference proof (the goals tried)."""
    checks: int
    """Candidates sent to the verifier (each tactic on each goal still open when its turn came)."""


def portfolio_proofs(
    tasks: Sequence[Task],
    tactics: Sequence[str],
    verifier: Verifier,
    *,
    silence_s: float,
    stop: threading.Event | None = None,
) -> PortfolioProofs:
    """The portfolio's verified proofs of the open goals among `tasks` (`reference` false): one verifier batch per
    tactic, on the goals no earlier tactic proved. Only a `proved` verdict counts (a masked or partial one does not)."""
    remaining = [t for t in tasks if not t.reference]
    goals = len(remaining)
    proofs: dict[str, str] = {}
    checks = 0
    for tactic in tactics:
        if not remaining:
            break
        items: list[VerifyItem] = [{"taskId": t.id, "candidate": tactic} for t in remaining]
        verdicts, _ = send(verifier, items).collect(verifier, silence_s, stop)
        checks += len(items)
        for task, verdict in zip(remaining, verdicts, strict=True):
            if verdict.kind == "proved":
                proofs[task.id] = tactic
        remaining = [t for t in remaining if t.id not in proofs]
    return PortfolioProofs(proofs, goals, checks)


def data_matched_tasks(tasks: Sequence[Task], found: PortfolioProofs) -> list[Task]:
    """The SFT data of the data-matched arm, in the tasks' order: every task with a reference proof as it is, and
    every open goal the portfolio proved with that proof as its middle. Open goals it did not prove are left out
    (their `sorry` is no proof)."""
    out: list[Task] = []
    for task in tasks:
        if task.reference:
            out.append(task)
        elif task.id in found.proofs:
            out.append(task.with_proof(found.proofs[task.id]))
    return out


def portfolio_line(found: PortfolioProofs, references: int, trained: str) -> str:
    """Said before `trained` (the warm start, or the data-matched arm) trains on the portfolio's proofs."""
    return (
        f"{trained}: the fixed portfolio proved {len(found.proofs)} of the {found.open_goals} training open "
        f"goals ({found.checks} checks by the run's verifier); SFT on them and the {references} reference proofs"
    )
