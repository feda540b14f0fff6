"""DAPO's sampling side: dynamic sampling (group filter + refill), overlong shaping, truncation masks."""

from __future__ import annotations

import math

import pytest
import torch

from fim_rlvr.algorithms import make
from fim_rlvr.algorithms.sampling import (
    informative,
    is_informative,
    mask_truncated,
    overlong_penalty,
    refill,
    shape_overlong,
)

NAN = float("nan")


def test_overlong_penalty_is_zero_then_linear_then_minus_one() -> None:
    # L_max = 10, L_cache = 4: no penalty up to 6 tokens, (6 - |y|) / 4 up to 10, -1 beyond
    lengths = torch.tensor([0, 6, 7, 8, 10, 11, 50])
    penalty = overlong_penalty(lengths, max_len=10, cache_len=4)
    assert penalty.tolist() == pytest.approx([0.0, 0.0, -0.25, -0.5, -1.0, -1.0, -1.0])


def test_shape_overlong_adds_the_penalty_and_keeps_nan() -> None:
    rewards = torch.tensor([1.0, 0.5, NAN])
    shaped = shape_overlong(rewards, torch.tensor([3, 9, 9]), max_len=10, cache_len=4)
    assert shaped[:2].tolist() == pytest.approx([1.0, 0.5 - 0.75])
    assert math.isnan(shaped[2].item())


def test_overlong_cache_longer_than_the_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="cache length"):
        overlong_penalty(torch.tensor([1]), max_len=4, cache_len=5)


def test_mask_truncated_drops_whole_rows_and_keeps_the_dtype() -> None:
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]], dtype=torch.float32)
    out = mask_truncated(mask, torch.tensor([False, True]))
    assert out.dtype == torch.float32
    assert out.tolist() == [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]


def test_informative_keeps_groups_whose_valid_rewards_differ() -> None:
    rewards = torch.tensor([1.0, 1.0, 0.0, 1.0, NAN, 1.0, 0.5, 0.25, 0.25, 0.75])
    groups = ["a", "a", "b", "b", "c", "c", "d", "e", "e", "e"]
    # a: all equal; b: differ; c: one valid reward; d: alone; e: 0.25, 0.25, 0.75 differ
    assert informative(rewards, groups).tolist() == [False, False, True, True, False, False, False, True, True, True]
    assert is_informative([0.0, 1.0]) and not is_informative([1.0, 1.0]) and not is_informative([1.0, NAN])


def test_refill_keeps_informative_groups_until_the_batch_is_full() -> None:
    rewards = {
        "g1": [0.0, 0.0],
        "g2": [1.0, 0.0],
        "g3": [1.0, 1.0],
        "g4": [0.0, 1.0],
        "g5": [0.5, 0.0],
        "g6": [1.0, 0.0],
    }
    first = refill([], ["g1", "g2", "g3", "g4"], rewards.__getitem__, target=3)
    assert first.batch == ("g2", "g4") and first.dropped == 2 and first.missing == 1 and not first.full
    second = refill(first.batch, ["g5", "g6"], rewards.__getitem__, target=3)
    assert second.batch == ("g2", "g4", "g5") and second.surplus == 1 and second.dropped == 0 and second.full


def test_dapo_turns_its_sampling_hooks_on_and_grpo_leaves_them_off() -> None:
    dapo = make("dapo", {"max_completion_length": 10})  # cache defaults to 10 // 5 = 2: penalty from 8 tokens
    grpo = make("grpo", {"max_completion_length": 10})
    rewards, lengths = torch.tensor([1.0, 1.0, 1.0]), torch.tensor([8, 9, 10])
    assert dapo.shape_rewards(rewards, lengths).tolist() == pytest.approx([1.0, 0.5, 0.0])
    assert grpo.shape_rewards(rewards, lengths).tolist() == [1.0, 1.0, 1.0]
    mask, truncated = torch.ones(2, 2), torch.tensor([True, False])
    # Overlong filtering is off in the preset (truncation is the model's doing: penalised, not filtered out) ...
    assert dapo.completion_mask(mask, truncated).tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert grpo.completion_mask(mask, truncated).tolist() == [[1.0, 1.0], [1.0, 1.0]]
    # ... and available as the paper's option.
    paper = make("dapo", {"max_completion_length": 10, "mask_truncated_completions": True})
    assert paper.completion_mask(mask, truncated).tolist() == [[0.0, 0.0], [1.0, 1.0]]
    same = torch.tensor([1.0, 1.0, 0.0, 1.0])
    assert dapo.informative_groups(same, [0, 0, 1, 1]).tolist() == [False, False, True, True]
    assert grpo.informative_groups(same, [0, 0, 1, 1]).tolist() == [True, True, True, True]


def test_explicit_cache_length_and_missing_budget() -> None:
    dapo = make("dapo", {"max_completion_length": 10, "overlong_cache_len": 5})
    assert dapo.shape_rewards(torch.tensor([0.0]), torch.tensor([7])).tolist() == pytest.approx([-0.4])
    with pytest.raises(ValueError, match="max_completion_length"):
        make("dapo").shape_rewards(torch.tensor([0.0]), torch.tensor([7]))
