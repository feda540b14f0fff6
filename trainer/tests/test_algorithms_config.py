"""AlgorithmConfig: paper defaults per algorithm, overrides, loading from JSON / YAML, describe()."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fim_rlvr.algorithms import (
    ALGORITHM_NAMES,
    AlgorithmConfig,
    ConfigError,
    describe,
    load,
    make,
)
from fim_rlvr.algorithms.__main__ import main


def test_each_algorithm_gets_its_papers_defaults() -> None:
    grpo = make("grpo").config
    assert (grpo.epsilon, grpo.clip_high, grpo.beta) == (0.2, 0.2, 0.04)
    assert make("drgrpo").config.beta == 0.0
    dapo = make("dapo").config
    assert (dapo.epsilon, dapo.epsilon_high, dapo.beta) == (0.2, 0.28, 0.0)
    assert dapo.dynamic_sampling and dapo.overlong_shaping
    assert not dapo.mask_truncated_completions  # truncation is the model's doing: penalised, never filtered out
    assert not grpo.dynamic_sampling and not grpo.overlong_shaping and not grpo.mask_truncated_completions
    gspo = make("gspo").config
    assert (gspo.epsilon, gspo.epsilon_high, gspo.beta) == (3e-4, 4e-4, 0.0)
    dgpo = make("dgpo").config
    assert (dgpo.beta, dgpo.dpo_beta, dgpo.dpo_coef) == (0.04, 0.1, 1.0)


def test_overrides_merge_over_the_paper_defaults() -> None:
    config = make("dapo", {"epsilon_high": 0.3, "max_completion_length": 64}).config
    assert (config.epsilon, config.epsilon_high, config.max_completion_length) == (0.2, 0.3, 64)
    assert config.cache_len == 12  # one fifth of the budget, DAPO's ratio


def test_a_whole_config_is_taken_as_is() -> None:
    mine = AlgorithmConfig(epsilon=0.1, beta=0.0)
    assert make("dapo", mine).config is mine


def test_unknown_keys_are_an_error_listing_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="unknown algorithm option epsilom; valid options: epsilon, epsilon_high"):
        make("grpo", {"epsilom": 0.1})
    with pytest.raises(ConfigError, match="choose one of: grpo, drgrpo, dapo, gspo, dgpo"):
        make("ppo")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"beta": "0.1"}, "beta must be a number"),
        ({"beta": -0.1}, "beta must be a finite number >= 0"),
        ({"epsilon": 1.5}, "epsilon must be below 1"),
        ({"dynamic_sampling": 1}, "dynamic_sampling must be true or false"),
        ({"max_completion_length": 0}, "max_completion_length must be a whole number >= 1"),
        ({"max_completion_length": 12.5}, "max_completion_length must be a whole number >= 1"),
        ({"epsilon": True}, "epsilon must be a number"),
    ],
)
def test_bad_values_say_what_is_wrong(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        make("grpo", overrides)


def test_a_cache_longer_than_the_budget_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"overlong_cache_len \(80\) must not exceed max_completion_length \(64\)"):
        make("dapo", {"max_completion_length": 64, "overlong_cache_len": 80})
    assert make("dapo", {"max_completion_length": 64, "overlong_cache_len": 64}).config.cache_len == 64


def test_load_merges_file_then_json_over_the_defaults(tmp_path: Path) -> None:
    yaml_file = tmp_path / "algo.yaml"
    yaml_file.write_text("epsilon: 0.1\nbeta: 0.0\n", encoding="utf-8")
    config = load("grpo", algo_config='{"beta": 0.02}', config_file=yaml_file)
    assert (config.epsilon, config.beta) == (0.1, 0.02)  # the command line's JSON wins over the file
    json_file = tmp_path / "train.json"
    json_file.write_text(json.dumps({"algorithm": "gspo", "steps": 9, "algo_config": {"epsilon_high": 5e-4}}))
    assert load("gspo", config_file=json_file).epsilon_high == 5e-4  # a trainer config file: its algo_config
    assert load("dapo") == make("dapo").config


def test_load_errors_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"not valid JSON .*write an object such as"):
        load("grpo", algo_config="{epsilon: 0.1}")
    with pytest.raises(ConfigError, match="must be a JSON object"):
        load("grpo", algo_config="[1, 2]")
    with pytest.raises(ConfigError, match=r"cannot read config file .*check the path"):
        load("grpo", config_file=tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("epsilon: [0.1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML or JSON"):
        load("grpo", config_file=bad)
    typo = tmp_path / "typo.yaml"
    typo.write_text("epsilon_hi: 0.3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown algorithm option epsilon_hi"):
        load("dapo", config_file=typo)


def test_describe_lists_every_algorithm_with_its_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    entries = describe()
    assert [e["name"] for e in entries] == list(ALGORITHM_NAMES)
    for entry in entries:
        assert entry["description"] and entry["paper"]
        assert entry["defaults"] == make(entry["name"]).config.to_dict()
    assert main(["--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(entries))
    assert main([]) == 0
    table = capsys.readouterr().out
    assert "gspo" in table and "epsilon=0.0003" in table and "dynamic_sampling=true" in table


def test_listing_the_algorithms_does_not_load_torch() -> None:
    """`fim-rlvr algorithms` runs `python -m fim_rlvr.algorithms --json`: it must stay fast and work
    before torch is installed. Checked in a fresh interpreter (this one has torch loaded already)."""
    script = (
        "import sys, fim_rlvr\n"
        "parent = 'torch' in sys.modules\n"
        "from fim_rlvr.algorithms.__main__ import main\n"
        "main(['--json'])\n"
        "print('PARENT-LOADS-TORCH' if parent else ('TORCH' if 'torch' in sys.modules else 'NO-TORCH'))\n"
    )
    trainer_root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(trainer_root), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    verdict = done.stdout.strip().splitlines()[-1]
    if verdict == "PARENT-LOADS-TORCH":
        pytest.skip("fim_rlvr/__init__.py imports torch itself, so the listing cannot avoid it")
    assert verdict == "NO-TORCH"
    assert json.loads(done.stdout[: done.stdout.rindex("]") + 1])[0]["name"] == "grpo"
