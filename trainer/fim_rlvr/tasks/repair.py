"""The repair prompt (`repair_turns`): a failed candidate shown back to the model with what the verifier said.

One format for evaluation and training: this is the Python mirror of lean-bridge/eval/repair.ts (`--repair R` of
`fim-rlvr eval`), byte for byte (test/eval/repairParity.test.ts runs both on the same verdicts). Both read the
verdict as the wire carries it, a BatchVerdict's kind and diagnostics: the errors (severity 1), each once and at
most three, with positions relative to the candidate (line 1 is its first line, columns in UTF-16 units as Lean
gives them) or "outside the attempt"; then the goals Lean states in the first error's message (an "unsolved
goals" error states them below its first line). The block is Lean comments just above the hole's line, where
prompts.py puts the goal comment, so it reads the same in FIM, chat and instruction prompts and prefix fitting
keeps it (the text nearest the hole is kept first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .data import Task

REPAIR_HEADER = "previous attempt, which Lean did not accept:"
MAX_ERRORS = 3
MAX_MESSAGE_LINES = 12
MAX_CANDIDATE_LINES = 40


def feedback_lines(kind: str, diagnostics: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the verifier said about a candidate, one line each (repair.ts's feedbackLines)."""
    lines: list[str] = []
    seen: set[tuple[str, str]] = set()
    goals: list[str] | None = None
    for diagnostic in diagnostics:
        if diagnostic.get("severity") != 1:
            continue
        message = str(diagnostic.get("message", ""))
        at = diagnostic.get("candidateRange")
        where = f"at {at['start']['line'] + 1}:{at['start']['character'] + 1}" if at else "outside the attempt"
        if (where, message) in seen:
            continue
        seen.add((where, message))
        if len(seen) > MAX_ERRORS:
            break
        parts = message.split("\n")
        lines.append(f"error {where}: {parts[0]}")
        if len(seen) == 1 and "⊢" in message:
            goals = parts[1 : MAX_MESSAGE_LINES + 1]
            continue
        lines.extend(f"  {more}" for more in parts[1:MAX_MESSAGE_LINES])
    if not lines:
        lines.append("no answer within the time limit" if kind == "timeout" else kind)
    if goals is not None:
        lines.append("goals at the first error:")
        lines.extend(f"  {goal}" for goal in goals)
    return lines


def repair_prefix(prefix: str, indent: int, candidate: str, kind: str, diagnostics: Sequence[Mapping[str, Any]]) -> str:
    """`prefix` with the last attempt and the verifier's feedback as comments just above the hole's line."""
    pad = " " * indent

    def comment(text: str) -> str:
        return f"{pad}-- {text}".rstrip(" \t\r")  # the same set repair.ts trims

    attempt = candidate.split("\n")[:MAX_CANDIDATE_LINES]
    block = "\n".join(
        [
            comment(REPAIR_HEADER),
            *(comment(f"  {line}") for line in attempt),
            comment("Lean said:"),
            *(comment(f"  {line}") for line in feedback_lines(kind, diagnostics)),
        ]
    )
    line_start = prefix.rfind("\n") + 1
    return f"{prefix[:line_start]}{block}\n{prefix[line_start:]}"


def repair_task(task: Task, candidate: str, kind: str, diagnostics: Sequence[Mapping[str, Any]]) -> Task:
    """The task of a repair turn: the same hole, its prefix carrying the last attempt and the feedback."""
    return Task(
        task.id,
        task.file,
        task.kind,
        task.split,
        repair_prefix(task.prefix, task.indent, candidate, kind, diagnostics),
        task.suffix,
        task.middle,
        task.indent,
        task.hole,
        task.goal,
        novel=task.novel,
        statement=task.statement,
        imports=task.imports,
        scope=task.scope,
        variables=task.variables,
        reference=task.reference,
    )
