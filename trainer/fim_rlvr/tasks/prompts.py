"""Prompts from tasks: raw fill-in-the-middle, a chat conversation through the tokenizer's template, or an instruction.

`prompt_style` (TrainConfig) picks one; `auto` decides from the tokenizer:
- FIM when the tokenizer has the three tokens of a known family and the model is not a chat model. Families, in
  the order each was trained: Qwen2.5-Coder `<|fim_prefix|>P<|fim_suffix|>S<|fim_middle|>` (the embedded tiny model
  uses it too); StarCoder `<fim_prefix>P<fim_suffix>S<fim_middle>`; DeepSeek-Coder `<｜fim▁begin｜>P<｜fim▁hole｜>S
  <｜fim▁end｜>`; Codestral suffix first, `[SUFFIX]S[PREFIX]P`.
- chat when the tokenizer has a chat template (an instruct or prover model: Qwen2.5/Qwen3 instruct tokenizers carry
  the FIM tokens too, but were tuned to answer conversations);
- else an instruction with the hole marked `<HOLE>` in a ```lean block.
A chat model is one whose chat template ends turns with the tokenizer's own end-of-sequence token (an instruct
tokenizer's eos is its end-of-turn token, `<|im_end|>`; a base model's is `<|endoftext|>`), or whose name says
instruct, chat or prover.

`prompt_template` replaces the default text: for FIM and instruction it is the whole prompt, for chat the user's
message. Its fields are {prefix}, {suffix}, {goal}, {hole} and {kind}. `prompt_thinking` is for models that reason
before answering (prover models): nothing is pre-filled, and the candidate is the last ```lean block of the answer.

The tokenizer's BOS goes first when the tokenizer adds one to what it encodes (prompts are tokenized with
add_special_tokens=False everywhere, so the prompt text carries it). The prefix starts with the file's header
(imports, the `namespace`/`section`/`open` commands in effect, `variable`s) when the task knows it. The goal state
at the hole, when the task has one and the run asks for it, goes in as a Lean comment just above the hole's line,
whole or not at all. The prefix is fitted to the budget by prompt_context.py (statement, goal and imports kept);
the suffix is cut from the right.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..core.config import PROMPT_STYLES, template_problem
from ..core.errors import UserError
from .clean import clean_completion, final_lean_block
from .data import Task
from .prompt_context import fit_prefix, prompt_header

HOLE_MARK = "<HOLE>"


class PromptError(UserError, ValueError):
    """The prompt options do not fit this tokenizer; the message says what to change."""


@dataclass(frozen=True)
class FimConvention:
    """The special tokens of one FIM family, and the tokens that end a middle."""

    name: str
    prefix: str
    suffix: str
    middle: str
    """The token after which the model writes the middle ("" for suffix-first Codestral, which has none)."""
    stops: tuple[str, ...]
    suffix_first: bool = False
    """Codestral: `[SUFFIX]S[PREFIX]P`, the middle follows the prefix."""

    @property
    def tokens(self) -> set[str]:
        return {t for t in (self.prefix, self.suffix, self.middle) if t}


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
    FimConvention("codestral", "[PREFIX]", "[SUFFIX]", "", ("</s>", "[SUFFIX]", "[PREFIX]"), suffix_first=True),
)

INSTRUCTION_STOPS = ("```",)

DEFAULT_INSTRUCTION = (
    "Fill in the hole marked {hole} in this Lean 4 proof. Answer with only the Lean code that "
    "replaces {hole}, in one ```lean block.\n\n```lean\n{prefix}{hole}{suffix}\n```\n"
)
THINKING_INSTRUCTION = (
    "Fill in the hole marked {hole} in this Lean 4 proof. Think it through first; then give the Lean code that "
    "replaces {hole}, and only that code, in a final ```lean block.\n\n```lean\n{prefix}{hole}{suffix}\n```\n"
)
_CHAT_MODEL_NAME = re.compile(r"instruct|chat|prover|(^|[-_/])it($|[-_/])", re.IGNORECASE)


@dataclass(frozen=True)
class PromptStyle:
    """How prompts are written for one tokenizer, and how completions become candidates."""

    mode: Literal["fim", "instruction"]
    fim: FimConvention | None
    chat: bool
    """Instruction prompts go through the tokenizer's chat template."""
    stop_strings: tuple[str, ...]
    """Text that ends a completion (generation stops there; clean.py cuts there)."""
    template: str | None = None
    """prompt_template: the whole prompt (fim, instruction) or the user's message (chat)."""
    thinking: bool = False
    """The model reasons first: no pre-filled fence, the candidate is the last ```lean block."""
    bos: str = ""
    """Text put before every prompt: the tokenizer's BOS when it adds one, else ""."""

    @property
    def name(self) -> str:
        if self.mode == "fim":
            return self.fim.name if self.fim is not None else "fim-template"
        base = "chat" if self.chat else "instruction"
        return f"{base}-thinking" if self.thinking else base

    def candidate(self, raw: str, indent: int) -> str:
        """The candidate the verifier checks for a raw completion."""
        if self.thinking:
            return final_lean_block(raw, indent)
        return clean_completion(raw, indent=indent, stops=self.stop_strings, fim=self.mode == "fim")

    def sft_target(self, middle: str) -> str:
        """What the model should write for a hole whose answer is `middle` (before the end-of-sequence token)."""
        if self.mode == "fim":
            return middle
        return f"```lean\n{middle}\n```" if self.thinking else f"{middle}\n```"


