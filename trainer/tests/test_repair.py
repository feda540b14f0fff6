"""Repair turns (repair_turns, repair_discount): the repair prompt's format, the turns a failed sample gets, which
samples are masked in any turn, the discounted reward of the proving turn, and a whole run through the loop.

The prompt's parity with `fim-rlvr eval --repair` (lean-bridge/eval/repair.ts) is test/eval/repairParity.test.ts.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, cast

import pytest
import torch
from fakes import IDENTITY, RecordingEvents
from test_loop import ParityVerifier, make_trainer

from fim_rlvr.algorithms import make
from fim_rlvr.core.config import ConfigError, from_dict
from fim_rlvr.core.protocol import TRAIN_SAMPLE, BatchVerdict, Verdict, VerifyItem
from fim_rlvr.model.rollout import Rollout
from fim_rlvr.run.files import RunFiles
from fim_rlvr.step.batch import Group, StepRecord
from fim_rlvr.step.loss import score
from fim_rlvr.step.repair_turns import with_repairs
from fim_rlvr.step.sample import Sampling
from fim_rlvr.tasks.repair import REPAIR_HEADER, feedback_lines, repair_prefix
from fim_rlvr.verifier.check import Stopped


def at(line: int, character: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": character}, "end": {"line": line, "character": character + 1}}


# ------------------------------------------------------------------------------------------------ the prompt


def test_the_repair_block_sits_above_the_holes_line_with_candidate_relative_positions_and_the_goals() -> None:
    diagnostics = [
        {"severity": 2, "message": "unused variable", "candidateRange": at(0, 0)},
        {"severity": 1, "message": "unsolved goals\nn : Nat\n⊢ n + 0 = n", "candidateRange": at(1, 2)},
    ]
    prefix = "theorem t (n : Nat) : n + 0 = n := by\n  "
    repaired = repair_prefix(prefix, 2, "intro x  \n  simp", "failed", diagnostics)
    assert repaired == (
        "theorem t (n : Nat) : n + 0 = n := by\n"
        "  -- previous attempt, which Lean did not accept:\n"
        "  --   intro x\n"
        "  --     simp\n"
        "  -- Lean said:\n"
        "  --   error at 2:3: unsolved goals\n"
        "  --   goals at the first error:\n"
        "  --     n : Nat\n"
        "  --     ⊢ n + 0 = n\n"
        "  "
    )
    assert repair_prefix("by ", 0, "", "timeout", []) == (
        "-- previous attempt, which Lean did not accept:\n--\n-- Lean said:\n--   no answer within the time limit\nby "
    )


def test_feedback_keeps_three_distinct_errors_and_only_the_first_errors_goals() -> None:
    lines = feedback_lines(
        "failed",
        [
            {"severity": 1, "message": "unknown identifier 'foo'", "candidateRange": at(1, 8)},
            {"severity": 1, "message": "unsolved goals\nh : a\n⊢ b", "candidateRange": at(0, 0)},
            {"severity": 1, "message": "unknown identifier 'foo'", "candidateRange": at(1, 8)},
            {"severity": 1, "message": "declaration uses 'sorry'", "candidateRange": None},
            {"severity": 1, "message": "a fourth error", "candidateRange": at(3, 0)},
        ],
    )
    assert lines == [
        "error at 2:9: unknown identifier 'foo'",
        "error at 1:1: unsolved goals",
        "  h : a",
        "  ⊢ b",
        "error outside the attempt: declaration uses 'sorry'",
    ]
    assert feedback_lines("rejected", []) == ["rejected"]


def test_config_keys_and_their_checks() -> None:
    config = from_dict({})
    assert config.repair_turns == 0 and config.repair_discount == 0.5
    for bad in ({"repair_turns": -1}, {"repair_turns": 9}, {"repair_turns": True}, {"repair_discount": 0}):
        with pytest.raises(ConfigError):
            from_dict(bad)
    assert from_dict({"repair_turns": 2, "repair_discount": 1}).repair_turns == 2


# ------------------------------------------------------------------------------------------------ the turns


def wire(task_id: str, candidate: str) -> BatchVerdict:
    """good proves; hang is the candidate's own timeout; infra an infrastructure timeout; anything else fails with
    Lean's unsolved goals at the candidate's first character."""
    base: dict[str, Any] = {
        "taskId": task_id,
        "reward": 0.0,
        "rewardMetrics": {},
        "diagnostics": [],
        "elapsedMs": 1.0,
        "cached": False,
        "verifier": IDENTITY,
    }
    if candidate == "good":
        return cast(BatchVerdict, {**base, "kind": "proved", "reward": 1.0})
    if candidate in ("hang", "infra"):
        cause = "candidate" if candidate == "hang" else "infrastructure"
        return cast(BatchVerdict, {**base, "kind": "timeout", "cause": cause})
    message = f"unsolved goals\n⊢ {candidate} is not it"
    diagnostics = [{"severity": 1, "message": message, "candidateRange": at(0, 0)}]
    return cast(BatchVerdict, {**base, "kind": "failed", "diagnostics": diagnostics})


class ScriptedVerifier:
    """Judges by the candidate's text (`wire`), recording every batch it is sent; `hang` never answers."""

    def __init__(self, hang: bool = False) -> None:
        self.batches: list[list[VerifyItem]] = []
        self.hang = hang

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        self.batches.append(list(items))
        future: Future[list[BatchVerdict]] = Future()
        if not self.hang:
            future.set_result([wire(i["taskId"], i["candidate"]) for i in items])
        return future

    def cancel(self, future: Future[list[BatchVerdict]]) -> None:
        pass


