"""Parity with TRL's GRPOTrainer loss on identical tensors, for the objectives TRL also implements.

TRL's `GRPOTrainer._compute_loss(model, inputs)` is called unbound on a stub `self` that carries
only the attributes the loss reads, and whose `_get_per_token_logps_and_entropies` returns our
log-prob tensor (so no model runs and both sides differentiate the same leaf). Mapping:

    grpo   <-> loss_type="grpo"                  (beta 0 and beta 0.04 with a reference)
    drgrpo <-> loss_type="dr_grpo"               (max_completion_length)
    dapo   <-> loss_type="dapo"                  (num_items_in_batch = unmasked tokens of the batch)
    gspo   <-> loss_type="grpo", importance_sampling_level="sequence"

Every sequence keeps at least one unmasked token here: TRL counts a fully masked sequence in its
mean over sequences, we leave it out (test_algorithms.py covers that case). GSPO's clip fractions count informative
sequences only (advantage != 0), TRL's every sequence: compared after scaling.
"""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from fim_rlvr.algorithms import make

try:
    from trl.trainer.grpo_trainer import GRPOTrainer
    from trl.trainer.utils import nanstd
except ImportError as error:  # CI installs trl through the `test` extra
    print(f"test_trl_parity skipped: trl is not importable ({error}); pip install 'trl' to run it")
    pytest.skip(f"trl is not importable: {error}", allow_module_level=True)

B, T = 6, 5


class _Accelerator:
    """The single-process accelerator the loss sees: gathers and reductions are identities."""

    num_processes = 1

    def gather(self, tensor: torch.Tensor) -> torch.Tensor:
        return tensor

    def gather_for_metrics(self, tensor: torch.Tensor) -> torch.Tensor:
        return tensor

    def reduce(self, tensor: torch.Tensor, reduction: str = "sum") -> torch.Tensor:
        return tensor


def trl_stub(logp: torch.Tensor, loss_type: str, level: str, epsilon: float, epsilon_high: float, beta: float) -> Any:
    """A stand-in for GRPOTrainer's `self` with exactly the state `_compute_loss` reads."""
    return SimpleNamespace(
        loss_type=loss_type,
        importance_sampling_level=level,
        epsilon_low=epsilon,
        epsilon_high=epsilon_high,
        beta=beta,
        max_completion_length=T,
        top_entropy_quantile=1.0,
        off_policy_mask_threshold=None,
        use_vllm=False,
        vllm_importance_sampling_correction=False,
        aux_loss_enabled=False,
        _entropy_bonus_enabled=False,
        current_gradient_accumulation_steps=1,
        model=SimpleNamespace(training=True),
        accelerator=_Accelerator(),
        args=SimpleNamespace(use_bias_correction_kl=False, delta=None, steps_per_generation=1),
        _metrics={"train": defaultdict(list), "eval": defaultdict(list)},
        _get_per_token_logps_and_entropies=lambda *args, **kwargs: (logp, torch.zeros_like(logp), None),
    )


def random_batch(seed: int) -> dict[str, torch.Tensor]:
    """Log-probs whose ratios straddle both clip edges, ragged masks (every row non-empty), signed advantages."""
    g = torch.Generator().manual_seed(seed)
    old = -torch.rand(B, T, generator=g, dtype=torch.float64) * 3  # [B, T]
    logp = old + torch.randn(B, T, generator=g, dtype=torch.float64) * 0.3  # ρ spread around 1
    ref = old + torch.randn(B, T, generator=g, dtype=torch.float64) * 0.2
    lengths = torch.randint(1, T + 1, (B,), generator=g)  # [B]
    mask = (torch.arange(T)[None, :] < lengths[:, None]).long()  # [B, T], TRL's integer completion mask
    rewards = torch.randint(0, 2, (B,), generator=g).double()
    return {"logp": logp, "old": old, "ref": ref, "mask": mask, "rewards": rewards}


def trl_loss(batch: dict[str, torch.Tensor], stub_args: dict[str, Any], advantages: torch.Tensor) -> Any:
    logp = batch["logp"].clone().requires_grad_(True)
    stub = trl_stub(logp, **stub_args)
    inputs = {
        "prompt_ids": torch.zeros(B, 1, dtype=torch.long),
        "prompt_mask": torch.ones(B, 1, dtype=torch.long),
        "completion_ids": torch.zeros(B, T, dtype=torch.long),
        "completion_mask": batch["mask"],
        "advantages": advantages,
        "old_per_token_logps": batch["old"],
        "ref_per_token_logps": batch["ref"],
        "num_items_in_batch": batch["mask"].sum(),
    }
    loss = GRPOTrainer._compute_loss(stub, None, inputs)
    loss.backward()
    return loss, logp.grad, stub._metrics["train"]