def _vocab(tokenizer: Any) -> set[str]:
    vocab = set(tokenizer.get_vocab())
    vocab.update(getattr(tokenizer, "all_special_tokens", []) or [])
    return vocab


def fim_convention(tokenizer: Any) -> FimConvention | None:
    """The FIM family whose tokens the tokenizer knows, if any."""
    vocab = _vocab(tokenizer)
    return next((c for c in FIM_CONVENTIONS if c.tokens <= vocab), None)


def is_chat_model(tokenizer: Any, model_name: str | None = None) -> bool:
    """Whether the model was tuned to answer conversations (see the module docstring for the rule)."""
    template = getattr(tokenizer, "chat_template", None)
    if not template:
        return False
    if not isinstance(template, str):  # several named templates
        template = " ".join(str(t) for t in (template.values() if isinstance(template, dict) else template))
    eos = getattr(tokenizer, "eos_token", None)
    if eos and (eos in template or "eos_token" in template):
        return True
    name = model_name or getattr(tokenizer, "name_or_path", "") or ""
    return bool(_CHAT_MODEL_NAME.search(str(name)))


def bos_text(tokenizer: Any) -> str:
    """The BOS token's text when the tokenizer puts one before what it encodes (Llama, DeepSeek), else ""."""
    bos, bos_id = getattr(tokenizer, "bos_token", None), getattr(tokenizer, "bos_token_id", None)
    if not bos or bos_id is None:
        return ""
    try:
        ids = tokenizer("x", add_special_tokens=True)["input_ids"]
    except TypeError:
        return ""
    return str(bos) if ids and ids[0] == bos_id else ""


def check_template(template: str) -> None:
    """Raise PromptError unless `template` uses only the TEMPLATE_FIELDS (core.config), by name ({{ and }}: braces)."""
    problem = template_problem(template)
    if problem is not None:
        raise PromptError(problem)


