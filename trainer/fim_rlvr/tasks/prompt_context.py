"""Fitting a hole's prefix to the prompt budget without losing what the model needs most.

A task's `prefix` is the text before the hole: at least the declaration (its statement, `:= by`, earlier steps);
a dataset may also carry the file's context before it (imports, `open`s, earlier lemmas). When it does not fit,
cutting from the left (what the trainer used to do) first loses the imports and then the statement: the model
would be asked to prove something it cannot see. Here the prefix is cut by priority instead:

1. the statement of the hole's own declaration, always (up to and including the line that holds its `:=`);
2. the preamble: `import`, `open`, `namespace`, `section`, `variable`, `universe`, `set_option` lines, in file
   order, up to a quarter of the budget (imports first);
3. the declaration's text between the statement and the hole, nearest the hole first (whole lines);
4. earlier lemmas and comments, the most recent first, each whole or not at all.

What is kept stays in file order. A statement longer than the whole budget is the one case that still cuts from
the left (nothing better fits). The result is never longer than the budget (checked with the real tokenizer).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Count = Callable[[str], int]
"""Tokens in a text (the run's tokenizer, no special tokens added)."""

_PREAMBLE = re.compile(
    r"^(import|open|namespace|section|end|variable|universe|universes|set_option|noncomputable\s+section|export)\b"
)
_DECLARATION = re.compile(
    r"^(@\[[^\]]*\]\s*)?((private|protected|noncomputable|partial|unsafe|nonrec)\s+)*"
    r"(theorem|lemma|def|example|instance|abbrev|structure|inductive|class|opaque|axiom)\b"
)
_CHUNK_START = re.compile(r"^(@\[|/-|--)")


@dataclass(frozen=True)
class PrefixParts:
    """A prefix taken apart: `head` items before the declaration, then the statement, then the body."""

    head: list[tuple[bool, str]]
    """(is_preamble, text) in file order; each text ends with a newline. Non-preamble items are earlier chunks."""
    statement: str
    """The hole's declaration from its first line through the line that holds its `:=`."""
    body: str
    """The declaration's text after the statement, up to the hole."""


def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


def _declaration_start(prefix: str, statement: str | None) -> int:
    """Where the hole's declaration begins: the line of the task's `statement` when the prefix holds it, else the
    last line that starts a declaration, else 0 (the prefix is the declaration)."""
    if statement:
        at = prefix.rfind(statement.strip())
        if at >= 0:
            return _line_start(prefix, at)
    start = 0
    offset = 0
    for line in prefix.splitlines(keepends=True):
        if _DECLARATION.match(line):
            start = offset
        offset += len(line)
    return start


def _statement_end(declaration: str, statement: str | None) -> int:
    """End of the statement part of `declaration`: the end of the line holding the first `:=` after the statement
    text (or of the first line when there is none)."""
    search_from = 0
    if statement and statement.strip() in declaration:
        search_from = declaration.index(statement.strip()) + len(statement.strip())
    assign = declaration.find(":=", search_from)
    anchor = assign if assign >= 0 else search_from
    newline = declaration.find("\n", anchor)
    return len(declaration) if newline < 0 else newline + 1


def _head_items(head: str) -> list[tuple[bool, str]]:
    """The text before the declaration as preamble lines and earlier chunks (a chunk starts at a column-0 line that
    begins a declaration, an attribute or a comment, or at a column-0 line after a blank line)."""
    items: list[tuple[bool, str]] = []
    chunk: list[str] = []
    previous_blank = True

    def close() -> None:
        if chunk:
            items.append((False, "".join(chunk)))
            chunk.clear()

    for line in head.splitlines(keepends=True):
        stripped = line.rstrip("\n")
        if _PREAMBLE.match(stripped) and not stripped.rstrip().endswith(" in"):  # `open X in` belongs to what follows
            close()
            items.append((True, line))
            previous_blank = False
            continue
        at_column_0 = bool(stripped) and not stripped[0].isspace()
        starts = at_column_0 and (previous_blank or _DECLARATION.match(stripped) or _CHUNK_START.match(stripped))
        # An attribute, a doc comment or `open X in` directly above a declaration stays with it.
        if starts and not (chunk and _DECLARATION.match(stripped) and _attaches(chunk[-1])):
            close()
        chunk.append(line)
        previous_blank = not stripped.strip()
    close()
    return items


def _attaches(line: str) -> bool:
    text = line.strip()
    return text.startswith("@[") or (text.startswith("open ") and text.endswith(" in")) or text.endswith("-/")


def split_prefix(prefix: str, statement: str | None = None) -> PrefixParts:
    """Take a prefix apart into its head items, the statement and the body."""
    start = _declaration_start(prefix, statement)
    declaration = prefix[start:]
    end = _statement_end(declaration, statement)
    return PrefixParts(_head_items(prefix[:start]), declaration[:end], declaration[end:])


def _tail_lines(text: str, count: Count, budget: int) -> str:
    """The longest run of whole lines at the end of `text` within `budget` tokens ("" when not even the last)."""
    lines = text.splitlines(keepends=True)
    kept = ""
    for line in reversed(lines):
        candidate = line + kept
        if count(candidate) > budget:
            break
        kept = candidate
    return kept


def cut_left(text: str, tokenizer_offsets: Callable[[str], list[tuple[int, int]]], keep: int) -> str:
    """The last `keep` tokens of `text`, cut at a token boundary."""
    offsets = tokenizer_offsets(text)
    if len(offsets) <= keep:
        return text
    return text[offsets[len(offsets) - keep][0] :] if keep > 0 else ""


def fit_prefix(
    prefix: str,
    statement: str | None,
    count: Count,
    offsets: Callable[[str], list[tuple[int, int]]],
    budget: int,
) -> str:
    """`prefix` within `budget` tokens, kept by the priorities in the module docstring."""
    if count(prefix) <= budget:
        return prefix
    parts = split_prefix(prefix, statement)
    statement_tokens = count(parts.statement)
    if statement_tokens >= budget:
        return cut_left(parts.statement + parts.body, offsets, budget)
    left = budget - statement_tokens
    keep: set[int] = set()
    preamble_budget = min(left, budget // 4)
    for index, (is_preamble, text) in enumerate(parts.head):  # imports first, in file order
        tokens = count(text)
        if is_preamble and tokens <= preamble_budget:
            keep.add(index)
            preamble_budget -= tokens
            left -= tokens
        elif is_preamble:
            break
    body = parts.body if count(parts.body) <= left else _tail_lines(parts.body, count, left)
    if not body and parts.body:  # not even the hole's own line fits whole: its end, at a token boundary
        body = cut_left(parts.body, offsets, left)
    left -= count(body)
    earlier = [i for i, (is_preamble, _) in enumerate(parts.head) if not is_preamble]
    if body == parts.body:  # earlier lemmas only once the whole declaration is in
        for index in reversed(earlier):
            tokens = count(parts.head[index][1])
            if tokens <= left:
                keep.add(index)
                left -= tokens
    fitted = _assemble(parts, keep, body)
    while count(fitted) > budget and keep & set(earlier):  # pieces counted apart can tokenise longer together
        keep.discard(min(keep & set(earlier)))
        fitted = _assemble(parts, keep, body)
    if count(fitted) > budget:
        fitted = cut_left(fitted, offsets, budget)
    return fitted


def _assemble(parts: PrefixParts, keep: set[int], body: str) -> str:
    """The kept head items in file order, the statement, the kept body."""
    return "".join(text for index, (_, text) in enumerate(parts.head) if index in keep) + parts.statement + body
