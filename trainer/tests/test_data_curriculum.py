"""Dataset loading edge cases, splits and kinds; the curriculum and the resumable sampler."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest

from fim_rlvr.tasks.curriculum import LEARNABILITY_FLOOR, Curriculum, TaskSampler, learnability
from fim_rlvr.tasks.data import DatasetError, Task, by_kind, lean_texts, load_tasks, require_tasks, select


def test_loads_the_toy_dataset(toy_dataset: Path) -> None:
    tasks = load_tasks(toy_dataset)
    assert len(tasks) == 48
    assert {t.split for t in tasks} == {"train", "test"}
    assert list(by_kind(tasks)) == ["tactic", "proof"]
    assert all(t.kind == "tactic" for t in select(tasks, "train", ["tactic"]))
    assert lean_texts(toy_dataset, tasks)[0].startswith("theorem t1")


def _write(folder: Path, lines: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tasks.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _task(**overrides: object) -> str:
    base = {
        "id": "a",
        "file": "A.lean",
        "kind": "tactic",
        "split": "train",
        "prefix": "p",
        "suffix": "",
        "middle": "rfl",
        "indent": 2,
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}},
    }
    return json.dumps({**base, **overrides})


def test_missing_folder_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="fim-rlvr export"):
        load_tasks(tmp_path / "nowhere")


def test_bad_lines_are_named(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"tasks.jsonl:2: not JSON"):
        load_tasks(_write(tmp_path / "a", [_task(), "{oops"]))
    with pytest.raises(DatasetError, match="missing field"):
        load_tasks(_write(tmp_path / "b", [json.dumps({"id": "x"})]))
    with pytest.raises(DatasetError, match="unknown hole kind"):
        load_tasks(_write(tmp_path / "c", [_task(kind="lemma")]))
    with pytest.raises(DatasetError, match="duplicate task id"):
        load_tasks(_write(tmp_path / "d", [_task(), _task()]))
    with pytest.raises(DatasetError, match="no tasks"):
        load_tasks(_write(tmp_path / "e", [""]))


def test_blank_lines_and_goals(tmp_path: Path) -> None:
    tasks = load_tasks(_write(tmp_path, ["", _task(goal="⊢ True"), "", _task(id="b", goal="  ")]))
    assert [t.goal for t in tasks] == ["⊢ True", None]
    # without files.jsonl the tokenizer text comes from the tasks themselves
    assert lean_texts(tmp_path, tasks) == ["prfl", "prfl"]


def test_no_tasks_of_the_requested_kinds_is_explained(tmp_path: Path) -> None:
    tasks = load_tasks(_write(tmp_path, [_task()]))
    with pytest.raises(DatasetError, match=r"no train-split tasks of kind\(s\) proof \(it has: tactic\)"):
        require_tasks(tasks, ["proof"], tmp_path)


def test_curriculum_unlocks_by_pass_rate_then_by_patience() -> None:
    curriculum = Curriculum(["proof", "tactic", "block"], unlock_at=0.5, patience=5)
    assert curriculum.active == ["tactic"]
    assert curriculum.update({"tactic": (1, 4)}) is None  # rate 0.25
    assert curriculum.update({"tactic": (4, 4)}) is None  # EMA 0.7 * 0.25 + 0.3 * 1 = 0.475
    assert curriculum.update({"tactic": (4, 4)}) == "block"  # 0.7 * 0.475 + 0.3 = 0.6325 >= 0.5
    assert curriculum.active == ["tactic", "block"]
    for _ in range(4):
        assert curriculum.update({"block": (0, 4)}) is None
    assert curriculum.update({"block": (0, 4)}) == "proof"  # patience: a hard kind never stalls the run
    assert curriculum.active == ["tactic", "block", "proof"]
    assert curriculum.rates["tactic"] == pytest.approx(0.6325)
    assert curriculum.weights()["block"] > curriculum.weights()["tactic"]


def test_curriculum_off_uses_every_kind() -> None:
    assert Curriculum(["proof", "tactic"], enabled=False).active == ["tactic", "proof"]


def test_sampler_resumes_exactly(toy_dataset: Path) -> None:
    groups = by_kind(select(load_tasks(toy_dataset), "train", ["tactic", "proof"]))
    weights = {"tactic": 1.0, "proof": 0.5}
    one = TaskSampler(groups, seed=3)
    first = [t.id for t in one.draw(30, weights)]
    saved = json.loads(json.dumps(one.state()))
    rest = [t.id for t in one.draw(40, weights)]
    two = TaskSampler(groups, seed=3)
    two.load_state(saved)
    assert [t.id for t in two.draw(40, weights)] == rest
    assert [t.id for t in TaskSampler(groups, seed=3).draw(30, weights)] == first
    assert [t.id for t in TaskSampler(groups, seed=4).draw(30, weights)] != first


def test_draws_follow_each_kind_s_share_of_tasks_tilted_by_its_weight(toy_dataset: Path) -> None:
    """Every task about equally likely: a kind with 15 times the tasks is drawn about 15 times as often (drawing
    kinds equally spent a quarter of lean-env's RL draws on its 14 `steps` holes, beside 335 whole proofs)."""
    tasks = select(load_tasks(toy_dataset), "train", ["tactic", "proof"])
    groups = {"tactic": [t for t in tasks if t.kind == "tactic"][:2], "proof": [t for t in tasks if t.kind == "proof"]}
    assert len(groups["proof"]) >= 15 * len(groups["tactic"]) / 2
    drawn = TaskSampler(groups, seed=1).draw(2000, {"tactic": 1.0, "proof": 1.0})
    share = sum(t.kind == "tactic" for t in drawn) / len(drawn)
    expected = len(groups["tactic"]) / (len(groups["tactic"]) + len(groups["proof"]))
    assert abs(share - expected) < 0.03, (share, expected)
    tilted = TaskSampler(groups, seed=1).draw(2000, {"tactic": 1.0, "proof": 0.1})  # proofs mostly solved
    tilted_share = sum(t.kind == "tactic" for t in tilted) / len(tilted)
    assert abs(tilted_share - 2 / (2 + 0.1 * len(groups["proof"]))) < 0.05, tilted_share


@dataclass(frozen=True)
class _Hole:
    """What the sampler reads of a task: its id, kind and file."""

    id: str
    file: str
    kind: str = "proof"


def _holes(files: dict[str, int]) -> dict[str, list[Task]]:
    return {"proof": [cast(Task, _Hole(f"{f}#{k}", f)) for f, n in files.items() for k in range(n)]}


def test_learnability_is_p_times_one_minus_p_with_a_floor() -> None:
    assert learnability(None) == 0.25  # an unmeasured file is tried as if p = 0.5
    assert learnability(0.5) == 0.25
    assert learnability(0.0) == learnability(1.0) == LEARNABILITY_FLOOR > 0
    assert learnability(0.1) == pytest.approx(0.09)


def test_learnability_draws_go_to_files_whose_rewards_differ() -> None:
    """A file the model always fails, or always proves, gives groups with equal rewards (no advantage): draws move to
    the file it proves half the time, in proportion to p(1 - p), and never leave the others entirely."""
    sampler = TaskSampler(_holes({"Fails.lean": 20, "Half.lean": 20, "Solved.lean": 20}), seed=5, by_learnability=True)
    first = sampler.draw(60, {"proof": 1.0})
    assert {t.file for t in first} == {"Fails.lean", "Half.lean", "Solved.lean"}  # nothing measured: every file
    sampler.observe({"Fails.lean": (0, 16), "Half.lean": (8, 16), "Solved.lean": (16, 16)})
    drawn = [t for _ in range(250) for t in sampler.draw(8, {"proof": 1.0})]
    share = {f: sum(t.file == f for t in drawn) / len(drawn) for f in ("Fails.lean", "Half.lean", "Solved.lean")}
    expected = 0.25 / (0.25 + 2 * LEARNABILITY_FLOOR)
    assert abs(share["Half.lean"] - expected) < 0.04, share
    assert share["Fails.lean"] > 0.02 and share["Solved.lean"] > 0.02, share


def test_learnability_draws_no_task_twice_in_one_batch_and_resume_exactly() -> None:
    groups = _holes({"A.lean": 3, "B.lean": 9})
    one = TaskSampler(groups, seed=2, by_learnability=True)
    one.observe({"A.lean": (1, 2), "B.lean": (0, 8)})
    batch = one.draw(12, {"proof": 1.0})
    assert len({t.id for t in batch}) == 12  # every task once, the file rates only order them
    saved = json.loads(json.dumps(one.state()))
    rest = [t.id for t in one.draw(20, {"proof": 1.0})]
    two = TaskSampler(groups, seed=2, by_learnability=True)
    two.load_state(saved)
    assert two.file_rates == one.file_rates
    assert [t.id for t in two.draw(20, {"proof": 1.0})] == rest
    old = {k: v for k, v in saved.items() if k != "file_rates"}  # a checkpoint from before learnability sampling
    three = TaskSampler(groups, seed=2, by_learnability=True)
    three.load_state(old)
    assert three.file_rates == {}


def test_observe_averages_like_the_curriculum_and_skips_unchecked_files() -> None:
    sampler = TaskSampler(_holes({"A.lean": 2}), seed=0, by_learnability=True)
    sampler.observe({"A.lean": (0, 0)})
    assert sampler.file_rates == {}
    sampler.observe({"A.lean": (4, 8)})
    sampler.observe({"A.lean": (8, 8)})
    assert sampler.file_rates["A.lean"] == pytest.approx(0.7 * 0.5 + 0.3 * 1.0)
