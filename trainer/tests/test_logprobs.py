"""Old log-probs in passes with a stated memory bound (model/rollout.py `old_logprobs`, shared by both rollout
backends): each pass holds as many completions as keep their logits within `logprob_memory_mb`, one at least, and the
chunked log-probs equal those of one pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from fim_rlvr.model import rollout
from fim_rlvr.model.policy import build_embedded
from fim_rlvr.model.rollout import (
    LOGPROB_BYTES_PER_LOGIT,
    TransformersBackend,
    logprob_chunks,
    old_logprobs,
    token_logprobs,
    vocabulary_size,
)
from fim_rlvr.tasks.data import load_tasks

MIB = 2**20


def test_chunks_keep_each_pass_within_the_bound_and_take_one_completion_at_least() -> None:
    widths = [3, 9, 4, 4, 20, 1, 1, 1]
    vocab = 1000
    bound_mb = 2 * (9 + 1) * vocab * LOGPROB_BYTES_PER_LOGIT / MIB  # two completions of width 9
    chunks = logprob_chunks(widths, vocab, bound_mb)
    assert [(c.start, c.stop) for c in chunks] == [(0, 2), (2, 4), (4, 5), (5, 8)]
    for rows in chunks:
        size = (rows.stop - rows.start) * (max(widths[rows]) + 1) * vocab * LOGPROB_BYTES_PER_LOGIT
        assert size <= bound_mb * MIB or rows.stop - rows.start == 1
    assert [(c.start, c.stop) for c in logprob_chunks(widths, vocab, 1e-9)] == [(i, i + 1) for i in range(8)]
    assert [(c.start, c.stop) for c in logprob_chunks(widths, vocab, 1e9)] == [(0, 8)]
    assert logprob_chunks([], vocab, 1.0) == []


def test_chunked_old_logprobs_equal_one_pass_and_no_pass_exceeds_its_rows(toy_dataset: Path) -> None:
    policy = build_embedded(toy_dataset, load_tasks(toy_dataset), 0, torch.device("cpu"))
    model, tokenizer = policy.model, policy.tokenizer
    pad = int(tokenizer.pad_token_id)
    prompts = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in ("theorem a :", "lemma b (n : Nat) :")] * 3
    completions = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in ("rfl", " omega", " simp [h]")] * 2
    model.eval()
    with torch.no_grad():
        logp, mask = token_logprobs(model, prompts, completions, pad, 0.7)
    whole = [logp[row][mask[row] > 0].tolist() for row in range(len(completions))]
    vocab = vocabulary_size(model)
    assert vocab == len(tokenizer)
    widest = max(len(c) for c in completions)
    two_rows_mb = 2 * (widest + 1) * vocab * LOGPROB_BYTES_PER_LOGIT / MIB
    rows_seen: list[int] = []
    handle = model.register_forward_hook(
        lambda _m, args, kwargs, _out: rows_seen.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        chunked = old_logprobs(model, prompts, completions, pad, 0.7, memory_mb=two_rows_mb)
    finally:
        handle.remove()
    assert rows_seen == [2, 2, 2]
    assert len(chunked) == len(whole)
    for got, expected in zip(chunked, whole, strict=True):
        assert torch.allclose(torch.tensor(got), torch.tensor(expected), atol=1e-5)


def test_the_transformers_backend_recomputes_old_logprobs_within_its_bound(
    toy_dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """256 sequences used to go through one forward pass after `generate`; now the bound decides."""
    policy = build_embedded(toy_dataset, load_tasks(toy_dataset), 0, torch.device("cpu"))
    one_row_mb = 1e-9  # below one completion's logits: one completion per pass
    backend = TransformersBackend(policy.model, policy.tokenizer, policy.stop_token_ids(), logprob_memory_mb=one_row_mb)
    rows_seen: list[int] = []

    def counting(model: Any, prompts: Any, completions: Any, *args: Any) -> Any:
        rows_seen.append(len(completions))
        return token_logprobs(model, prompts, completions, *args)

    monkeypatch.setattr(rollout, "token_logprobs", counting)
    rollouts = backend.generate(["theorem a :"], num_return=3, max_new_tokens=4, temperature=1.0, top_p=1.0, seed=1)
    assert len(rollouts) == 3 and all(len(r.old_logp) == len(r.completion_ids) for r in rollouts)
    assert rows_seen == [1, 1, 1]