NEXT = {"bad1": "good", "bad2": "hang", "hang": "good", "bad3": "infra", "bad4": "bad4"}
"""What the scripted model writes on a repair turn, by the attempt the prompt shows it."""
ATTEMPT = re.compile(re.escape(REPAIR_HEADER) + r"\n *-- +(\S+)")


class ScriptedBackend:
    """A rollout backend whose repair answers follow NEXT; it records the prompts it was given."""

    pad_id = 0

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def generate(self, prompts: Sequence[str], *, num_return: int, **_: Any) -> list[Rollout]:
        assert num_return == 1
        self.prompts.extend(prompts)
        texts = []
        for prompt in prompts:
            assert prompt.count(REPAIR_HEADER) == 1, "one block: the last attempt only"
            match = ATTEMPT.search(prompt)
            assert match, prompt
            texts.append(NEXT[match.group(1)])
        return [Rollout([1, 2], [3, 4], text, [-1.0, -1.0], False) for text in texts]

    def sync_weights(self, model: Any) -> None:
        pass


FIRST = ["good", "bad1", "bad2", "bad3", "bad4", "infra"]


@pytest.fixture(scope="module")
def trainer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from conftest import write_dataset

    folder = tmp_path_factory.mktemp("repair")
    dataset = write_dataset(folder / "dataset", per_pattern=4)
    made = make_trainer(
        dataset, folder / "run", ScriptedVerifier(), sft_steps=0, repair_turns=2, max_prompt_tokens=4096
    )
    made.backend = ScriptedBackend()
    return made


def first_record(trainer: Any) -> StepRecord:
    task = trainer.train_tasks[0]
    rollouts = [Rollout([1], [5], text, [-0.5], False) for text in FIRST]
    verdicts = [Verdict.from_wire(wire(task.id, c)) for c in FIRST]
    group = Group(task, rollouts, list(FIRST), verdicts)
    return StepRecord([group], [group], 0.1, 0.1, 0.0)


def repaired(
    trainer: Any,
    verifier: Any,
    record: StepRecord,
    *,
    turns: int = 2,
    silence_s: float = 5.0,
    stop: threading.Event | None = None,
) -> StepRecord:
    """with_repairs on the trainer's policy and backend, as its loop calls it for step 1."""
    sampling = Sampling.of(
        trainer.config, trainer.policy, trainer.backend, show_goal=trainer.show_goal, seed=trainer.config.seed
    )
    timeout_reward = trainer.config.timeout_reward
    return with_repairs(
        record,
        sampling,
        verifier,
        turns=turns,
        timeout_reward=timeout_reward,
        step=1,
        round_=0,
        silence_s=silence_s,
        stop=stop,
    )