def choose_style(
    tokenizer: Any,
    requested: str = "auto",
    *,
    template: str | None = None,
    thinking: bool = False,
    model_name: str | None = None,
) -> PromptStyle:
    """The PromptStyle for `tokenizer` under the run's prompt options; PromptError when they cannot work here."""
    if requested not in PROMPT_STYLES:
        raise PromptError(f"prompt_style must be one of {', '.join(PROMPT_STYLES)} (got {requested!r})")
    if template is not None:
        check_template(template)
    convention = fim_convention(tokenizer)
    has_template = bool(getattr(tokenizer, "chat_template", None))
    mode = requested
    if mode == "auto":
        if convention is not None and not is_chat_model(tokenizer, model_name) and not thinking:
            mode = "fim"
        else:
            mode = "chat" if has_template else "instruction"
    if mode == "fim" and thinking:
        raise PromptError("prompt_thinking needs chat or instruction prompts: a FIM answer is the middle itself")
    if mode == "fim" and convention is None and template is None:
        raise PromptError(
            "prompt_style fim: this tokenizer has no FIM tokens of a known family (Qwen, StarCoder, DeepSeek-Coder, "
            "Codestral); write the FIM layout in prompt_template (e.g. '<PRE>{prefix}<SUF>{suffix}<MID>'), or use "
            "prompt_style chat or instruction"
        )
    if mode == "chat" and not has_template:
        raise PromptError("prompt_style chat: this tokenizer has no chat template; use prompt_style instruction or fim")
    eos = getattr(tokenizer, "eos_token", None)
    eos_stops = (eos,) if eos else ()
    bos = bos_text(tokenizer)
    if mode == "fim":
        stops = tuple(s for s in convention.stops if s in _vocab(tokenizer)) if convention else ()
        stops = stops if not eos or eos in stops else (eos, *stops)
        return PromptStyle("fim", convention, False, stops, template, False, bos)
    stops = eos_stops if thinking else INSTRUCTION_STOPS + eos_stops
    return PromptStyle("instruction", None, mode == "chat", stops, template, thinking, bos)


def detect_style(tokenizer: Any) -> PromptStyle:
    """The `auto` style for `tokenizer`."""
    return choose_style(tokenizer)


def goal_comment(goal: str, indent: int) -> str:
    """The goal state as a Lean comment block, indented like the hole."""
    pad = " " * indent
    lines = "\n".join(f"{pad}-- {line}" if line else f"{pad}--" for line in goal.splitlines())
    return f"{pad}-- goal at the hole:\n{lines}\n"


def _goal_comment(task: Task, show_goal: bool) -> str:
    """The goal comment of a task's prompt ("" when it shows none)."""
    return goal_comment(task.goal, task.indent) if show_goal and task.goal else ""


def _headed(task: Task) -> str:
    """The task's prefix after the file's header (imports, scope, variables), as a prompt starts."""
    return prompt_header(task.imports, task.scope, task.variables) + task.prefix


def _offsets(tokenizer: Any, text: str) -> list[tuple[int, int]]:
    return [tuple(o) for o in tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]]


