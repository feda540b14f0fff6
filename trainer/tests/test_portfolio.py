"""The data-matched SFT arm (issue 32 item 3): the fixed portfolio's proofs of the training open goals, checked by the
run's verifier, join the reference proofs, and the arm trains on them as many sequences as RL; what every arm spent is
counted in sequences and tokens; what each family's evaluation accepted is listed with its counts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
import torch
from fakes import middles, verdict_for
from test_loop import make_trainer
from test_rft import half_without_reference

from fim_rlvr.core.config import PORTFOLIO, TrainConfig
from fim_rlvr.core.protocol import BatchVerdict, VerifyItem
from fim_rlvr.run.evaluate import by_family
from fim_rlvr.run.files import RunFiles
from fim_rlvr.step import sft
from fim_rlvr.step.portfolio import data_matched_tasks, portfolio_proofs
from fim_rlvr.tasks.data import Task, family_of, load_tasks

SCHEMA = Path(__file__).resolve().parents[2] / "lean-bridge" / "protocol" / "trainer.schema.json"


class PortfolioVerifier:
    """Proves a task's reference middle, and on the open goals: `simp [*]` for every third, `decide` for one in
    three more, nothing for the rest; records every candidate it was sent."""

    def __init__(self, dataset: Path, open_goals: set[str]) -> None:
        self.middles = middles(dataset)
        ordered = sorted(open_goals)
        self.answers = {
            t: ("simp [*]" if k % 3 == 0 else "decide" if k % 3 == 1 else None) for k, t in enumerate(ordered)
        }
        self.sent: list[VerifyItem] = []

    def submit(self, items: Sequence[VerifyItem]) -> Future[list[BatchVerdict]]:
        self.sent.extend(items)
        future: Future[list[BatchVerdict]] = Future()
        future.set_result(
            [
                verdict_for(i["taskId"], i["candidate"], self.answers.get(i["taskId"]) or self.middles.get(i["taskId"]))
                for i in items
            ]
        )
        return future

    def cancel(self, future: Future[list[BatchVerdict]]) -> None:
        pass


def _record_sft_targets(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """Every SFT target sequence from now on, in training order (sft.target_nll still computes the loss)."""
    targets: list[tuple[int, ...]] = []
    real_nll = sft.target_nll

    def recording(model: Any, prompts: Any, batch: Any, *args: Any) -> torch.Tensor:
        targets.extend(tuple(t) for t in batch)
        return real_nll(model, prompts, batch, *args)

    monkeypatch.setattr(sft, "target_nll", recording)
    return targets


def test_the_schemas_portfolio_default_is_the_trainers() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["$defs"]["TrainConfig"]["properties"]["portfolio"]["default"] == list(PORTFOLIO)
    assert TrainConfig().portfolio == list(PORTFOLIO)


def test_each_open_goal_gets_the_first_tactic_that_proves_it_and_only_open_goals_are_tried(tmp_path: Path) -> None:
    dataset, open_goals = half_without_reference(tmp_path / "dataset")
    train = [t for t in load_tasks(dataset) if t.split == "train"]
    verifier = PortfolioVerifier(dataset, open_goals)
    tactics = ["rfl", "decide", "simp [*]", "decide"]
    found = portfolio_proofs(train, tactics, verifier, silence_s=5.0)
    assert found.open_goals == len(open_goals)
    assert found.proofs == {t: a for t, a in verifier.answers.items() if a is not None}
    assert {i["taskId"] for i in verifier.sent} == open_goals  # a task with a reference is never tried
    # rfl on every goal, decide on every goal, simp [*] on those decide left, decide again on those still open.
    n = len(open_goals)
    d = sum(a == "decide" for a in verifier.answers.values())
    s = sum(a == "simp [*]" for a in verifier.answers.values())
    assert 0 < d < n and s > 0 and d + s < n
    assert found.checks == len(verifier.sent) == n + n + (n - d) + (n - d - s)
    assert [i["candidate"] for i in verifier.sent if i["candidate"] == "rfl"] == ["rfl"] * len(open_goals)

    data = data_matched_tasks(train, found)
    references = [t for t in train if t.reference]
    assert [t.id for t in data if t.id not in open_goals] == [t.id for t in references]
    by_id = {t.id: t for t in data}
    assert {t for t in by_id if t in open_goals} == set(found.proofs)  # an unproved open goal is no data
    for task_id, tactic in found.proofs.items():
        assert by_id[task_id].reference and by_id[task_id].middle == tactic
    original = {t.id: t for t in train}
    some = next(iter(found.proofs))
    assert by_id[some].prefix == original[some].prefix and by_id[some].hole == original[some].hole


def test_the_data_matched_arm_trains_on_the_portfolio_proofs_as_many_sequences_as_rl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset, open_goals = half_without_reference(tmp_path / "dataset")
    verifier = PortfolioVerifier(dataset, open_goals)
    config: dict[str, Any] = {"steps": 2, "batch_size": 2, "group_size": 4, "sft_batch_size": 4, "validation_every": 0}
    trainer = make_trainer(dataset, tmp_path / "run", verifier, compare=["sft_data"], eval_samples=2, **config)
    targets = _record_sft_targets(monkeypatch)
    trainer.run()
    evals = RunFiles(tmp_path / "run").read_evals()
    assert list(evals) == ["before", "sft", "after", "baseline-sft_data"]
    tokenizer = trainer.policy.tokenizer
    texts = {tokenizer.decode(list(t), skip_special_tokens=True) for t in targets}
    proofs = {a for a in verifier.answers.values() if a is not None}
    # The warm start's targets, then the arm's 4 steps of 4: the arm's include portfolio proofs.
    arm_texts = {tokenizer.decode(list(t), skip_special_tokens=True) for t in targets[-16:]}
    assert arm_texts & proofs, "the data-matched arm never trained on a portfolio proof"
    assert "sorry" not in " ".join(texts)
    spent = evals["baseline-sft_data"]["compute"]
    evaluated = 3 * evals["after"]["tasks"]  # greedy + 2 samples per held-out task
    portfolio_checks = sum(1 for i in verifier.sent if i["taskId"] in open_goals and i["candidate"] in PORTFOLIO)
    assert spent["optimizer_steps"] == 4 and spent["trained"]["sequences"] == 16  # 2 x 2 x 4 sequences, as RL's
    assert spent["trained"]["tokens"] == sum(len(t) for t in targets[-16:])
    assert spent["generated"]["sequences"] == evaluated  # the arm samples nothing but its evaluation
    assert spent["verifier_calls"] == evaluated + portfolio_checks > evaluated


def _task(task_id: str, file: str, scope: list[str]) -> Task:
    hole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    return Task(task_id, file, "proof", "test", "", "", "x", 2, hole, scope=scope)  # type: ignore[arg-type]


def test_per_family_figures_list_each_distinct_accepted_proof_with_its_count() -> None:
    assert (
        family_of("FimWork/A.lean", ["namespace FimWork", "open Nat", "section Inner"])
        == "FimWork/A.lean#FimWork.Inner"
    )
    assert family_of("B.lean", []) == "B.lean#"
    a1, a2, b1 = (
        _task("a1", "A.lean", ["namespace W"]),
        _task("a2", "A.lean", ["namespace W"]),
        _task("b1", "B.lean", []),
    )
    rows = [(True, {2: 1.0}), (False, {2: 0.5}), (False, {2: 0.0})]

    def summarise(members: list[tuple[bool, dict[int, float]]]) -> dict[str, float]:
        return {
            "pass_at_1": sum(r[0] for r in members) / len(members),
            "pass_at_2": sum(r[1][2] for r in members) / len(members),
        }

    accepted = [(a1, "omega"), (a1, " simp "), (a1, "omega"), (a2, "simp")]
    out = by_family([a1, a2, b1], rows, summarise, accepted)
    assert list(out) == ["A.lean#W", "B.lean#"]
    assert out["A.lean#W"] == {
        "pass_at_1": 0.5,
        "pass_at_2": 0.75,
        "tasks": 2,
        "proofs": [{"proof": "omega", "count": 2}, {"proof": "simp", "count": 2}],
    }
    assert out["B.lean#"] == {"pass_at_1": 0.0, "pass_at_2": 0.0, "tasks": 1, "proofs": []}


def test_rl_counts_dynamic_samplings_extra_draws_and_the_evaluation_as_generated(
    toy_dataset: Path, tmp_path: Path
) -> None:
    from test_loop import ParityVerifier

    config: dict[str, Any] = {"steps": 3, "batch_size": 2, "group_size": 2, "validation_every": 0, "compare": []}
    trainer = make_trainer(toy_dataset, tmp_path, ParityVerifier(), algorithm="dapo", eval_samples=1, **config)
    trainer.run()
    evals = RunFiles(tmp_path).read_evals()
    metrics = RunFiles(tmp_path).read_metrics()
    spent = evals["after"]["compute"]
    checked = sum(sum(m["verdicts"].values()) for m in metrics)
    assert checked > 3 * 2 * 2, "no refill happened: the test shows nothing"
    evaluated = 2 * evals["after"]["tasks"]  # greedy + 1 sample per task
    assert spent["generated"]["sequences"] == checked + evaluated == spent["verifier_calls"]
    assert spent["generated"]["tokens"] == sum(m["tokens"] for m in metrics) + spent["evaluation"]["tokens"]
    # Trained: only the groups the steps kept, each once (num_iterations 1).
    assert spent["trained"]["sequences"] == sum(m["groups_trained"] for m in metrics) * 2 < checked


def test_a_data_matched_baseline_run_spends_its_portfolio_checks_instead_of_rl(tmp_path: Path) -> None:
    dataset, open_goals = half_without_reference(tmp_path / "dataset")
    verifier = PortfolioVerifier(dataset, open_goals)
    config: dict[str, Any] = {"steps": 2, "batch_size": 2, "group_size": 2, "sft_batch_size": 4, "validation_every": 0}
    trainer = make_trainer(dataset, tmp_path / "run", verifier, baseline="sft_data", **config)
    trainer.run()
    evals = RunFiles(tmp_path / "run").read_evals()
    assert set(evals) == {"before", "sft", "after"}
    assert not RunFiles(tmp_path / "run").read_metrics()  # no RL step
    spent = evals["after"]["compute"]
    portfolio_checks = sum(1 for i in verifier.sent if i["taskId"] in open_goals and i["candidate"] in PORTFOLIO)
    assert spent["trained"]["sequences"] == 8 and spent["optimizer_steps"] == 2  # 2 x 2 x 2 sequences, as RL's
    assert spent["verifier_calls"] == portfolio_checks + evals["after"]["tasks"] > evals["after"]["tasks"]


@pytest.mark.parametrize(("data", "imitates_the_portfolio"), [("portfolio", True), ("reference", False)])
def test_a_portfolio_warm_start_imitates_the_portfolios_proofs_of_the_open_goals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: str, imitates_the_portfolio: bool
) -> None:
    """`warm_start_data: portfolio`: the warm start's SFT targets include the portfolio's verified proofs of the
    training open goals (checked before the warm start), and never an open goal's `sorry`; the default's never do."""
    dataset, open_goals = half_without_reference(tmp_path / "dataset")
    verifier = PortfolioVerifier(dataset, open_goals)
    config: dict[str, Any] = {"steps": 0, "sft_steps": 6, "sft_batch_size": 4, "validation_every": 0}
    trainer = make_trainer(dataset, tmp_path / "run", verifier, warm_start_data=data, **config)
    targets = _record_sft_targets(monkeypatch)
    trainer.run()
    tokenizer = trainer.policy.tokenizer
    texts = [tokenizer.decode(list(t), skip_special_tokens=True).strip() for t in targets]
    assert len(texts) == 6 * 4
    found = {a for a in verifier.answers.values() if a is not None}
    only_portfolio = found - set(middles(dataset).values())  # no reference proof reads like these
    assert only_portfolio and bool(set(texts) & only_portfolio) is imitates_the_portfolio, set(texts)
    assert "sorry" not in texts
    tried = {i["taskId"] for i in verifier.sent if i["candidate"] in PORTFOLIO}
    assert (tried == open_goals) is imitates_the_portfolio


def test_a_portfolio_warm_start_and_the_data_matched_arm_check_the_portfolio_once(tmp_path: Path) -> None:
    """Both train on the same portfolio proofs: the run checks each tactic on each open goal once (not once for the
    warm start and again for the arm), and the arm still counts those checks as what it spent."""
    dataset, open_goals = half_without_reference(tmp_path / "dataset")
    verifier = PortfolioVerifier(dataset, open_goals)
    config: dict[str, Any] = {"steps": 1, "batch_size": 2, "group_size": 2, "sft_steps": 2, "sft_batch_size": 4}
    trainer = make_trainer(
        dataset,
        tmp_path / "run",
        verifier,
        warm_start_data="portfolio",
        compare=["sft_data"],
        validation_every=0,
        **config,
    )
    trainer.run()
    evals = RunFiles(tmp_path / "run").read_evals()
    assert "baseline-sft_data" in evals
    checks = [
        (i["taskId"], i["candidate"])
        for i in verifier.sent
        if i["taskId"] in open_goals and i["candidate"] in PORTFOLIO
    ]
    assert checks and len(checks) == len(set(checks))
    spent = evals["baseline-sft_data"]["compute"]
    assert spent["verifier_calls"] == len(checks) + evals["baseline-sft_data"]["tasks"]