def test_failed_samples_get_turns_until_proved_masked_or_out_of_turns(trainer: Any) -> None:
    verifier = ScriptedVerifier()
    trainer.backend = ScriptedBackend()
    record = repaired(trainer, verifier, first_record(trainer))
    (group,) = record.groups
    assert record.all_groups == record.groups
    assert group.candidates == [*FIRST, "good", "hang", "infra", "bad4", "good", "bad4"]
    assert group.turns == [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    # Each turn went to the verifier as one batch of items by task id (the one road), the proved and masked left out.
    assert [[i["candidate"] for i in batch] for batch in verifier.batches] == [
        ["good", "hang", "infra", "bad4"],
        ["good", "bad4"],
    ]
    assert {i["taskId"] for batch in verifier.batches for i in batch} == {group.task.id}
    # The prompt carries the verifier's message, at the candidate's own position, and the goal it states.
    prompt = trainer.backend.prompts[0]
    assert "-- previous attempt, which Lean did not accept:\n  --   bad1\n  -- Lean said:" in prompt
    assert "--   error at 1:1: unsolved goals\n  --   goals at the first error:\n  --     ⊢ bad1 is not it" in prompt
    assert "--   no answer within the time limit" in trainer.backend.prompts[4], "the hang's repair prompt"
    assert record.gen_seconds > 0.1 and record.verify_seconds > 0.1


def test_no_turn_can_choose_a_masked_outcome_and_the_proving_turn_is_discounted(trainer: Any) -> None:
    trainer.backend = ScriptedBackend()
    record = repaired(trainer, ScriptedVerifier(), first_record(trainer))
    (group,) = record.groups
    rewards = group.rewards(trainer.config.timeout_reward, trainer.config.repair_discount)
    expected = [1.0, 0.0, 0.0, 0.0, 0.0, math.nan, 0.5, 0.0, math.nan, 0.0, 0.25, 0.0]
    assert [("nan" if math.isnan(r) else r) for r in rewards] == [("nan" if math.isnan(e) else e) for e in expected]
    # A repair that hangs the checker is its own failure (reward 0, trained on), never a way out of the group.
    hang = group.candidates.index("hang")
    assert group.verdicts[hang].kind == "timeout" and not group.verdicts[hang].masked()
    # The loss's view: masked samples only where the infrastructure failed, in the first attempt or a repair turn.
    lengths = [len(r.completion_ids) for r in group.rollouts]
    mask = torch.ones(len(lengths), 2)
    scored, advantages, kept = score(
        make("grpo"),
        group.verdicts,
        mask,
        torch.zeros(len(lengths), dtype=torch.long),
        lengths=lengths,
        truncated=[False] * len(lengths),
        timeout_reward="failure",
        discounts=[0.5**t for t in group.turns],
    )
    masked_rows = [i for i, row in enumerate(kept) if row.sum() == 0]
    assert masked_rows == [FIRST.index("infra"), 8]
    assert torch.allclose(scored[~torch.isnan(scored)], torch.tensor([1.0, 0, 0, 0, 0, 0.5, 0, 0, 0.25, 0]))
    # The proving turns are pushed up, less the later they prove; every failure (the hang included) is pushed down.
    assert advantages[0] > advantages[6] > advantages[10] > 0
    assert all(advantages[i] < 0 for i in (1, 2, 3, 4, 7, 9, 11))
    # Pass rates read first attempts only: one proof of five unmasked first attempts.
    assert record.kind_results("failure") == {group.task.kind: (1, 5)}
    assert [v.kind for v in record.repairs()].count("proved") == 2


def test_no_repair_turns_leaves_the_record_as_it_was(trainer: Any) -> None:
    record = first_record(trainer)
    assert repaired(trainer, ScriptedVerifier(), record, turns=0) is record


def test_a_stop_while_a_repair_turn_is_checked_stops_the_step(trainer: Any) -> None:
    trainer.backend = ScriptedBackend()
    stop = threading.Event()
    stop.set()
    with pytest.raises(Stopped):
        repaired(trainer, ScriptedVerifier(hang=True), first_record(trainer), silence_s=60.0, stop=stop)


# ------------------------------------------------------------------------------------------------ a whole run


def test_a_run_with_repair_turns_trains_and_reports_each_turn(toy_dataset: Path, tmp_path: Path) -> None:
    events = RecordingEvents()
    trainer = make_trainer(
        toy_dataset, tmp_path, ParityVerifier(), events, steps=2, sft_steps=0, repair_turns=1, checkpoint_every=1
    )
    before = {name: p.detach().clone() for name, p in trainer.policy.model.named_parameters()}
    trainer.run()
    assert any(not torch.equal(before[n], p) for n, p in trainer.policy.model.named_parameters())
    metrics = RunFiles(tmp_path).read_metrics()
    assert len(metrics) == 2
    samples = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    repairs = [s for s in samples if s.get("turn")]
    firsts = [s for s in samples if not s.get("turn")]
    assert len(firsts) == 2 * 2 * 3, "every first attempt of both steps"
    failed_firsts = sum(s["verdict"] != "proved" for s in firsts)
    assert len(repairs) == failed_firsts == sum(m.get("repair_samples", 0) for m in metrics)
    assert all(s["turn"] == 1 for s in repairs)
    sent = events.of(TRAIN_SAMPLE)
    assert sum(1 for p in sent if p.get("turn") == 1) == len(repairs)
    done = events.of("train/done")[-1]
    assert done["status"] == "completed", done
