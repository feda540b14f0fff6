"""Prompt styles on a tiny instruct-style tokenizer built here (FIM tokens and a chat template, like Qwen2.5/Qwen3
instruct): auto's choice, each explicit style, templates, thinking answers, BOS, the goal and the file context."""

from __future__ import annotations

import pytest
import tiny_chat

from fim_rlvr.model.rollout import TransformersBackend
from fim_rlvr.tasks.data import Task
from fim_rlvr.tasks.prompts import PromptError, build_prompt, choose_style, fim_convention, is_chat_model


def make_task(
    prefix: str = "theorem t (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by\n  ",
    goal: str | None = "a b : Nat\nh : a ≤ b\n⊢ a + 1 ≤ b + 1",
) -> Task:
    return Task(
        id="t1",
        file="A.lean",
        kind="tactic",
        split="test",
        prefix=prefix,
        suffix="\n  done",
        middle="omega",
        indent=2,
        hole={"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 7}},
        goal=goal,
        statement="theorem t (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1",
    )


TASK = make_task()


@pytest.fixture(scope="module")
def instruct() -> object:
    return tiny_chat.tokenizer()


def test_auto_takes_chat_for_an_instruct_tokenizer_and_fim_for_a_base_one(instruct: object) -> None:
    assert fim_convention(instruct) is not None and is_chat_model(instruct)
    assert choose_style(instruct).chat  # FIM tokens too, but the model answers conversations
    base = tiny_chat.tokenizer(eos="<|endoftext|>")  # a base model: same template, eos is not the end of a turn
    assert not is_chat_model(base)
    assert choose_style(base).name == "qwen"
    assert choose_style(base, model_name="/models/Qwen2.5-Coder-7B-Instruct").chat  # the name says instruct
    assert choose_style(tiny_chat.tokenizer(eos="<|endoftext|>", chat_template=None)).name == "qwen"
    assert choose_style(base, thinking=True).name == "chat-thinking"  # a reasoning answer cannot be a FIM middle


def test_each_explicit_style_on_the_same_tokenizer(instruct: object) -> None:
    fim = build_prompt(TASK, choose_style(instruct, "fim"), instruct, show_goal=False, budget=1000)
    assert fim == f"<|fim_prefix|>{TASK.prefix}<|fim_suffix|>{TASK.suffix}<|fim_middle|>"
    chat = build_prompt(TASK, choose_style(instruct, "chat"), instruct, show_goal=False, budget=1000)
    assert chat.startswith("<|im_start|>user\nFill in the hole marked <HOLE>")
    assert f"```lean\n{TASK.prefix}<HOLE>{TASK.suffix}\n```" in chat
    assert chat.endswith("<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n```lean\n")  # thinking off
    instruction = build_prompt(TASK, choose_style(instruct, "instruction"), instruct, show_goal=False, budget=1000)
    assert "<|im_start|>" not in instruction and instruction.endswith("Lean code for <HOLE>:\n```lean\n")
    with pytest.raises(PromptError, match="no chat template"):
        choose_style(tiny_chat.tokenizer(chat_template=None), "chat")


def test_a_template_writes_the_prompt_and_unknown_fields_are_refused(instruct: object) -> None:
    style = choose_style(instruct, "instruction", template="-- {kind} hole\n{prefix}{{HOLE}}{suffix}\n-- {goal}")
    prompt = build_prompt(TASK, style, instruct, show_goal=True, budget=1000)
    assert prompt.startswith("-- tactic hole\ntheorem t") and "{HOLE}\n  done" in prompt
    assert prompt.endswith("-- a b : Nat\nh : a ≤ b\n⊢ a + 1 ≤ b + 1")
    chat_style = choose_style(instruct, "chat", template="Prove: {prefix}")
    chat = build_prompt(TASK, chat_style, instruct, show_goal=False, budget=1000)
    assert "<|im_start|>user\nProve: theorem t" in chat
    with pytest.raises(PromptError, match=r"unknown field\(s\) \{middle\}"):
        choose_style(instruct, template="{prefix}{middle}")
    with pytest.raises(PromptError, match="FIM tokens"):
        choose_style(_without_fim(), "fim")
    custom = choose_style(_without_fim(), "fim", template="<PRE>{prefix}<SUF>{suffix}<MID>")
    assert build_prompt(TASK, custom, instruct, show_goal=False, budget=1000).startswith("<PRE>theorem t")
    assert custom.candidate("omega\n  done", 2) == "omega\n  done"  # FIM cleaning: the answer continues the prefix


def _without_fim() -> object:
    class Plain:
        chat_template = None
        eos_token = "</s>"
        all_special_tokens = ("</s>",)

        def get_vocab(self) -> dict[str, int]:
            return {"</s>": 0}

    return Plain()


def test_thinking_prompts_prefill_nothing_and_take_the_last_lean_block(instruct: object) -> None:
    style = choose_style(instruct, "chat", thinking=True)
    prompt = build_prompt(TASK, style, instruct, show_goal=False, budget=1000)
    assert prompt.endswith("<|im_start|>assistant\n") and "Think it through first" in prompt
    assert "```" not in style.stop_strings  # a fence in the reasoning must not end the answer
    answer = "<think>maybe\n```lean\nsimp\n```\nno</think>\nSo:\n```lean4\nomega\n  done\n```\nDone."
    assert style.candidate(answer, 2) == "omega\n    done"  # a block from column 0 is moved under the hole
    assert style.candidate("<think>```lean\nsimp\n```</think>\nI could not.", 2) == ""  # only after the thinking
    assert style.candidate("```lean\nomega", 2) == ""  # an unfinished block proves nothing
    assert style.sft_target("omega") == "```lean\nomega\n```"


def test_the_fence_is_prefilled_where_the_template_starts_an_answer() -> None:
    """DeepSeek's template writes an answer as `Assistant: ` + content but ends its generation prompt at the colon: the
    pre-filled fence goes after the space, as the model's answers were written in training. ChatML needs no gap."""
    deepseek = tiny_chat.tokenizer(eos="<|endoftext|>", chat_template=tiny_chat.DEEPSEEK_TEMPLATE, name="prover")
    style = choose_style(deepseek, "chat")
    prompt = build_prompt(TASK, style, deepseek, show_goal=False, budget=256)
    assert prompt.endswith("\n\nAssistant: ```lean\n") and "Assistant:```" not in prompt
    chatml_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    plain = tiny_chat.tokenizer(chat_template=chatml_template)
    chatml = build_prompt(TASK, choose_style(plain, "chat"), plain, show_goal=False, budget=256)
    assert chatml.endswith("<|im_start|>assistant\n```lean\n")


def test_bos_goes_first_exactly_once_when_the_tokenizer_adds_one() -> None:
    with_bos = tiny_chat.tokenizer(bos=True, eos="<|endoftext|>", chat_template=None)
    style = choose_style(with_bos)
    prompt = build_prompt(TASK, style, with_bos, show_goal=False, budget=1000)
    ids = with_bos(prompt, add_special_tokens=False)["input_ids"]
    assert prompt.startswith("<s><|fim_prefix|>") and ids[0] == with_bos.bos_token_id
    assert ids.count(with_bos.bos_token_id) == 1
    in_template = tiny_chat.tokenizer(bos=True)
    chat = choose_style(in_template, "chat")
    rendered = build_prompt(TASK, chat, in_template, show_goal=False, budget=1000)
    assert rendered.startswith("<s><|im_start|>") and rendered.count("<s>") == 1
    assert choose_style(tiny_chat.tokenizer()).bos == ""  # Qwen adds none


@pytest.mark.parametrize("style_name", ["fim", "chat", "instruction"])
def test_the_goal_is_shown_above_the_hole_in_every_style(instruct: object, style_name: str) -> None:
    style = choose_style(instruct, style_name)
    shown = build_prompt(TASK, style, instruct, show_goal=True, budget=1000)
    assert "  -- goal at the hole:\n  -- a b : Nat\n  -- h : a ≤ b\n  -- ⊢ a + 1 ≤ b + 1\n  " in shown
    assert "goal at the hole" not in build_prompt(TASK, style, instruct, show_goal=False, budget=1000)
    no_goal = make_task(goal=None)
    assert "goal at the hole" not in build_prompt(no_goal, style, instruct, show_goal=True, budget=1000)


FILE_PREFIX = (
    "import Mathlib\nimport Aesop\nopen Nat\n\n"
    "/-- an earlier lemma -/\ntheorem early (n : Nat) : n + 0 = n := by\n  simp\n\n"
    "theorem later (n : Nat) : 0 + n = n := by\n  simp\n\n"
    "theorem t (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by\n  have h1 : a ≤ b := h\n  "
)


def test_the_context_keeps_statement_and_imports_and_drops_the_oldest_lemma_first(instruct: object) -> None:
    task = make_task(prefix=FILE_PREFIX)
    style = choose_style(instruct, "fim")

    def prefix_at(budget: int) -> str:
        prompt = build_prompt(task, style, instruct, show_goal=False, budget=budget)
        return prompt.removeprefix("<|fim_prefix|>").split("<|fim_suffix|>")[0]

    def tokens(text: str) -> int:
        return len(instruct(text, add_special_tokens=False)["input_ids"])

    assert prefix_at(10_000) == FILE_PREFIX
    full = tokens(FILE_PREFIX)
    later = tokens("theorem later (n : Nat) : 0 + n = n := by\n  simp\n\n")
    suffix = tokens(TASK.suffix)
    budget = full + suffix - later + 2  # the oldest lemma must go; the later one just fits
    kept = prefix_at(budget)
    assert tokens(kept) <= budget - suffix
    assert kept.startswith("import Mathlib\nimport Aesop\nopen Nat\n")
    assert "theorem early" not in kept and "theorem later" in kept
    assert kept.endswith("theorem t (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by\n  have h1 : a ≤ b := h\n  ")
    tight = prefix_at(tokens(TASK.statement + " := by\n") + 8 + suffix)  # room for the statement and a bit more
    assert "theorem t (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by\n" in tight, "the statement is always kept"
    assert "theorem later" not in tight and tight.endswith("  ")


def test_every_style_samples_on_a_tiny_model(instruct: object) -> None:
    model = tiny_chat.model(instruct).eval()
    for style in (choose_style(instruct, name) for name in ("fim", "chat", "instruction")):
        prompt = build_prompt(TASK, style, instruct, show_goal=True, budget=256)
        backend = TransformersBackend(model, instruct, [instruct.eos_token_id], stop_strings=style.stop_strings)
        (rollout,) = backend.generate([prompt], num_return=1, max_new_tokens=4, temperature=0.0, top_p=1.0, seed=0)
        assert rollout.prompt_ids == instruct(prompt, add_special_tokens=False)["input_ids"]
        assert 1 <= len(rollout.completion_ids) <= 4 and len(rollout.old_logp) == len(rollout.completion_ids)
        assert isinstance(style.candidate(rollout.text, TASK.indent), str)
