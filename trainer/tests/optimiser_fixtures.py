"""Groups of rollouts for the optimiser's tests: a tiny model, completions of varied lengths, rewards that vary
within groups, a masked sample and a truncated one, and old log-probs a little off the model's own (so the clip
is active on some terms)."""

from __future__ import annotations

import random
from typing import Any

import tiny_chat
import torch

from fim_rlvr.core.protocol import Verdict
from fim_rlvr.model.rollout import Rollout, token_logprobs
from fim_rlvr.step.batch import Group
from fim_rlvr.tasks.data import Task

GROUP_SIZE = 4


def model_and_tokenizer(seed: int = 0) -> tuple[Any, Any]:
    tok = tiny_chat.tokenizer(eos="<|endoftext|>")
    return tiny_chat.model(tok, seed=seed), tok


def make_groups(model: Any, pad_id: int, seed: int, groups: int = 3, lengths: tuple[int, int] = (1, 9)) -> list[Group]:
    rng = random.Random(seed)
    vocab = model.config.vocab_size
    out = []
    for g in range(groups):
        task = Task(f"t{seed}-{g}", "A.lean", "tactic", "train", "p", "", "m", 2, {})  # type: ignore[arg-type]
        prompts = [[rng.randrange(10, vocab) for _ in range(rng.randint(2, 6))] for _ in range(GROUP_SIZE)]
        completions = [[rng.randrange(10, vocab) for _ in range(rng.randint(*lengths))] for _ in range(GROUP_SIZE)]
        with torch.no_grad():
            logp, mask = token_logprobs(model, prompts, completions, pad_id)
        rollouts = []
        for i in range(GROUP_SIZE):
            true = logp[i][mask[i] > 0].tolist()
            old = [v + rng.gauss(0.0, 0.3) for v in true]
            rollouts.append(Rollout(prompts[i], completions[i], "", old, truncated=(g == 0 and i == 3)))
        kinds = ["proved", "failed", "proved" if g % 2 else "failed", "timeout" if g == 1 else "failed"]
        verdicts = [Verdict(task.id, k, 1.0 if k == "proved" else 0.0) for k in kinds]
        out.append(Group(task, rollouts, [""] * GROUP_SIZE, verdicts))
    return out


def gradients(model: Any) -> torch.Tensor:
    return torch.cat([p.grad.flatten() if p.grad is not None else torch.zeros(p.numel()) for p in model.parameters()])
