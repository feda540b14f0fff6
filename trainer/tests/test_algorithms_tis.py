"""Truncated importance sampling for vLLM rollouts: the weights by hand, their path through every
algorithm's loss, and parity with TRL 1.16's `_compute_loss` given the same importance-sampling ratio.

TRL computes the ratio inline in `_generate_and_score_completions` (not callable on its own), so the
weights themselves are checked against hand-computed values of TRL's formula; the loss that applies them
is TRL's own code, called unbound as in test_trl_parity.py.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from fim_rlvr.algorithms import ConfigError, make, resolve
from fim_rlvr.algorithms.config import ALGORITHM_NAMES
from fim_rlvr.algorithms.importance import importance_weights, mismatch_metrics

NAN = math.nan


def test_token_truncate_clips_each_token_ratio_at_the_cap() -> None:
    old = torch.tensor([[math.log(0.5), math.log(0.9), 0.0]])  # [1, 3]
    vllm = torch.tensor([[math.log(0.1), math.log(0.9), -2.0]])
    mask = torch.tensor([[1, 1, 0]])
    result = importance_weights(old, vllm, mask, "token_truncate", None, 3.0)
    # ratios 0.5/0.1 = 5 -> 3 (truncated), 0.9/0.9 = 1, masked token -> exp(0) = 1
    torch.testing.assert_close(result.weights, torch.tensor([[3.0, 1.0, 1.0]]))
    assert result.outside.tolist() == [[True, False, False]]


def test_token_mask_zeroes_ratios_outside_the_bounds() -> None:
    old = torch.tensor([[math.log(0.5), math.log(0.2), math.log(0.3)]])
    vllm = torch.tensor([[math.log(0.1), math.log(0.4), math.log(0.3)]])
    result = importance_weights(old, vllm, torch.ones(1, 3), "token_mask", 0.6, 3.0)
    # ratios 5 (above 3: 0), 0.5 (below 0.6: 0), 1 (kept)
    torch.testing.assert_close(result.weights, torch.tensor([[0.0, 0.0, 1.0]]))


def test_sequence_modes_use_the_summed_difference() -> None:
    old = torch.tensor([[-1.0, -1.0, -9.0], [-1.0, -2.0, -3.0]])
    vllm = torch.tensor([[-1.5, -1.2, 0.0], [-1.0, -2.5, -3.0]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    # row 0: 0.5 + 0.2 = 0.7 (the masked third token does not count); row 1: 0.5
    truncated = importance_weights(old, vllm, mask, "sequence_truncate", None, 1.9)
    torch.testing.assert_close(truncated.weights, torch.tensor([[1.9], [math.exp(0.5)]]))
    masked = importance_weights(old, vllm, mask, "sequence_mask", None, 1.9)
    torch.testing.assert_close(masked.weights, torch.tensor([[0.0], [math.exp(0.5)]]))


def test_a_token_without_a_vllm_logprob_gets_ratio_one() -> None:
    old = torch.tensor([[-1.0, -2.0]])
    result = importance_weights(old, torch.tensor([[NAN, -2.5]]), torch.ones(1, 2), "token_truncate", None, 3.0)
    torch.testing.assert_close(result.weights, torch.tensor([[1.0, math.exp(0.5)]]))


def test_mismatch_metrics_measure_the_gap_over_unmasked_scored_tokens() -> None:
    old = torch.tensor([[-1.0, -1.0, -5.0], [-2.0, -1.0, 0.0]])
    vllm = torch.tensor([[-1.5, -0.8, 0.0], [NAN, -2.5, 0.0]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 0]])
    result = importance_weights(old, vllm, mask, "token_truncate", None, 3.0)
    metrics = mismatch_metrics(old, vllm, mask, result)
    assert metrics["sampling_logp_difference_mean"] == pytest.approx((0.5 + 0.2 + 1.5) / 3)
    assert metrics["sampling_logp_difference_max"] == pytest.approx(1.5)
    ratios = [math.exp(0.5), math.exp(-0.2), 1.0, 3.0]  # exp(1.5) = 4.48 is truncated to 3
    assert metrics["importance_sampling_ratio_min"] == pytest.approx(min(ratios))
    assert metrics["importance_sampling_ratio_mean"] == pytest.approx(sum(ratios) / 4)
    assert metrics["importance_sampling_ratio_max"] == pytest.approx(3.0)
    assert metrics["importance_sampling_clipped_fraction"] == pytest.approx(1 / 4)


def test_options_carry_trls_names_defaults_and_checks() -> None:
    config = make("grpo").config
    assert config.vllm_importance_sampling_correction is True
    assert config.vllm_importance_sampling_mode == "sequence_mask"
    assert config.vllm_importance_sampling_clip_max == 3.0
    assert config.vllm_importance_sampling_clip_min is None
    assert resolve("gspo", {"vllm_importance_sampling_mode": "token_truncate"}).vllm_importance_sampling_mode == (
        "token_truncate"
    )
    with pytest.raises(ConfigError, match="token_truncate, token_mask"):
        resolve("grpo", {"vllm_importance_sampling_mode": "tokens"})
    with pytest.raises(ConfigError, match="must not exceed"):
        resolve("grpo", {"vllm_importance_sampling_clip_min": 2.0, "vllm_importance_sampling_clip_max": 1.0})
    with pytest.raises(ConfigError, match=">= 0"):
        resolve("grpo", {"vllm_importance_sampling_clip_max": -1.0})


def _batch(seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    B, T = 6, 5
    old = -torch.rand(B, T, generator=g, dtype=torch.float64) * 3
    logp = old + torch.randn(B, T, generator=g, dtype=torch.float64) * 0.3
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    mask = (torch.arange(T)[None, :] < lengths[:, None]).long()
    rewards = torch.randint(0, 2, (B,), generator=g).double()
    rewards[0], rewards[1] = 1.0, 0.0  # dgpo has a pair in the first group
    weights = 0.5 + torch.rand(B, T, generator=g, dtype=torch.float64) * 2
    return {"logp": logp, "old": old, "mask": mask, "rewards": rewards, "weights": weights}


@pytest.mark.parametrize("name", ALGORITHM_NAMES)
def test_unit_weights_change_nothing_and_other_weights_change_the_loss(name: str) -> None:
    """Weights of exactly 1 (what transformers-backend rollouts amount to) leave every loss and gradient as
    without weights; other weights reach the loss of every algorithm."""
    batch = _batch(0)
    algo = make(name, {"max_completion_length": 5, "beta": 0.0})
    groups = torch.arange(6) // 3
    advantages = algo.advantages(batch["rewards"], groups)

    def run(weights: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        logp = batch["logp"].clone().requires_grad_(True)
        rewards = batch["rewards"]
        loss, _ = algo.loss(
            logp, batch["old"], batch["mask"], advantages, group_ids=groups, rewards=rewards, is_weights=weights
        )
        loss.backward()
        assert logp.grad is not None
        return loss.detach(), logp.grad

    plain, plain_grad = run(None)
    ones, ones_grad = run(torch.ones(6, 5, dtype=torch.float64))
    assert torch.equal(plain, ones) and torch.equal(plain_grad, ones_grad)
    weighted, _ = run(batch["weights"])
    assert not torch.isclose(weighted, plain)


def test_weights_must_be_per_token_or_per_sequence() -> None:
    batch = _batch(1)
    algo = make("grpo", {"beta": 0.0})
    with pytest.raises(ValueError, match="is_weights must be"):
        algo.loss(batch["logp"], batch["old"], batch["mask"], torch.zeros(6), is_weights=torch.ones(6, 2))


# ------------------------------------------------------------------------------------------------ TRL parity

try:
    from test_trl_parity import B, T, random_batch, trl_stub
    from trl.trainer.grpo_trainer import GRPOTrainer
except ImportError as error:  # trl comes with the `test` extra
    GRPOTrainer = None
    _TRL_MISSING = f"trl is not importable ({error}); pip install 'trl' to run the TIS parity tests"
else:
    _TRL_MISSING = ""

TOKEN = {"level": "token", "epsilon": 0.2, "epsilon_high": 0.2, "beta": 0.0}
PARITY = [
    pytest.param("grpo", {"beta": 0.0}, {**TOKEN, "loss_type": "grpo"}, id="grpo"),
    pytest.param("grpo", {"beta": 0.04}, {**TOKEN, "loss_type": "grpo", "beta": 0.04}, id="grpo-kl"),
    pytest.param("drgrpo", {"max_completion_length": 5}, {**TOKEN, "loss_type": "dr_grpo"}, id="drgrpo"),
    pytest.param("dapo", {}, {**TOKEN, "loss_type": "dapo", "epsilon_high": 0.28}, id="dapo"),
    pytest.param(
        "gspo",
        {"epsilon": 0.02, "epsilon_high": 0.03},
        {"loss_type": "grpo", "level": "sequence", "epsilon": 0.02, "epsilon_high": 0.03, "beta": 0.0},
        id="gspo",
    ),
    pytest.param(
        "gspo",
        {"epsilon": 0.02, "epsilon_high": 0.03, "beta": 0.04},
        {"loss_type": "grpo", "level": "sequence", "epsilon": 0.02, "epsilon_high": 0.03, "beta": 0.04},
        id="gspo-kl",
    ),
]


@pytest.mark.parametrize("mode", ["token_truncate", "token_mask", "sequence_truncate", "sequence_mask"])
@pytest.mark.parametrize(("name", "overrides", "stub_args"), PARITY)
def test_weighted_loss_and_gradient_match_trl(
    name: str, overrides: dict[str, object], stub_args: dict[str, Any], mode: str
) -> None:
    if GRPOTrainer is None:
        print(f"skipped: {_TRL_MISSING}")
        pytest.skip(_TRL_MISSING)
    batch = random_batch(0)
    g = torch.Generator().manual_seed(7)
    sampling = batch["old"] + torch.randn(B, T, generator=g, dtype=torch.float64) * 0.6  # a visible mismatch
    result = importance_weights(batch["old"], sampling, batch["mask"], mode, 0.7, 1.6)
    assert bool(result.outside.any())  # the bounds do something in every mode
    algo = make(name, overrides)
    advantages = algo.advantages(batch["rewards"], torch.arange(B) // 3)

    logp_trl = batch["logp"].clone().requires_grad_(True)
    stub = trl_stub(logp_trl, **stub_args)
    stub.use_vllm = True
    stub.vllm_importance_sampling_correction = True
    inputs = {
        "prompt_ids": torch.zeros(B, 1, dtype=torch.long),
        "prompt_mask": torch.ones(B, 1, dtype=torch.long),
        "completion_ids": torch.zeros(B, T, dtype=torch.long),
        "completion_mask": batch["mask"],
        "advantages": advantages,
        "old_per_token_logps": batch["old"],
        "ref_per_token_logps": batch["ref"],
        "num_items_in_batch": batch["mask"].sum(),
        "importance_sampling_ratio": result.weights,
    }
    expected = GRPOTrainer._compute_loss(stub, None, inputs)
    expected.backward()

    logp = batch["logp"].clone().requires_grad_(True)
    ref = batch["ref"] if algo.needs_reference else None
    loss, _ = algo.loss(logp, batch["old"], batch["mask"], advantages, ref_logp=ref, is_weights=result.weights)
    loss.backward()
    torch.testing.assert_close(loss, expected, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(logp.grad, logp_trl.grad, rtol=1e-10, atol=1e-12)
