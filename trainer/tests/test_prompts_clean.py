"""Prompts for each FIM convention and the instruction fallback; completion cleaning."""

from __future__ import annotations

from typing import Any

import pytest

from fim_rlvr.tasks.clean import clean_completion, cut_at_stops, reindent, strip_fence
from fim_rlvr.tasks.data import Task
from fim_rlvr.tasks.prompts import build_prompt, detect_style


class WordTokenizer:
    """A stand-in tokenizer: one token per character, a configurable vocabulary of special tokens."""

    def __init__(self, specials: list[str], chat_template: str | None = None, eos: str = "</s>") -> None:
        self.specials = specials
        self.chat_template = chat_template
        self.eos_token = eos
        self.all_special_tokens = [eos, *specials]

    def get_vocab(self) -> dict[str, int]:
        return {token: i for i, token in enumerate(["a", *self.all_special_tokens])}

    def __call__(self, text: str, add_special_tokens: bool = False, return_offsets_mapping: bool = False) -> Any:
        return {"input_ids": [ord(c) for c in text], "offset_mapping": [(i, i + 1) for i in range(len(text))]}

    def apply_chat_template(
        self, messages: list[dict[str, str]], tokenize: bool, add_generation_prompt: bool, **_: Any
    ) -> str:
        return f"<user>{messages[0]['content']}</user><assistant>"


TASK = Task(
    id="t1",
    file="A.lean",
    kind="tactic",
    split="test",
    prefix="theorem x : 1 = 1 := by\n  ",
    suffix="\n  done",
    middle="rfl",
    indent=2,
    hole={"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 5}},
    goal="⊢ 1 = 1",
)


@pytest.mark.parametrize(
    ("specials", "expected"),
    [
        (
            ["<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"],
            "<|fim_prefix|>theorem x : 1 = 1 := by\n  <|fim_suffix|>\n  done<|fim_middle|>",
        ),
        (
            ["<fim_prefix>", "<fim_suffix>", "<fim_middle>"],
            "<fim_prefix>theorem x : 1 = 1 := by\n  <fim_suffix>\n  done<fim_middle>",
        ),
        (
            ["<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"],
            "<｜fim▁begin｜>theorem x : 1 = 1 := by\n  <｜fim▁hole｜>\n  done<｜fim▁end｜>",
        ),
    ],
)
def test_each_fim_convention(specials: list[str], expected: str) -> None:
    tokenizer = WordTokenizer(specials)
    style = detect_style(tokenizer)
    assert style.mode == "fim"
    assert build_prompt(TASK, style, tokenizer, show_goal=False, budget=1000) == expected


def test_instruction_fallback_marks_the_hole() -> None:
    tokenizer = WordTokenizer([])
    style = detect_style(tokenizer)
    assert style.mode == "instruction" and not style.chat
    prompt = build_prompt(TASK, style, tokenizer, show_goal=False, budget=1000)
    assert "theorem x : 1 = 1 := by\n  <HOLE>\n  done" in prompt
    assert prompt.endswith("```lean\n")
    chat = detect_style(WordTokenizer([], chat_template="{{ messages }}"))
    assert chat.chat
    assert build_prompt(TASK, chat, WordTokenizer([], "x"), show_goal=False, budget=1000).startswith("<user>Fill in")


def test_goal_goes_in_as_a_comment_before_the_hole_line() -> None:
    tokenizer = WordTokenizer(["<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"])
    prompt = build_prompt(TASK, detect_style(tokenizer), tokenizer, show_goal=True, budget=1000)
    assert "theorem x : 1 = 1 := by\n  -- goal at the hole:\n  -- ⊢ 1 = 1\n  <|fim_suffix|>" in prompt
    assert "goal at the hole" not in build_prompt(
        TASK, detect_style(tokenizer), tokenizer, show_goal=False, budget=1000
    )


def test_the_budget_cuts_prefix_from_the_left_and_suffix_from_the_right() -> None:
    tokenizer = WordTokenizer(["<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"])
    prompt = build_prompt(TASK, detect_style(tokenizer), tokenizer, show_goal=False, budget=12)
    # suffix keeps 12 // 4 = 3 characters, the prefix the last 9
    assert prompt == "<|fim_prefix|> := by\n  <|fim_suffix|>\n  <|fim_middle|>"


def test_stops_and_fences() -> None:
    assert cut_at_stops("omega<|endoftext|>junk", ["<|endoftext|>", "<|fim_pad|>"]) == "omega"
    assert cut_at_stops("a<|fim_pad|>b<|endoftext|>", ["<|endoftext|>", "<|fim_pad|>"]) == "a"
    assert strip_fence("```lean\nsimp\n```\nmore") == ("simp\n", True)
    assert strip_fence("simp") == ("simp", False)


def test_fim_completion_keeps_absolute_columns() -> None:
    raw = "have h : a < b := by omega\n  exact h<|endoftext|>"
    assert clean_completion(raw, indent=2, stops=["<|endoftext|>"], fim=True) == "have h : a < b := by omega\n  exact h"


def test_fenced_block_from_column_zero_is_reindented_to_the_hole() -> None:
    raw = "```lean\nconstructor\n· simp\n· omega\n```"
    assert clean_completion(raw, indent=4, stops=["```"], fim=False) == "constructor\n    · simp\n    · omega"


def test_instruction_completion_ends_at_the_closing_fence() -> None:
    raw = "  intro h\n  exact h\n```\nExplanation: ..."
    assert clean_completion(raw, indent=2, stops=["```"], fim=False) == "intro h\n  exact h"


def test_blank_and_whitespace_only_completions() -> None:
    assert clean_completion("\n\n   \n", indent=2, stops=[], fim=True) == ""
    assert clean_completion("\n\n    simp\n    rfl\n", indent=2, stops=[], fim=True) == "simp\n  rfl"
    assert clean_completion("simp\trfl  \r\n", indent=0, stops=[], fim=True) == "simp  rfl"


def test_reindent_never_removes_more_than_the_leading_spaces() -> None:
    assert reindent("a\n b\n      c", indent=0, first_line_column=4) == "a\nb\n  c"
