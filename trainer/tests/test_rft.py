"""The compute-matched arms (issue 22): expert iteration (rejection-sampling fine-tuning) trains only on the model's
own verified proofs, and on tasks without a reference too; SFT never sees a task without a reference; the arms run
after RL start from the warm start's weights, spend what they say, and a resumed run runs only those not yet
measured."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import torch
from conftest import write_dataset
from fakes import ExactMatchVerifier, RecordingEvents, verdict_for
from test_loop import ParityVerifier, make_trainer

from fim_rlvr.core.protocol import Verdict
from fim_rlvr.model.rollout import Rollout
from fim_rlvr.run.files import RunFiles
from fim_rlvr.step import rft, sft
from fim_rlvr.step.batch import Group
from fim_rlvr.step.rft import ProofBuffer, verified_proofs
from fim_rlvr.tasks.data import load_tasks


def half_without_reference(folder: Path) -> tuple[Path, set[str]]:
    """The toy dataset with every other training task a statement without a proof (`reference: false`, its middle
    the placeholder `sorry`, as an open goal of the workspace is); returns it and those tasks' ids."""
    dataset = write_dataset(folder)
    rows = [json.loads(line) for line in (dataset / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    open_goals: set[str] = set()
    for index, row in enumerate(rows):
        if row["split"] == "train" and index % 2 == 0:
            row.update(reference=False, middle="sorry")
            open_goals.add(row["id"])
    (dataset / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return dataset, open_goals


def verdict(kind: str) -> Verdict:
    return Verdict.from_wire(verdict_for("t", "x", "x" if kind == "proved" else None))


def test_only_proved_first_attempts_become_targets_and_each_proof_is_kept_once(toy_dataset: Path) -> None:
    task = load_tasks(toy_dataset)[0]
    rollouts = [Rollout([1, 2], [5, 6, 0], "a", [0.0] * 3, False), Rollout([1, 2], [7, 0], "b", [0.0] * 2, False)]
    proved, failed = verdict("proved"), verdict("failed")
    group = Group(task, [*rollouts, rollouts[0]], ["a", "b", "a"], [proved, failed, proved])
    proofs = verified_proofs([group])
    assert [p.completion_ids for p in proofs] == [(5, 6, 0), (5, 6, 0)]
    repaired = Group(task, rollouts, ["a", "b"], [failed, proved], turns=[0, 1])
    assert verified_proofs([repaired]) == []  # a repair turn answers another prompt
    buffer = ProofBuffer(seed=3)
    assert buffer.draw(4, update=0) == []
    assert buffer.add(proofs) == 1 and len(buffer.proofs) == 1
    drawn = buffer.draw(4, update=0)
    assert len(drawn) == 4 and all(p == proofs[0] for p in drawn)
    other = rft.Proof(task.id, (1, 2), (7, 0))
    buffer.add([other])
    twin = ProofBuffer(seed=3)
    twin.add([proofs[0], other])
    assert buffer.draw(8, update=1) == twin.draw(8, update=1)  # fixed by the seed and the update
    assert buffer.draw(8, update=1) != buffer.draw(8, update=2) or len(set(buffer.draw(64, update=3))) == 2


def test_rft_trains_only_on_its_own_verified_proofs_and_sft_never_on_a_task_without_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset, open_goals = half_without_reference(tmp_path / "dataset")
    proved: set[tuple[str, tuple[int, ...]]] = set()
    sampled: set[tuple[str, tuple[int, ...]]] = set()
    real_verified = rft.verified_proofs

    def watching(groups: Sequence[Group]) -> list[rft.Proof]:
        for group in groups:
            for rollout, v in zip(group.rollouts, group.verdicts, strict=True):
                key = (group.task.id, tuple(rollout.completion_ids))
                sampled.add(key)
                if v.kind == "proved":
                    proved.add(key)
        return real_verified(groups)

    trained: dict[str, list[tuple[tuple[int, ...], tuple[int, ...]]]] = {"sft": [], "rft": []}
    real_nll = sft.target_nll

    def recording(arm: str) -> Any:
        def nll(model: Any, prompts: Any, targets: Any, *args: Any) -> torch.Tensor:
            trained[arm].extend((tuple(p), tuple(t)) for p, t in zip(prompts, targets, strict=True))
            return real_nll(model, prompts, targets, *args)

        return nll

    monkeypatch.setattr(rft, "verified_proofs", watching)
    monkeypatch.setattr(rft, "target_nll", recording("rft"))
    monkeypatch.setattr(sft, "target_nll", recording("sft"))
    config = {"steps": 4, "batch_size": 4, "group_size": 4, "sft_steps": 3, "validation_every": 0}
    trainer = make_trainer(dataset, tmp_path / "run", ParityVerifier(), baseline="rft", **config)
    tokenizer = trainer.policy.tokenizer
    trainer.run()
    # The warm start's targets: reference proofs only, never a task without one (its `sorry` is no proof).
    warm = trained["sft"]
    references = {t.middle for t in trainer.train_tasks if t.reference}
    texts = {tokenizer.decode(list(t), skip_special_tokens=True) for _, t in warm}
    assert texts <= {trainer.policy.style.sft_target(m) for m in references}
    assert "sorry" not in " ".join(texts)
    # Expert iteration's targets: exactly completions the verifier proved, some of them of tasks without a reference.
    rft_targets = trained["rft"]
    assert rft_targets, "no RFT step trained (no proof found)"
    proved_tokens = {tokens for _, tokens in proved}
    assert {t for _, t in rft_targets} <= proved_tokens
    failed_only = {tokens for _, tokens in sampled} - proved_tokens
    assert failed_only and not ({t for _, t in rft_targets} & failed_only)
    assert {task for task, _ in proved} & open_goals, "RFT learns from statements without proofs"
    evals = RunFiles(tmp_path / "run").read_evals()
    spent = evals["after"]["compute"]
    evaluated = spent["evaluation"]["sequences"]
    assert evaluated == evals["after"]["tasks"]  # greedy only: one completion per held-out task
    # RL's budget: steps x batch x group, then the arm's own evaluation.
    assert spent["generated"]["sequences"] == spent["verifier_calls"] == 4 * 4 * 4 + evaluated
    assert spent["optimizer_steps"] <= 4 and spent["trained"]["sequences"] == 16 * spent["optimizer_steps"]
    # Trained tokens are exactly the targets the arm's loss saw.
    assert spent["trained"]["tokens"] == sum(len(t) for _, t in rft_targets)


class WarmWeights(RecordingEvents):
    """Keeps the model's weights as they were when the warm start was evaluated."""

    def __init__(self) -> None:
        super().__init__()
        self.model: Any = None
        self.warm: dict[str, torch.Tensor] = {}

    def emit(self, method: str, params: Any) -> None:
        super().emit(method, params)
        if method == "train/eval" and params["stage"] == "sft":
            self.warm = {n: p.detach().clone() for n, p in self.model.named_parameters()}


def test_the_arms_after_rl_start_from_the_warm_start_and_spend_what_rl_spends(
    toy_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fim_rlvr.run.trainer import Trainer

    starts: dict[str, dict[str, torch.Tensor]] = {}
    real_arm = Trainer._arm

    def arm(self: Trainer, name: str) -> Any:
        starts[name] = {n: p.detach().clone() for n, p in self.policy.model.named_parameters()}
        return real_arm(self, name)

    monkeypatch.setattr(Trainer, "_arm", arm)
    events = WarmWeights()
    config = {"steps": 2, "batch_size": 2, "group_size": 4, "sft_batch_size": 4, "validation_every": 0}
    trainer = make_trainer(
        toy_dataset, tmp_path, ExactMatchVerifier(toy_dataset), events, compare=["sft", "rft"], eval_samples=2, **config
    )
    events.model = trainer.policy.model
    trainer.run()
    assert events.of("train/done")[-1]["status"] == "completed"
    assert set(starts) == {"sft", "rft"}
    for name, weights in starts.items():
        assert all(torch.equal(weights[n], events.warm[n]) for n in weights), (
            f"{name} did not start from the warm start"
        )
    evals = RunFiles(tmp_path).read_evals()
    assert list(evals) == ["before", "sft", "after", "baseline-sft", "baseline-rft"]
    rl, sft_arm, rft_arm = evals["after"]["compute"], evals["baseline-sft"]["compute"], evals["baseline-rft"]["compute"]
    # Each evaluation: a greedy completion and 2 samples per held-out task, each checked.
    evaluated = 3 * evals["after"]["tasks"]
    metrics = RunFiles(tmp_path).read_metrics()
    assert rl["optimizer_steps"] == 2 and rl["trained"]["sequences"] == 16
    assert rl["generated"] == {
        "sequences": 16 + evaluated,
        "tokens": sum(m["tokens"] for m in metrics) + rl["evaluation"]["tokens"],
    }
    assert rl["trained"]["tokens"] == sum(m["tokens_trained"] for m in metrics) > 0
    assert rl["verifier_calls"] == 16 + evaluated
    assert (
        sft_arm["optimizer_steps"] == 4 and sft_arm["trained"]["sequences"] == 16 and sft_arm["trained"]["tokens"] > 0
    )
    assert sft_arm["generated"]["sequences"] == sft_arm["verifier_calls"] == evaluated  # its evaluation only
    assert rft_arm["generated"]["sequences"] == rft_arm["verifier_calls"] == 16 + evaluated
    for spent in (rl, sft_arm, rft_arm):
        assert spent["evaluation"]["sequences"] == evaluated and spent["evaluation"]["tokens"] > 0
    for stage in evals.values():
        assert stage["samples"] == 2 and set(stage["pass_at_k"]) == {"1", "2"}
    stages = [(e["stage"], e.get("arm")) for e in events.of("train/eval")]
    assert stages == [("before", None), ("sft", None), ("after", None), ("baseline", "sft"), ("baseline", "rft")]
    # A run stopped during an arm (its evaluation never written) runs only the arms not yet measured on resume.
    del evals["baseline-rft"]
    RunFiles(tmp_path).write_evals(evals)
    again = RecordingEvents()
    resumed = make_trainer(
        toy_dataset,
        tmp_path,
        ExactMatchVerifier(toy_dataset),
        again,
        resume=True,
        compare=["sft", "rft"],
        eval_samples=2,
        **config,
    )
    resumed.run()
    assert [(e["stage"], e.get("arm")) for e in again.of("train/eval")] == [("after", None), ("baseline", "rft")]
    assert set(RunFiles(tmp_path).read_evals()) == {"before", "sft", "after", "baseline-sft", "baseline-rft"}


def test_extra_groups_cover_what_an_rl_step_generated_beyond_its_first_round() -> None:
    assert rft.extra_groups([8, 20, 13], 1, batch_size=2, group_size=4) == 0  # the first round only
    assert rft.extra_groups([8, 20, 13], 2, batch_size=2, group_size=4) == 3  # 20 = 5 groups
    assert rft.extra_groups([8, 20, 13], 3, batch_size=2, group_size=4) == 2  # 13 rounds up to 4 groups
    assert rft.extra_groups([8, 20, 13], 4, batch_size=2, group_size=4) == 0  # past RL's steps
    assert rft.extra_groups([], 1, batch_size=2, group_size=4) == 0


def test_expert_iteration_generates_what_dapo_generated_step_by_step_refills_included(
    toy_dataset: Path, tmp_path: Path
) -> None:
    """DAPO's dynamic sampling draws more rounds where groups' rewards are all equal; the RFT arm run after it must
    spend that generation too, or RL - RFT would measure extra draws and not the algorithm (issue 32's item 4)."""
    config = {"steps": 3, "batch_size": 2, "group_size": 4, "sft_batch_size": 4, "validation_every": 0}
    trainer = make_trainer(toy_dataset, tmp_path, ParityVerifier(), compare=["rft"], algorithm="dapo", **config)
    trainer.run()
    metrics = RunFiles(tmp_path).read_metrics()
    rl_per_step = [sum(m["verdicts"].values()) for m in metrics]
    assert len(rl_per_step) == 3
    assert sum(rl_per_step) > 3 * 2 * 4, f"the parity verifier should make DAPO refill: {rl_per_step}"
    evals = RunFiles(tmp_path).read_evals()
    rl, arm = evals["after"]["compute"], evals["baseline-rft"]["compute"]
    rl_training = rl["generated"]["sequences"] - rl["evaluation"]["sequences"]
    arm_training = arm["generated"]["sequences"] - arm["evaluation"]["sequences"]
    assert rl_training == sum(rl_per_step)
    groups = [-(-n // 4) * 4 for n in rl_per_step]  # each RL step's generation in whole groups of 4
    assert arm_training == sum(groups), (arm_training, rl_per_step)
    assert arm["verifier_calls"] - arm["evaluation"]["sequences"] == arm_training
