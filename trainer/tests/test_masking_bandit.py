"""Nothing a candidate chooses may escape its penalty: a three-armed policy (prove / fail / hang) trained with the
trainer's own scoring (`step.loss.score`: fim_rlvr.core.outcomes' masking, the algorithm's advantages and token
mask) and the trainer's optimiser (AdamW) does not drift toward hanging when a timeout the candidate caused is a
failure, and does drift toward it when such timeouts are masked (`timeout_reward: mask`, the old behaviour).

Why: a masked sample has no gradient of its own, while its failing siblings are pushed down; under a softmax the
mass they lose flows to every other arm, the masked one included. Run this file directly for the figures
(`trainer/.venv/bin/python trainer/tests/test_masking_bandit.py`); docs/ALGORITHMS.md quotes them.

The same script also trains an arm that runs past its budget (`truncate`) under DAPO's overlong penalty, with and
without its overlong filtering (`mask_truncated_completions`); docs/ALGORITHMS.md says what that shows and what not.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fim_rlvr.algorithms import make
from fim_rlvr.core.protocol import Verdict
from fim_rlvr.step.loss import score

INITIAL = {"prove": 0.05, "fail": 0.60, "hang": 0.35}
GROUPS, GROUP_SIZE, STEPS, LR = 8, 8, 40, 0.05


def verdict_of(arm: str) -> Verdict:
    """What the verifier answers for each arm; `hang` runs past its check's own limit (the candidate's doing)."""
    if arm == "prove":
        return Verdict("t", "proved", 1.0)
    if arm == "hang":
        return Verdict("t", "timeout", 0.0, cause="candidate")
    return Verdict("t", "failed", 0.0)  # fail, and truncate: the cut-off text does not check


def train(
    algorithm: str,
    timeout_reward: str,
    *,
    arms: dict[str, float] = INITIAL,
    algo_config: dict[str, object] | None = None,
    seed: int = 0,
) -> list[dict[str, float]]:
    """pi after each step (the first entry is the initial policy). Each arm is a one-token completion standing for
    a whole answer; the `truncate` arm, when present, is an answer that hit the budget of 4 tokens without ending
    (DAPO's overlong penalty, with a cache of 2, gives it -1; the others are far below the cache)."""
    names = list(arms)
    logits = torch.log(torch.tensor([arms[n] for n in names])).requires_grad_()
    reference = torch.log_softmax(logits.detach(), -1)  # the KL anchor: the policy RL starts from
    optimiser = torch.optim.AdamW([logits], lr=LR, weight_decay=0.0)
    algo = make(algorithm, {"max_completion_length": 4, "overlong_cache_len": 2, **(algo_config or {})})
    generator = torch.Generator().manual_seed(seed)
    group_ids = torch.arange(GROUPS).repeat_interleave(GROUP_SIZE)  # [B]
    batch = GROUPS * GROUP_SIZE
    history = [dict(zip(names, torch.softmax(logits, -1).tolist(), strict=True))]
    for _ in range(STEPS):
        with torch.no_grad():
            picks = torch.multinomial(torch.softmax(logits, -1), batch, replacement=True, generator=generator)  # [B]
        chosen = [names[int(i)] for i in picks]
        logp = torch.log_softmax(logits, -1)[picks].unsqueeze(1)  # [B, 1]
        rewards, advantages, mask = score(
            algo,
            [verdict_of(a) for a in chosen],
            torch.ones(batch, 1),
            group_ids,
            lengths=[4 if a == "truncate" else 1 for a in chosen],
            truncated=[a == "truncate" for a in chosen],
            timeout_reward=timeout_reward,
        )
        ref = reference[picks].unsqueeze(1) if algo.needs_reference else None  # [B, 1]
        loss, _ = algo.loss(logp, logp.detach(), mask, advantages, ref, group_ids, rewards)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        history.append(dict(zip(names, torch.softmax(logits, -1).tolist(), strict=True)))
    return history


ALGORITHMS = ["grpo", "drgrpo", "dapo", "gspo", "dgpo"]
RATIO = INITIAL["hang"] / INITIAL["fail"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_policy_that_can_hang_does_not_drift_toward_hanging(algorithm: str) -> None:
    history = train(algorithm, "failure")
    hang = [h["hang"] for h in history]
    assert max(hang) <= INITIAL["hang"] + 0.02, hang  # never rises beyond sampling noise
    assert hang[-1] < INITIAL["hang"] - 0.2, hang  # and falls as proving takes over (measured 0.35 -> 0.08)
    end = history[-1]
    assert abs(end["hang"] / end["fail"] - RATIO) < 0.15 * RATIO  # hang and fail are scored alike: pushed alike


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_masking_the_candidates_timeouts_makes_it_drift_toward_hanging(algorithm: str) -> None:
    masked, scored = train(algorithm, "mask")[-1], train(algorithm, "failure")[-1]
    assert masked["hang"] > 3 * scored["hang"], (masked, scored)  # measured 0.29-0.55 against 0.08
    assert masked["hang"] / masked["fail"] > 4 * RATIO  # the mass failures lose flows to the masked arm


def test_infrastructure_faults_stay_masked_whatever_timeout_reward_says() -> None:
    infra = Verdict("t", "timeout", 0.0, cause="infrastructure")
    lost = Verdict("t", "crashed", 0.0, cause="infrastructure")
    crash = Verdict("t", "crashed", 0.0, cause="candidate")
    algo = make("grpo", {"beta": 0.0})
    rewards, _, mask = score(
        algo,
        [infra, lost, crash, Verdict("t", "proved", 1.0)],
        torch.ones(4, 1),
        torch.zeros(4, dtype=torch.long),
        lengths=[1] * 4,
        truncated=[False] * 4,
        timeout_reward="failure",
    )
    assert torch.isnan(rewards[:2]).all() and rewards[2:].tolist() == [0.0, 1.0]
    assert mask.squeeze(1).tolist() == [0.0, 0.0, 1.0, 1.0]


TRUNCATING = {"prove": 0.05, "fail": 0.60, "truncate": 0.35}


def test_the_dapo_preset_trains_on_truncated_completions_with_their_penalty() -> None:
    """Truncation is the model's doing (it did not end within its budget): the dapo preset keeps truncated
    completions in the loss with the overlong penalty, and the truncating arm falls."""
    algo = make("dapo", {"max_completion_length": 4, "overlong_cache_len": 2})
    rewards, advantages, mask = score(
        algo,
        [verdict_of(a) for a in ("prove", "fail", "truncate")],
        torch.ones(3, 1),
        torch.zeros(3, dtype=torch.long),
        lengths=[1, 1, 4],
        truncated=[False, False, True],
        timeout_reward="failure",
    )
    assert rewards.tolist() == [1.0, 0.0, -1.0] and mask.squeeze(1).tolist() == [1.0, 1.0, 1.0]
    assert advantages[2] < advantages[1] < advantages[0]
    truncate = [h["truncate"] for h in train("dapo", "failure", arms=TRUNCATING)]
    assert max(truncate) <= TRUNCATING["truncate"] + 0.02 and truncate[-1] < TRUNCATING["truncate"] - 0.2


def main() -> None:
    """Print pi(hang) (pi(truncate)) at the start, its peak and at the end for each variant, seeds 0-2, and the
    ratio pi(hang) / pi(fail) at the end (the initial ratio is 0.58)."""
    variants: list[tuple[str, str, str, dict[str, float], dict[str, object] | None]] = [
        (f"{a}, timeout_reward {t}", a, t, INITIAL, None)
        for a in ("grpo", "drgrpo", "dapo", "gspo", "dgpo")
        for t in ("failure", "mask")
    ]
    variants += [
        ("dapo preset (penalty, no filter)", "dapo", "failure", TRUNCATING, {"mask_truncated_completions": False}),
        ("dapo, filter and penalty (paper)", "dapo", "failure", TRUNCATING, {"mask_truncated_completions": True}),
    ]
    print(f"{STEPS} steps, {GROUPS} groups x {GROUP_SIZE}, AdamW lr {LR}; pi(hang or truncate): start -> peak -> end")
    for label, algorithm, timeout_reward, arms, extra in variants:
        arm = "hang" if "hang" in arms else "truncate"
        runs = [train(algorithm, timeout_reward, arms=arms, algo_config=extra, seed=s) for s in range(3)]
        cells = [
            f"{r[0][arm]:.2f}->{max(h[arm] for h in r):.2f}->{r[-1][arm]:.2f} (/fail {r[-1][arm] / r[-1]['fail']:.2f})"
            for r in runs
        ]
        print(f"  {label:<36} " + "  ".join(cells))


if __name__ == "__main__":
    main()