TOKEN = {"level": "token", "epsilon": 0.2, "epsilon_high": 0.2, "beta": 0.0}
CASES = [
    pytest.param("grpo", {"beta": 0.0}, {**TOKEN, "loss_type": "grpo"}, id="grpo"),
    pytest.param("grpo", {"beta": 0.04}, {**TOKEN, "loss_type": "grpo", "beta": 0.04}, id="grpo-kl"),
    pytest.param("drgrpo", {"max_completion_length": T}, {**TOKEN, "loss_type": "dr_grpo"}, id="drgrpo"),
    pytest.param(
        "drgrpo",
        {"max_completion_length": T, "beta": 0.1},
        {**TOKEN, "loss_type": "dr_grpo", "beta": 0.1},
        id="drgrpo-kl",
    ),
    pytest.param("dapo", {}, {**TOKEN, "loss_type": "dapo", "epsilon_high": 0.28}, id="dapo"),
    pytest.param(
        "dapo", {"beta": 0.1}, {**TOKEN, "loss_type": "dapo", "epsilon_high": 0.28, "beta": 0.1}, id="dapo-kl"
    ),
    pytest.param(
        "gspo",
        {"epsilon": 0.02, "epsilon_high": 0.03},  # wide enough that some sequences stay unclipped
        {"loss_type": "grpo", "level": "sequence", "epsilon": 0.02, "epsilon_high": 0.03, "beta": 0.0},
        id="gspo-wide",
    ),
    pytest.param(
        "gspo",
        {},
        {"loss_type": "grpo", "level": "sequence", "epsilon": 3e-4, "epsilon_high": 4e-4, "beta": 0.0},
        id="gspo",
    ),
    pytest.param(
        "gspo",
        {"epsilon": 0.02, "epsilon_high": 0.03, "beta": 0.04},
        {"loss_type": "grpo", "level": "sequence", "epsilon": 0.02, "epsilon_high": 0.03, "beta": 0.04},
        id="gspo-kl",
    ),
]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("name", "overrides", "stub_args"), CASES)
def test_loss_and_gradient_match_trl(
    name: str, overrides: dict[str, object], stub_args: dict[str, Any], seed: int
) -> None:
    batch = random_batch(seed)
    algo = make(name, overrides)
    advantages = algo.advantages(batch["rewards"], torch.arange(B) // 3)  # two groups of three
    expected, expected_grad, trl_metrics = trl_loss(batch, stub_args, advantages)

    logp = batch["logp"].clone().requires_grad_(True)
    ref = batch["ref"] if algo.needs_reference else None
    loss, metrics = algo.loss(logp, batch["old"], batch["mask"], advantages, ref_logp=ref)
    loss.backward()

    torch.testing.assert_close(loss, expected, rtol=1e-10, atol=1e-12)
    assert logp.grad is not None
    torch.testing.assert_close(logp.grad, expected_grad, rtol=1e-10, atol=1e-12)
    # GSPO's clip fractions are over informative sequences (A != 0), TRL's over all of them: the same count of clipped
    # sequences, a different denominator (docs/ALGORITHMS.md, gspo).
    scale = metrics["informative_sequences"] / B if name == "gspo" else 1.0
    assert metrics["clip_fraction_low"] * scale == pytest.approx(trl_metrics["clip_ratio/low_mean"][0])
    assert metrics["clip_fraction_high"] * scale == pytest.approx(trl_metrics["clip_ratio/high_mean"][0])
    assert metrics["clip_fraction"] * scale == pytest.approx(trl_metrics["clip_ratio/region_mean"][0])
    if algo.needs_reference:
        assert metrics["kl"] == pytest.approx(trl_metrics["kl"][0])


def test_the_random_batches_exercise_both_clip_edges() -> None:
    """Guard against a parity test that passes only because nothing was ever clipped."""
    low = high = 0.0
    for seed in (0, 1, 2):
        batch = random_batch(seed)
        algo = make("grpo", {"beta": 0.0})
        advantages = algo.advantages(batch["rewards"], torch.arange(B) // 3)
        _, metrics = algo.loss(batch["logp"], batch["old"], batch["mask"], advantages)
        low, high = low + metrics["clip_fraction_low"], high + metrics["clip_fraction_high"]
    assert low > 0 and high > 0


def test_group_normalised_advantages_match_trls_formula() -> None:
    """TRL: (r - mean_g) / (nanstd_g + 1e-4), then NaN -> 0; nanstd is Bessel-corrected like torch.std."""
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.25, 0.5, 1.0], dtype=torch.float64)
    grouped = rewards.view(-1, 3)
    mean = grouped.mean(dim=1).repeat_interleave(3)
    std = nanstd(grouped, dim=1).repeat_interleave(3)
    expected = torch.nan_to_num((rewards - mean) / (std + 1e-4), nan=0.0)
    torch.testing.assert_close(make("grpo").advantages(rewards, torch.arange(9) // 3), expected)
    torch.testing.assert_close(make("drgrpo").advantages(rewards, torch.arange(9) // 3), rewards - mean)
