"""TrainConfig: defaults, unknown keys listed, values checked, YAML and JSON files."""

from __future__ import annotations

from pathlib import Path

import pytest

from fim_rlvr.algorithms import make
from fim_rlvr.core.config import (
    EMBEDDED_GRPO_BETA,
    PRESETS,
    ConfigError,
    TrainConfig,
    defaults_line,
    from_dict,
    from_file,
    valid_keys,
)


def test_defaults_and_sft_default_per_model() -> None:
    config = from_dict({})
    assert config == TrainConfig()
    assert config.resolved_sft_steps() > 0  # the embedded model gets a warm start
    assert from_dict({"model": "/models/x"}).resolved_sft_steps() == 0
    assert from_dict({"model": "/models/x", "sft_steps": 5}).resolved_sft_steps() == 5


def test_defaults_follow_what_is_trained() -> None:
    """The embedded model keeps today's values; a model path gets a real prover's (lr 1e-6 full, 1e-5 LoRA)."""
    embedded = from_dict({})
    assert (embedded.learning_rate, embedded.max_new_tokens, embedded.temperature, embedded.max_prompt_tokens) == (
        1e-4,
        48,
        0.4,
        256,
    )
    assert embedded.micro_batch_size is None and embedded.sft_learning_rate == 3e-3
    full = from_dict({"model": "/models/x"})
    assert (full.learning_rate, full.max_new_tokens, full.temperature, full.max_prompt_tokens) == (
        1e-6,
        2048,
        1.0,
        2048,
    )
    assert full.micro_batch_size == 8 and full.sft_learning_rate == 2e-5
    lora = from_dict({"model": "/models/x", "lora_r": 16})
    assert (lora.learning_rate, lora.sft_learning_rate, lora.max_new_tokens) == (1e-5, 2e-4, 2048)
    assert from_dict({"lora_r": 4}).learning_rate == 1e-4  # LoRA on the embedded model: the embedded model's values
    given = from_dict({"model": "/models/x", "learning_rate": 3e-6, "micro_batch_size": None, "temperature": None})
    assert given.learning_rate == 3e-6 and given.micro_batch_size is None  # explicit null: one pass
    assert given.temperature == 1.0  # null on a key that is not nullable: the default
    assert {frozenset(p.values) for p in PRESETS.values()} == {frozenset(PRESETS["embedded"].values)}


def test_the_start_line_names_the_defaults_their_source_and_what_the_run_changed() -> None:
    line = defaults_line(from_dict({"model": "/models/x", "temperature": 0.7}))
    assert line.startswith("defaults for full fine-tuning of a model path: learning_rate 1e-06, ")
    assert "DeepSeek-Prover-V1.5" in line and "TRL" in line
    assert line.endswith("; set for this run: temperature 0.7 (default 1)")
    embedded = defaults_line(from_dict({}))
    assert "temperature 0.4" in embedded and "grpo's beta 0;" in embedded and "set for this run" not in embedded
    assert "micro_batch_size none (one pass over the whole batch)" in embedded and "null" not in embedded


def test_embedded_grpo_uses_its_own_beta_and_other_runs_keep_paper_defaults() -> None:
    embedded = from_dict({"max_new_tokens": 20, "group_size": 4}).resolved_algo_config()
    assert embedded == {"max_completion_length": 20, "num_generations": 4, "beta": EMBEDDED_GRPO_BETA}
    assert make("grpo", embedded).config.beta == EMBEDDED_GRPO_BETA != make("grpo").config.beta
    assert from_dict({"algo_config": {"beta": 0.1}}).resolved_algo_config()["beta"] == 0.1  # explicit wins
    assert "beta" not in from_dict({"model": "/models/x"}).resolved_algo_config()  # paper default for a model path
    for name in ("drgrpo", "dapo", "gspo", "dgpo"):
        resolved = from_dict({"algorithm": name}).resolved_algo_config()
        assert make(name, resolved).config.beta == make(name).config.beta


def test_kinds_unlock_one_by_one_only_without_a_warm_start() -> None:
    assert not from_dict({}).staged_curriculum()  # the embedded model's SFT has taught every kind
    assert from_dict({"sft_steps": 0}).staged_curriculum()
    assert from_dict({"model": "/models/x"}).staged_curriculum()
    assert not from_dict({"model": "/models/x", "curriculum": False}).staged_curriculum()


def test_unknown_keys_list_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        from_dict({"stepz": 3, "lr": 1})
    message = str(caught.value)
    assert "lr, stepz" in message
    assert all(key in message for key in valid_keys())


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"algorithm": "ppo"}, "unknown algorithm 'ppo'"),
        ({"kinds": []}, "kinds must be"),
        ({"kinds": ["lemma"]}, "kinds must be"),
        ({"group_size": 0}, "group_size must be a positive integer"),
        ({"group_size": 1}, "group_size must be at least 2"),
        ({"steps": -1}, "steps must be a non-negative integer"),
        ({"top_p": 0}, "top_p"),
        ({"eval_limit": 0}, "eval_limit"),
        ({"task_sampling": "hardest"}, "task_sampling must be kind or learnability"),
        ({"warm_start_data": "mathlib"}, "warm_start_data must be reference or portfolio"),
        ({"embedded_width": 100}, "embedded_width must be a multiple of 32"),
        ({"embedded_layers": 0}, "embedded_layers must be a positive integer"),
    ],
)
def test_bad_values_are_explained(raw: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        from_dict(raw)


def test_nullable_keys_accept_null() -> None:
    config = from_dict({"model": None, "sft_steps": None, "eval_limit": None, "goal_in_prompt": None})
    assert config.model is None and config.eval_limit is None


def test_yaml_and_json_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("steps: 3\nalgorithm: dapo\nalgo_config:\n  epsilon_high: 0.3\n")
    config = from_file(tmp_path / "a.yaml")
    assert (config.steps, config.algorithm, config.algo_config) == (3, "dapo", {"epsilon_high": 0.3})
    (tmp_path / "b.json").write_text('{"group_size": 4}')
    assert from_file(tmp_path / "b.json").group_size == 4
    (tmp_path / "c.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        from_file(tmp_path / "c.yaml")
