"""Prompts from tasks: the tokenizer's own fill-in-the-middle tokens when it has them, else an instruction.

FIM conventions (prefix-suffix-middle order, as each family was trained):
- Qwen2.5-Coder: `<|fim_prefix|>P<|fim_suffix|>S<|fim_middle|>` (the embedded tiny model uses this one too);
- StarCoder / SantaCoder: `<fim_prefix>P<fim_suffix>S<fim_middle>`;
- DeepSeek-Coder: `<｜fim▁begin｜>P<｜fim▁hole｜>S<｜fim▁end｜>`.
A model without FIM tokens gets an instruction with the hole marked inside a ```lean block (through the chat
template when the tokenizer has one). The goal state at the hole, when the task carries it and the run asks
for it, goes in as a Lean comment: no peer can show the model the hole's own goal; we can.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .data import Task

HOLE_MARK = "<HOLE>"


@dataclass(frozen=True)
class FimConvention:
    """The three special tokens of one FIM family, and the tokens that end a middle."""

    name: str
    prefix: str
    suffix: str
    middle: str
    stops: tuple[str, ...]


FIM_CONVENTIONS: tuple[FimConvention, ...] = (
    FimConvention(
        "qwen",
        "<|fim_prefix|>",
        "<|fim_suffix|>",
        "<|fim_middle|>",
        ("<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|repo_name|>", "<|fim_prefix|>", "<|im_end|>"),
    ),
    FimConvention(
        "starcoder",
        "<fim_prefix>",
        "<fim_suffix>",
        "<fim_middle>",
        ("<|endoftext|>", "<fim_pad>", "<file_sep>", "<fim_prefix>"),
    ),
    FimConvention(
        "deepseek",
        "<｜fim▁begin｜>",
        "<｜fim▁hole｜>",
        "<｜fim▁end｜>",
        ("<｜end▁of▁sentence｜>", "<|EOT|>", "<｜fim▁begin｜>"),
    ),
)

INSTRUCTION_STOPS = ("```",)


@dataclass(frozen=True)
class PromptStyle:
    """How prompts are written for one tokenizer."""

    mode: Literal["fim", "instruction"]
    fim: FimConvention | None
    chat: bool
    """Instruction prompts go through the tokenizer's chat template."""
    stop_strings: tuple[str, ...]
    """Text that ends a completion (cut by clean.py)."""

    @property
    def name(self) -> str:
        return self.fim.name if self.fim else ("instruction-chat" if self.chat else "instruction")


def _vocab(tokenizer: Any) -> set[str]:
    vocab = set(tokenizer.get_vocab())
    vocab.update(getattr(tokenizer, "all_special_tokens", []) or [])
    return vocab


def detect_style(tokenizer: Any) -> PromptStyle:
    """The FIM convention whose three tokens the tokenizer knows, else the instruction style."""
    vocab = _vocab(tokenizer)
    for convention in FIM_CONVENTIONS:
        if {convention.prefix, convention.suffix, convention.middle} <= vocab:
            stops = tuple(s for s in convention.stops if s in vocab)
            eos = getattr(tokenizer, "eos_token", None)
            if eos and eos not in stops:
                stops = (eos, *stops)
            return PromptStyle("fim", convention, False, stops)
    chat = bool(getattr(tokenizer, "chat_template", None))
    eos = getattr(tokenizer, "eos_token", None)
    return PromptStyle("instruction", None, chat, INSTRUCTION_STOPS + ((eos,) if eos else ()))


def goal_comment(goal: str, indent: int) -> str:
    """The goal state as a Lean comment block, indented like the hole."""
    pad = " " * indent
    lines = "\n".join(f"{pad}-- {line}" if line else f"{pad}--" for line in goal.splitlines())
    return f"{pad}-- goal at the hole:\n{lines}\n"


def _with_goal(task: Task, show_goal: bool) -> str:
    """The prefix, with the goal comment inserted on its own lines just before the hole's line."""
    if not (show_goal and task.goal):
        return task.prefix
    head, sep, hole_line = task.prefix.rpartition("\n")
    comment = goal_comment(task.goal, task.indent)
    return f"{head}{sep}{comment}{hole_line}" if sep else f"{comment}{hole_line}"


def fit(tokenizer: Any, prefix: str, suffix: str, budget: int) -> tuple[str, str]:
    """Cut the prefix from the left and the suffix from the right (at token boundaries) to fit `budget` tokens.

    The suffix keeps at most a quarter of the budget: the text just before the hole matters most."""
    suffix_ids = tokenizer(suffix, add_special_tokens=False, return_offsets_mapping=True)
    suffix_budget = budget // 4
    if len(suffix_ids["input_ids"]) > suffix_budget:
        end = suffix_ids["offset_mapping"][suffix_budget - 1][1] if suffix_budget > 0 else 0
        suffix = suffix[:end]
    used = min(len(suffix_ids["input_ids"]), suffix_budget)
    prefix_ids = tokenizer(prefix, add_special_tokens=False, return_offsets_mapping=True)
    keep = max(budget - used, 1)
    if len(prefix_ids["input_ids"]) > keep:
        start = prefix_ids["offset_mapping"][len(prefix_ids["input_ids"]) - keep][0]
        prefix = prefix[start:]
    return prefix, suffix


def build_prompt(task: Task, style: PromptStyle, tokenizer: Any, *, show_goal: bool, budget: int) -> str:
    """The prompt text for one task (special tokens included as text; tokenize with add_special_tokens=False)."""
    prefix, suffix = fit(tokenizer, _with_goal(task, show_goal), task.suffix, budget)
    if style.fim is not None:
        fim = style.fim
        return f"{fim.prefix}{prefix}{fim.suffix}{suffix}{fim.middle}"
    instruction = (
        f"Fill in the hole marked {HOLE_MARK} in this Lean 4 proof. Answer with only the Lean code that "
        f"replaces {HOLE_MARK}, in one ```lean block.\n\n```lean\n{prefix}{HOLE_MARK}{suffix}\n```\n"
    )
    if style.chat:
        rendered = tokenizer.apply_chat_template(
            [{"role": "user", "content": instruction}], tokenize=False, add_generation_prompt=True
        )
        return f"{rendered}```lean\n"
    return f"{instruction}\nLean code for {HOLE_MARK}:\n```lean\n"


def build_prompts(
    tasks: Sequence[Task], style: PromptStyle, tokenizer: Any, *, show_goal: bool, budget: int
) -> list[str]:
    """Prompts for several tasks, in order."""
    return [build_prompt(t, style, tokenizer, show_goal=show_goal, budget=budget) for t in tasks]