def fit(
    tokenizer: Any, prefix: str, suffix: str, budget: int, statement: str | None = None, goal: str = ""
) -> tuple[str, str]:
    """Prefix (with the goal comment `goal` above the hole's line) and suffix within `budget` tokens together: the
    suffix keeps at most a quarter of it, cut from the right (the text just before the hole matters most); the
    prefix is fitted by prompt_context.fit_prefix."""
    suffix_offsets = _offsets(tokenizer, suffix)
    suffix_budget = budget // 4
    if len(suffix_offsets) > suffix_budget:
        suffix = suffix[: suffix_offsets[suffix_budget - 1][1]] if suffix_budget > 0 else ""
    used = min(len(suffix_offsets), suffix_budget)

    def count(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    prefix = fit_prefix(prefix, statement, count, lambda text: _offsets(tokenizer, text), max(budget - used, 1), goal)
    return prefix, suffix


def _render(template: str, task: Task, prefix: str, suffix: str, show_goal: bool) -> str:
    goal = task.goal if show_goal and task.goal else ""
    return template.format_map({"prefix": prefix, "suffix": suffix, "goal": goal, "hole": HOLE_MARK, "kind": task.kind})


def build_prompt(task: Task, style: PromptStyle, tokenizer: Any, *, show_goal: bool, budget: int) -> str:
    """The prompt text for one task (special tokens included as text; tokenize with add_special_tokens=False)."""
    prefix, suffix = fit(tokenizer, _headed(task), task.suffix, budget, task.statement, _goal_comment(task, show_goal))
    if style.mode == "fim":
        if style.template is not None:
            return style.bos + _render(style.template, task, prefix, suffix, show_goal)
        fim = style.fim
        assert fim is not None
        if fim.suffix_first:
            return f"{style.bos}{fim.suffix}{suffix}{fim.prefix}{prefix}"
        return f"{style.bos}{fim.prefix}{prefix}{fim.suffix}{suffix}{fim.middle}"
    default = THINKING_INSTRUCTION if style.thinking else DEFAULT_INSTRUCTION
    instruction = _render(style.template or default, task, prefix, suffix, show_goal)
    if style.chat:
        messages = [{"role": "user", "content": instruction}]
        rendered = _chat(tokenizer, messages, True, style.thinking)
        if style.bos and not rendered.startswith(style.bos):
            rendered = style.bos + rendered
        return rendered if style.thinking else f"{rendered}{answer_gap(tokenizer, messages)}```lean\n"
    if style.template is not None or style.thinking:
        return style.bos + instruction
    return f"{style.bos}{instruction}\nLean code for {HOLE_MARK}:\n```lean\n"


def build_messages(
    task: Task, style: PromptStyle, tokenizer: Any, *, show_goal: bool, budget: int
) -> list[dict[str, str]]:
    """The chat prompt for one task as messages, before any chat template (the user's message of `build_prompt`'s
    chat form): for trainers that apply the template themselves, such as TRL's conversational datasets."""
    prefix, suffix = fit(tokenizer, _headed(task), task.suffix, budget, task.statement, _goal_comment(task, show_goal))
    default = THINKING_INSTRUCTION if style.thinking else DEFAULT_INSTRUCTION
    return [{"role": "user", "content": _render(style.template or default, task, prefix, suffix, show_goal)}]


def _chat(tokenizer: Any, messages: list[dict[str, str]], generation_prompt: bool, thinking: bool) -> str:
    rendered: str = tokenizer.apply_chat_template(
        messages,
        tokenize=False,
        add_generation_prompt=generation_prompt,
        enable_thinking=thinking,  # Qwen3's switch; templates without it ignore the variable
    )
    return rendered


ANSWER_PROBE = "FIMRLVRANSWER"
"""Stands for an assistant's answer when a chat template is asked how it writes one (`answer_gap`)."""


def answer_gap(tokenizer: Any, messages: list[dict[str, str]]) -> str:
    """What the chat template writes between its generation prompt and the words of an answer, when that is only
    whitespace: the pre-filled fence goes where the model's answer starts, as the template would write it. DeepSeek's
    template (DeepSeek-Prover-V1.5) ends the generation prompt with `Assistant:` and writes an answer as
    `'Assistant: ' + content`, so the fence follows a space; ChatML's `<|im_start|>assistant\n` needs nothing. "" when
    the template writes an answer some other way (Qwen3's empty think block) or cannot render one."""
    try:
        prompt = _chat(tokenizer, messages, True, False)
        written = _chat(tokenizer, [*messages, {"role": "assistant", "content": ANSWER_PROBE}], False, False)
    except Exception:  # a template that refuses an assistant turn: nothing to learn from it
        return ""
    at = written.find(ANSWER_PROBE, len(prompt))
    if not written.startswith(prompt) or at < 0:
        return ""
    gap = written[len(prompt) : at]
    return gap if gap.isspace() else ""


def build_prompts(
    tasks: Sequence[Task], style: PromptStyle, tokenizer: Any, *, show_goal: bool, budget: int
) -> list[str]:
    """Prompts for several tasks, in order."""
    return [build_prompt(t, style, tokenizer, show_goal=show_goal, budget=budget) for t in tasks]


def style_for(config: Any, tokenizer: Any) -> PromptStyle:
    """The run's PromptStyle from its TrainConfig (prompt_style, prompt_template, prompt_thinking, model)."""
    return choose_style(
        tokenizer,
        config.prompt_style,
        template=config.prompt_template,
        thinking=config.prompt_thinking,
        model_name=config.model,
    )
