"""Sampling matches the recorded log-probs: the model's own generation defaults cannot leak in, top_p is honoured,
stop strings end the completion, and dropout is off in the loss's forward pass as it is in sampling."""

from __future__ import annotations

from typing import Any

import pytest
import tiny_chat
import torch

from fim_rlvr.model.generation import cut_at_stop, dropout_off, model_defaults_off, sampling_config
from fim_rlvr.model.rollout import TransformersBackend, left_pad, token_logprobs

PROMPTS = ["theorem t (a b : Nat) : a + 0 = a := by\n  ", "import Mathlib\nopen Nat\n"]


@pytest.fixture(scope="module")
def tok() -> Any:
    return tiny_chat.tokenizer(eos="<|endoftext|>")


def leaky(tok: Any, seed: int = 0) -> Any:
    """A tiny model whose checkpoint generation config would reshape every distribution it samples from."""
    model = tiny_chat.model(tok, seed=seed).eval()
    config = model.generation_config
    config.repetition_penalty = 50.0
    config.no_repeat_ngram_size = 1
    config.top_k = 3
    config.min_new_tokens = 12
    config.suppress_tokens = tok("\n", add_special_tokens=False)["input_ids"]
    return model


def greedy_by_hand(model: Any, prompt_ids: list[int], steps: int, stop: int) -> list[int]:
    """Argmax of the model's plain logits, one token at a time."""
    ids = list(prompt_ids)
    out: list[int] = []
    with torch.no_grad():
        for _ in range(steps):
            token = int(model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
            out.append(token)
            ids.append(token)
            if token == stop:
                break
    return out


def test_greedy_rollouts_are_the_argmax_of_the_plain_logits_whatever_the_checkpoint_config(tok: Any) -> None:
    model = leaky(tok)
    expected = [greedy_by_hand(model, tok(p)["input_ids"], 12, tok.eos_token_id) for p in PROMPTS]
    model.generation_config.suppress_tokens = [expected[0][0]]  # a leak would forbid the first greedy token
    backend = TransformersBackend(model, tok, [tok.eos_token_id])
    rollouts = backend.generate(PROMPTS, num_return=1, max_new_tokens=12, temperature=0.0, top_p=1.0, seed=0)
    assert [r.completion_ids for r in rollouts] == expected
    assert len(set(rollouts[0].completion_ids)) < len(rollouts[0].completion_ids), "repeats: no ngram rule leaked"
    assert model.generation_config.repetition_penalty == 50.0, "the model's own config is left as it was"


def test_sampled_tokens_log_probs_are_those_of_the_distribution_sampled_from(tok: Any) -> None:
    model = leaky(tok)
    ids, mask = left_pad([tok(p)["input_ids"] for p in PROMPTS], tok.pad_token_id)
    config = sampling_config(
        temperature=0.7, top_p=1.0, max_new_tokens=10, eos_token_ids=[tok.eos_token_id], pad_token_id=tok.pad_token_id
    )
    torch.manual_seed(3)
    with model_defaults_off(model), torch.no_grad():
        scored = {"output_scores": True, "return_dict_in_generate": True}
        out = model.generate(input_ids=ids, attention_mask=mask, generation_config=config, **scored)
    new = out.sequences[:, ids.shape[1] :]  # [N, T]
    scores = torch.stack(out.scores, dim=1)  # [N, T, V]: the logits the tokens were drawn from, after processors
    sampled = torch.log_softmax(scores.float(), -1).gather(-1, new.unsqueeze(-1)).squeeze(-1)  # [N, T]
    recorded, recorded_mask = token_logprobs(
        model, [tok(p)["input_ids"] for p in PROMPTS], new.tolist(), tok.pad_token_id, 0.7
    )
    live = recorded_mask.bool() & (new != tok.pad_token_id)
    assert torch.allclose(recorded[live], sampled[live], atol=1e-5)


def test_top_p_is_honoured(tok: Any) -> None:
    model = leaky(tok)
    backend = TransformersBackend(model, tok, [tok.eos_token_id])
    greedy = backend.generate(PROMPTS, num_return=1, max_new_tokens=8, temperature=0.0, top_p=1.0, seed=0)
    nucleus = backend.generate(PROMPTS, num_return=3, max_new_tokens=8, temperature=1.5, top_p=1e-6, seed=1)
    wide = backend.generate(PROMPTS, num_return=3, max_new_tokens=8, temperature=1.5, top_p=1.0, seed=1)
    for index, rollout in enumerate(nucleus):
        assert rollout.completion_ids == greedy[index // 3].completion_ids  # only the top token survives top_p
    assert any(r.completion_ids != greedy[i // 3].completion_ids for i, r in enumerate(wide))


def test_stop_strings_end_the_completion_at_the_token_that_completes_them(tok: Any) -> None:
    ids = tok("omega\n```\nmore text", add_special_tokens=False)["input_ids"]
    cut, stopped = cut_at_stop(ids, tok, [tok.eos_token_id], ["```"])
    assert stopped and "```" in tok.decode(cut) and "```" not in tok.decode(cut[:-1])
    assert tok.decode(cut).startswith("omega\n")
    assert cut_at_stop(ids, tok, [tok.eos_token_id], []) == (ids, False)
    eos_first = [*tok("simp", add_special_tokens=False)["input_ids"], tok.eos_token_id, *ids]
    end = eos_first.index(tok.eos_token_id) + 1
    assert cut_at_stop(eos_first, tok, [tok.eos_token_id], ["```"]) == (eos_first[:end], True)


def test_the_backend_trains_on_nothing_after_a_stop_string(tok: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tiny_chat.model(tok).eval()
    backend = TransformersBackend(model, tok, [tok.eos_token_id], stop_strings=("```", tok.eos_token))
    assert backend.stop_strings == ("```",)  # the eos is one token: it stops by id
    answer = tok("omega\n```\nExplanation", add_special_tokens=False)["input_ids"]
    seen: dict[str, Any] = {}

    def fake_generate(input_ids: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        seen.update(kwargs)
        return torch.cat([input_ids, torch.tensor([answer] * input_ids.shape[0])], dim=1)

    monkeypatch.setattr(model, "generate", fake_generate)
    (rollout,) = backend.generate(PROMPTS[:1], num_return=1, max_new_tokens=20, temperature=0.5, top_p=0.9, seed=0)
    assert seen["generation_config"].stop_strings == ["```"] and seen["tokenizer"] is tok
    assert seen["generation_config"].top_p == 0.9 and seen["generation_config"].repetition_penalty == 1.0
    assert rollout.text.endswith("```") and "Explanation" not in rollout.text
    assert not rollout.truncated and len(rollout.old_logp) == len(rollout.completion_ids) < len(answer)


def test_dropout_is_off_in_the_loss_forward_while_the_model_trains(tok: Any) -> None:
    model = tiny_chat.model(tok, attention_dropout=0.5)
    prompts = [tok(p)["input_ids"] for p in PROMPTS]
    completions = [tok("  simp\n", add_special_tokens=False)["input_ids"]] * 2
    model.eval()
    with torch.no_grad():
        sampling, mask = token_logprobs(model, prompts, completions, tok.pad_token_id)  # as rollouts record them
    model.train()
    torch.manual_seed(0)
    with torch.no_grad():
        noisy, _ = token_logprobs(model, prompts, completions, tok.pad_token_id)
    assert not torch.allclose(noisy, sampling), "this model's dropout changes train-mode log-probs"
    with dropout_off(model):
        loss_logp, _ = token_logprobs(model, prompts, completions, tok.pad_token_id)
    assert model.training and loss_logp.requires_grad
    assert torch.equal(loss_logp.detach() * mask, sampling * mask)  # equal weights: ratio exactly 1
    attention = model.model.layers[0].self_attn
    assert attention.attention_dropout == 0.5, "dropout comes back after the loss's forward"


class FullLogitsOnly(torch.nn.Module):
    """The same model behind a forward that does not take `logits_to_keep`: it returns logits at every position."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, position_ids: torch.Tensor) -> Any:
        return self.inner(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids)


def test_the_loss_forward_computes_logits_for_completion_positions_only(tok: Any) -> None:
    model = tiny_chat.model(tok).eval()
    prompts = [tok(p)["input_ids"] for p in PROMPTS]
    completions = [[5, 6, 7], [8]]
    widths: list[int] = []
    handle = model.lm_head.register_forward_hook(lambda _m, _i, out: widths.append(int(out.shape[1])))
    with torch.no_grad():
        kept, mask = token_logprobs(model, prompts, completions, tok.pad_token_id)
        full, full_mask = token_logprobs(FullLogitsOnly(model), prompts, completions, tok.pad_token_id)
    handle.remove()
    longest_prompt = max(len(p) for p in prompts)
    # The output head ran over the completion (3) and the position before it, not over the prompt; without the
    # argument it ran over everything. The log-probs are the same either way.
    assert widths == [3 + 1, longest_prompt + 3]
    assert torch.equal(mask, full_mask)
    assert torch.allclose(kept, full, atol=1e-6)
