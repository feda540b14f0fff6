"""Completion cleaning: what the model wrote -> the candidate the verifier checks.

Three things go wrong with raw completions: they run past the hole (stop tokens, a closing fence, a repeated
FIM token), they arrive wrapped in a ```lean fence, and their later lines sit at the wrong column. The hole's
first line starts at column `indent` (the prefix already holds that indentation), so continuation lines must be
at absolute columns: a block written from column 0 is shifted right by the hole's indentation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_FENCE_OPEN = re.compile(r"^\s*```[A-Za-z0-9_+-]*[ \t]*\n")


def cut_at_stops(text: str, stops: Sequence[str]) -> str:
    """The text before the earliest stop string."""
    end = len(text)
    for stop in stops:
        if stop:
            at = text.find(stop)
            if at != -1:
                end = min(end, at)
    return text[:end]


def strip_fence(text: str) -> tuple[str, bool]:
    """Remove a ```lean ... ``` wrapper; returns (text, whether one was there)."""
    match = _FENCE_OPEN.match(text)
    if not match:
        return text, False
    body = text[match.end() :]
    close = body.find("```")
    return (body if close == -1 else body[:close]), True


def _leading_spaces(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def reindent(text: str, indent: int, first_line_column: int) -> str:
    """Put the first line at the hole and shift later lines by (indent - first_line_column), keeping their layout.

    `first_line_column` is where the first line stood in the completion's own coordinates: `indent` for a FIM
    completion (it continues the prefix), its leading spaces for a fenced block."""
    lines = text.split("\n")
    lines[0] = lines[0].lstrip(" ")
    shift = indent - first_line_column
    out = [lines[0]]
    for line in lines[1:]:
        if not line.strip():
            out.append("")
        elif shift >= 0:
            out.append(" " * shift + line)
        else:
            out.append(line[min(-shift, _leading_spaces(line)) :])
    return "\n".join(out)


def clean_completion(raw: str, *, indent: int, stops: Sequence[str], fim: bool) -> str:
    """The candidate for a raw completion: stops cut, fences stripped, tabs expanded, lines re-indented."""
    text = raw.replace("\r\n", "\n").replace("\t", "  ")
    fenced_in = False
    if not fim or _FENCE_OPEN.match(text):
        text, fenced_in = strip_fence(text)
    text = text.replace("```", "") if fenced_in else cut_at_stops(text, stops)
    # Leading blank lines carry no code; trailing whitespace would only change the verifier's ranges.
    lines = text.split("\n")
    dropped = 0
    while len(lines) > 1 and not lines[0].strip():
        lines.pop(0)
        dropped += 1
    text = "\n".join(lines).rstrip()
    if not text.strip():
        return ""
    continues_prefix = fim and not fenced_in and dropped == 0
    first_column = indent if continues_prefix else _leading_spaces(text.split("\n", 1)[0])
    return reindent(text, indent, first_column)


_LEAN_BLOCK = re.compile(r"```[ \t]*lean4?[ \t]*\n(.*?)```", re.DOTALL)
_THINK_END = "</think>"


def final_lean_block(raw: str, indent: int) -> str:
    """A reasoning model's answer: the last closed ```lean (or ```lean4) block after its thinking (after `</think>`
    when there is one), re-indented to the hole. "" when there is none: an unfinished answer proves nothing."""
    text = raw.replace("\r\n", "\n").replace("\t", "  ")
    if _THINK_END in text:
        text = text[text.rindex(_THINK_END) + len(_THINK_END) :]
    blocks = _LEAN_BLOCK.findall(text)
    if not blocks:
        return ""
    lines = blocks[-1].split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    body = "\n".join(lines).rstrip()
    if not body.strip():
        return ""
    return reindent(body, indent, _leading_spaces(body.split("\n", 1)[0]))
