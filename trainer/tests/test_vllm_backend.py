"""The vLLM rollout backend's adapter, against STAND-IN engines, and the backend choice.

vLLM is not installed on CPU machines, so these tests drive our adapter with stand-ins that take vLLM's real
call signatures and return its output shapes (`LLM.generate(prompts, sampling_params=..., use_tqdm=...)`
-> RequestOutput with CompletionOutput(token_ids, logprobs: list[dict[int, Logprob]]), `LLM.sleep(level=)`,
`LLM.wake_up(tags=)`, `LLM.reset_prefix_cache()`, `llm_engine.model_executor.driver_worker.model_runner.model
.load_weights(...)`). They check OUR behaviour: sleep/wake order, a weight sync after every optimiser step,
log-probs taken from the outputs, stop tokens, the choice of backend. The stand-in LLM samples with its own copy
of the model, which holds only the weights pushed into it (level-2 sleep wipes them, as vLLM's does), so a missing
or late sync shows up as a log-prob mismatch. Server mode runs TRL's real VLLMClient with its HTTP call replaced.
The last test uses real vLLM where it imports and a CUDA GPU is visible, and skips with the reason elsewhere.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from conftest import write_dataset
from fakes import RecordingEvents
from test_loop import ParityVerifier

from fim_rlvr.core.config import from_dict
from fim_rlvr.model import tiny_model
from fim_rlvr.model.rollout import TransformersBackend, token_logprobs
from fim_rlvr.model.vllm_backend import (
    BackendError,
    ColocatedEngine,
    ServerEngine,
    VLLMBackend,
    choose,
    make_backend,
    vllm_weights,
)
from fim_rlvr.run.files import RunFiles

TEXTS = ["theorem foo : 1 + 1 = 2 := by norm_num", "lemma bar (n : Nat) : n + 0 = n := by simp", "by omega"] * 4


@pytest.fixture(scope="module")
def policy() -> SimpleNamespace:
    tokenizer = tiny_model.train_tokenizer(TEXTS, vocab_size=300)
    model = tiny_model.build_model(tokenizer, seed=3)
    return SimpleNamespace(model=model, tokenizer=tokenizer)


# ------------------------------------------------------------------------------------------------ stand-ins


@dataclass
class Logprob:
    """Stand-in for vllm.logprobs.Logprob."""

    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class CompletionOutput:
    """Stand-in for vllm.outputs.CompletionOutput (the fields our adapter may read)."""

    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    logprobs: list[dict[int, Logprob]] | None
    finish_reason: str | None = None


@dataclass
class RequestOutput:
    """Stand-in for vllm.outputs.RequestOutput."""

    request_id: str
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]


@dataclass
class SamplingParams:
    """Stand-in for vllm.SamplingParams: the same keyword names and defaults for the fields the adapter sets;
    an unknown keyword fails here as it would there."""

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None
    stop_token_ids: list[int] | None = None
    max_tokens: int | None = 16
    logprobs: int | None = None


class StandInModel:
    """The driver worker's model: `load_weights(iterable of (name, tensor))` copies into a private copy."""

    def __init__(self, hf_model: Any, log: list[str]) -> None:
        self.copy = copy.deepcopy(hf_model).eval()
        self.params = dict(self.copy.named_parameters())
        self.log = log

    def load_weights(self, weights: Any) -> set[str]:
        loaded = set()
        for name, tensor in weights:
            self.params[name].data.copy_(tensor)
            loaded.add(name)
        self.log.append("load_weights")
        return loaded


@dataclass
class StandInLLM:
    """Stand-in for a colocated `vllm.LLM(..., enable_sleep_mode=True)`: samples token by token from its copy of
    the model. Level-2 sleep discards the weights (overwritten with NaN) and the KV cache; generating while the KV
    cache sleeps is refused."""

    hf_model: Any
    events: list[str] = field(default_factory=list)
    requests: list[tuple[list[int], SamplingParams]] = field(default_factory=list)
    script: list[list[int]] | None = None
    """When set, completions replay these token ids (log-probs still from the copy) instead of sampling."""

    def __post_init__(self) -> None:
        runner = SimpleNamespace(model=StandInModel(self.hf_model, self.events))
        self.llm_engine = SimpleNamespace(
            model_executor=SimpleNamespace(driver_worker=SimpleNamespace(model_runner=runner))
        )
        self.model = runner.model
        self.kv_awake = True

    def sleep(self, level: int = 1) -> None:
        self.events.append(f"sleep({level})")
        self.kv_awake = False
        if level == 2:
            for p in self.model.params.values():
                p.data.fill_(math.nan)

    def wake_up(self, tags: list[str] | None = None) -> None:
        self.events.append(f"wake_up({','.join(tags or ['all'])})")
        if tags is None or "kv_cache" in tags:
            self.kv_awake = True

    def reset_prefix_cache(self) -> bool:
        self.events.append("reset_prefix_cache")
        return True

    @torch.no_grad()
    def generate(self, prompts: Any, sampling_params: Any = None, *, use_tqdm: bool = True) -> list[RequestOutput]:
        assert self.kv_awake, "generate while the KV cache sleeps"
        self.events.append("generate")
        outputs = []
        for index, (prompt, params) in enumerate(zip(prompts, sampling_params, strict=True)):
            ids = list(prompt["prompt_token_ids"])
            self.requests.append((ids, params))
            g = torch.Generator().manual_seed(params.seed)
            tokens: list[int] = []
            logprobs: list[dict[int, Logprob]] = []
            for position in range(params.max_tokens):
                logits = self.model.copy(input_ids=torch.tensor([ids + tokens])).logits[0, -1].float()
                logp = torch.log_softmax(logits / (params.temperature or 1.0), dim=-1)
                if self.script is not None:
                    script = self.script[index % len(self.script)]
                    if position >= len(script):
                        break
                    token = script[position]
                elif params.temperature == 0:
                    token = int(logp.argmax())
                else:
                    token = int(torch.multinomial(logp.exp(), 1, generator=g))
                tokens.append(token)
                logprobs.append({token: Logprob(float(logp[token]), rank=1)})
                if token in (params.stop_token_ids or []):
                    break
            reason = "stop" if tokens and tokens[-1] in (params.stop_token_ids or []) else "length"
            completion = CompletionOutput(0, "", tokens, None, logprobs, reason)
            outputs.append(RequestOutput(str(index), ids, [completion]))
        return outputs


def colocated(policy: SimpleNamespace, **llm: Any) -> tuple[VLLMBackend, StandInLLM]:
    engine_llm = StandInLLM(policy.model, **llm)
    stops = [policy.tokenizer.eos_token_id]
    return VLLMBackend(ColocatedEngine(engine_llm, SamplingParams), policy.model, policy.tokenizer, stops), engine_llm


def generate(backend: Any, prompts: list[str], **overrides: Any) -> Any:
    settings = {"num_return": 2, "max_new_tokens": 5, "temperature": 1.0, "top_p": 1.0, "seed": 11, **overrides}
    return backend.generate(prompts, **settings)


# ------------------------------------------------------------------------------------------------ colocated


def test_the_engine_sleeps_after_start_and_wakes_around_each_generation(policy: SimpleNamespace) -> None:
    backend, llm = colocated(policy)
    assert llm.events == ["sleep(2)"]
    generate(backend, ["theorem foo"])
    loads = llm.events.count("load_weights")
    assert loads == len(list(policy.model.parameters()))  # tied embeddings pushed once
    assert llm.events == [
        "sleep(2)",
        "wake_up(weights)",  # weights first: level 2 dropped them, they must be pushed before generating
        *["load_weights"] * loads,
        "reset_prefix_cache",
        "wake_up(kv_cache)",
        "generate",
        "sleep(2)",  # asleep again while the trainer optimises
    ]


def test_rollouts_carry_vllms_logprobs_and_the_trainers_old_logprobs(policy: SimpleNamespace) -> None:
    backend, llm = colocated(policy)
    rollouts = generate(backend, ["theorem foo", "by"], num_return=3)
    assert len(rollouts) == 6
    prompt_ids = [policy.tokenizer(p, add_special_tokens=False)["input_ids"] for p in ["theorem foo", "by"]]
    assert [r.prompt_ids for r in rollouts] == [prompt_ids[0]] * 3 + [prompt_ids[1]] * 3  # grouped by prompt
    for rollout, (ids, params) in zip(rollouts, llm.requests, strict=True):
        assert params.logprobs == 0 and params.n == 1 and params.max_tokens == 5
        assert rollout.prompt_ids == ids
        assert rollout.sampling_logp is not None and len(rollout.sampling_logp) == len(rollout.completion_ids)
    assert [params.seed for _, params in llm.requests] == [11, 12, 13, 14, 15, 16]  # one seed per sample
    expected, mask = token_logprobs(
        policy.model, [r.prompt_ids for r in rollouts], [r.completion_ids for r in rollouts], backend.pad_id
    )
    for row, rollout in enumerate(rollouts):
        torch.testing.assert_close(torch.tensor(rollout.old_logp), expected[row][mask[row] > 0])
        # the stand-in samples from the pushed copy of the same weights: vLLM's log-probs agree with ours
        torch.testing.assert_close(
            torch.tensor(rollout.sampling_logp), torch.tensor(rollout.old_logp), atol=1e-4, rtol=1e-4
        )


def test_completions_end_at_the_first_stop_token(policy: SimpleNamespace) -> None:
    eos = policy.tokenizer.eos_token_id
    backend, llm = colocated(policy, script=[[5, 6, eos, 7], [8, 9, 10, 11, 12]])
    rollouts = generate(backend, ["by"], num_return=2, max_new_tokens=5)
    assert [r.completion_ids for r in rollouts] == [[5, 6, eos], [8, 9, 10, 11, 12]]
    assert [r.truncated for r in rollouts] == [False, True]
    assert [len(r.sampling_logp or []) for r in rollouts] == [3, 5]
    assert llm.requests[0][1].stop_token_ids == [eos]
    assert rollouts[0].text == policy.tokenizer.decode([5, 6, eos], skip_special_tokens=False)


def test_sync_pushes_the_current_weights_and_generation_then_needs_no_other(policy: SimpleNamespace) -> None:
    model = copy.deepcopy(policy.model)
    backend, llm = colocated(SimpleNamespace(model=model, tokenizer=policy.tokenizer))
    generate(backend, ["by"])
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01)  # an optimiser step
    llm.events.clear()
    backend.sync_weights(model)
    for name, p in model.named_parameters():
        assert torch.equal(llm.model.params[name], p), name
    generate(backend, ["by"])
    assert llm.events.count("wake_up(weights)") == 1  # the sync's; generate found the weights current
    assert llm.events[-3:] == ["wake_up(kv_cache)", "generate", "sleep(2)"]
    llm.events.clear()
    generate(backend, ["by"])  # again without a step (a refill round): level 2 dropped the weights, push again
    assert llm.events[:2] == ["wake_up(weights)", "load_weights"]


def test_lora_adapters_are_merged_for_the_push_without_touching_the_model(policy: SimpleNamespace) -> None:
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(copy.deepcopy(policy.model), LoraConfig(r=2, target_modules=["q_proj", "v_proj"]))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_()  # a trained adapter (lora_B starts at zero)
    base = {n: p.detach().clone() for n, p in model.named_parameters()}
    weights = list(vllm_weights(model))
    names = [n for n, _ in weights]
    merged_q = dict(weights)["model.layers.0.self_attn.q_proj.weight"]
    assert names == [n for n, _ in policy.model.named_parameters()]  # vLLM's (Hugging Face) names, no lora_ tensors
    lora = model.base_model.model.model.layers[0].self_attn.q_proj
    expected = (
        base["base_model.model.model.layers.0.self_attn.q_proj.base_layer.weight"]
        + (lora.lora_B["default"].weight @ lora.lora_A["default"].weight) * lora.scaling["default"]
    )
    torch.testing.assert_close(merged_q, expected)
    for n, p in model.named_parameters():
        assert torch.equal(p, base[n])  # nothing merged in place: the base stays the exact KL reference
    llm = StandInLLM(policy.model)  # vLLM serves the plain architecture
    backend = VLLMBackend(ColocatedEngine(llm, SamplingParams), model, policy.tokenizer, [0])
    backend.sync_weights(model)  # it receives the merged weights
    torch.testing.assert_close(llm.model.params["model.layers.0.self_attn.q_proj.weight"], expected)


# ------------------------------------------------------------------------------------------------ the run


def test_a_run_syncs_after_every_step_and_samples_from_the_updated_weights(tmp_path: Path, monkeypatch: Any) -> None:
    """The pipeline with vLLM: after each optimiser step the weights are pushed, so every batch is sampled by the
    weights the trainer recomputes its old log-probs with (mismatch ~0; a missing sync would show here)."""
    from fim_rlvr.run import trainer as train

    engines: list[StandInLLM] = []

    def stand_in_backend(config: Any, policy: Any, log: Any = None) -> VLLMBackend:
        llm = StandInLLM(policy.model)
        engines.append(llm)
        return VLLMBackend(
            ColocatedEngine(llm, SamplingParams), policy.model, policy.tokenizer, policy.stop_token_ids()
        )

    monkeypatch.setattr(train, "make_backend", stand_in_backend)
    dataset = write_dataset(tmp_path / "data", per_pattern=4)
    config = {
        "sft_steps": 0,
        "steps": 3,
        "batch_size": 2,
        "group_size": 3,
        "max_new_tokens": 4,
        "eval_limit": 2,
        "compare": [],
    }
    trainer = train.Trainer(
        from_dict({**config, "curriculum": False, "seed": 5, "checkpoint_every": 10}),
        dataset,
        tmp_path / "run",
        resume=False,
        verifier=ParityVerifier(),
        events=RecordingEvents(),
    )
    trainer.prepare()
    trainer.run()
    lines = RunFiles(tmp_path / "run").read_metrics()
    assert len(lines) == 3
    for line in lines:
        assert line["sampling_logp_difference_max"] < 1e-3, line
        assert line["importance_sampling_clipped_fraction"] == 0.0
    events = engines[0].events
    generations = [i for i, e in enumerate(events) if e == "generate"]
    pushes = [i for i, e in enumerate(events) if e == "wake_up(weights)"]
    # eval before, step 1's and step 2's batches, then (after each optimiser step's push) step 3's, then eval after
    assert len(generations) == 5
    between = [sum(1 for p in pushes if a < p < b) for a, b in itertools.pairwise(generations)]
    # before step 2's batch: a re-push (level-2 sleep since the last); after step 1: its sync; before the final
    # eval: the syncs after steps 2 and 3 (the last batch was sampled before step 2's update)
    assert between == [1, 1, 1, 2]


# ------------------------------------------------------------------------------------------------ server mode


def test_server_mode_goes_through_trls_client(policy: SimpleNamespace) -> None:
    from trl.generation.vllm_client import VLLMClient

    client = VLLMClient.__new__(VLLMClient)  # TRL's real client; __init__ would probe a live server
    client.base_url, client.model = "http://vllm:8000", "m"
    posted: list[dict[str, Any]] = []
    pushed: list[Any] = []
    eos = policy.tokenizer.eos_token_id

    def post(url: str, **kwargs: Any) -> dict[str, Any]:
        """The server's /v1/completions answer with return_tokens_as_token_ids (vLLM's OpenAI format)."""
        payload = kwargs["json"]
        posted.append({"url": url, **payload})
        choices = []
        for prompt in payload["prompt"]:
            for k in range(payload["n"]):
                tokens = [20 + k, eos] if k == 0 else [30, 31, 32]
                choices.append(
                    {
                        "prompt_token_ids": prompt,
                        "token_ids": tokens,
                        "logprobs": {
                            "tokens": [f"token_id:{t}" for t in tokens],
                            "token_logprobs": [-0.5 - i for i in range(len(tokens))],
                            "top_logprobs": [{} for _ in tokens],
                        },
                    }
                )
        return {"choices": choices}

    client._post = post
    client.update_named_params = lambda metadata, named: pushed.append((metadata, [n for n, _ in named]))
    client.reset_prefix_cache = lambda: pushed.append("reset")
    backend = VLLMBackend(ServerEngine(client), policy.model, policy.tokenizer, [eos])
    rollouts = generate(backend, ["theorem foo", "by"], num_return=2, max_new_tokens=3, seed=4)
    metadata, names = pushed[0]
    assert names == [n for n, _ in policy.model.named_parameters()] and pushed[1] == "reset"
    assert metadata[0] == (names[0], "float32", list(policy.model.get_parameter(names[0]).shape))
    request = posted[0]
    assert request["url"] == "http://vllm:8000/v1/completions"
    assert request["n"] == 2 and request["max_tokens"] == 3 and request["logprobs"] == 0
    assert request["seed"] == 4 and request["stop_token_ids"] == [eos]
    assert [r.completion_ids for r in rollouts] == [[20, eos], [30, 31, 32]] * 2
    assert [r.truncated for r in rollouts] == [False, True] * 2
    assert rollouts[1].sampling_logp == [-0.5, -1.5, -2.5]


# ------------------------------------------------------------------------------------------------ the choice


def settings(**overrides: Any) -> Any:
    return from_dict({"model": "/models/qwen", **overrides})


def test_auto_picks_vllm_only_with_vllm_cuda_and_a_model_path() -> None:
    assert choose(settings(), vllm_installed=True, cuda=True).backend == "vllm"
    no_vllm = choose(settings(), vllm_installed=False, cuda=True)
    assert no_vllm.backend == "transformers" and "vLLM not used: not installed" in no_vllm.reason
    no_cuda = choose(settings(), vllm_installed=True, cuda=False)
    assert no_cuda.backend == "transformers" and "CUDA" in no_cuda.reason
    embedded = choose(from_dict({}), vllm_installed=True, cuda=True)
    assert embedded.backend == "transformers" and "no model path" in embedded.reason
    forced = choose(settings(rollout_backend="transformers"), vllm_installed=True, cuda=True)
    assert forced.backend == "transformers"


def test_asking_for_vllm_where_it_cannot_run_says_what_to_do() -> None:
    with pytest.raises(BackendError, match=r"pip install 'fim_rlvr\[vllm\]'.*CUDA.*or set rollout_backend"):
        choose(settings(rollout_backend="vllm"), vllm_installed=False, cuda=False)


def test_make_backend_on_this_machine_logs_its_choice_once(policy: SimpleNamespace) -> None:
    logs: list[tuple[str, str]] = []
    stand = SimpleNamespace(
        model=policy.model, tokenizer=policy.tokenizer, device=torch.device("cpu"), stop_token_ids=lambda: [0]
    )
    backend = make_backend(from_dict({}), stand, lambda level, message: logs.append((level, message)))
    assert isinstance(backend, TransformersBackend)
    assert len(logs) == 1 and logs[0][1].startswith("rollouts: transformers (rollout_backend auto")


def test_a_trainer_asked_for_vllm_without_it_fails_at_start_with_the_advice(tmp_path: Path) -> None:
    from fim_rlvr.run.trainer import Trainer, TrainerError

    if importlib.util.find_spec("vllm") is not None and torch.cuda.is_available():
        pytest.skip("vLLM and CUDA are available here: the start-up error cannot happen")
    dataset = write_dataset(tmp_path / "data", per_pattern=2)
    trainer = Trainer(
        from_dict({"rollout_backend": "vllm"}),
        dataset,
        tmp_path / "run",
        resume=False,
        verifier=None,
        events=RecordingEvents(),
    )
    with pytest.raises(TrainerError, match=r"rollout_backend vllm cannot be used.*fim_rlvr\[vllm\]"):
        trainer.prepare()


# ------------------------------------------------------------------------------------------------ real vLLM


def _real_vllm_missing() -> str:
    if importlib.util.find_spec("vllm") is None:
        return "vllm is not installed (pip install 'fim_rlvr[vllm]' on a CUDA machine)"
    if not torch.cuda.is_available():
        return "no CUDA GPU is visible"
    return ""


def test_real_vllm_samples_close_to_the_trainer_and_follows_a_sync(tmp_path: Path) -> None:
    reason = _real_vllm_missing()
    if reason:
        print(f"test_real_vllm skipped: {reason}")
        pytest.skip(reason)
    tokenizer = tiny_model.train_tokenizer(TEXTS, vocab_size=300)
    model = tiny_model.build_model(tokenizer, seed=3)
    model.save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    model = model.to("cuda")
    engine = ColocatedEngine.start(str(tmp_path / "model"), 0.2, 256, seed=0)
    backend = VLLMBackend(engine, model, tokenizer, [tokenizer.eos_token_id])
    rollouts = generate(backend, ["theorem foo"], num_return=4, max_new_tokens=8)
    gaps = [abs(a - b) for r in rollouts for a, b in zip(r.old_logp, r.sampling_logp or [], strict=True)]
    assert gaps and max(gaps) < 0.05, gaps
    with torch.no_grad():
        model.lm_head.weight.mul_(3.0)  # sharper distribution: vLLM must see it after a sync
    backend.sync_weights(model)
    rollouts = generate(backend, ["theorem foo"], num_return=4, max_new_tokens=8)
    gaps = [abs(a - b) for r in rollouts for a, b in zip(r.old_logp, r.sampling_logp or [], strict=True)]
    assert max(gaps) < 0.05, gaps


def test_the_trainer_syncs_after_the_warm_start_and_every_optimiser_step(tmp_path: Path, monkeypatch: Any) -> None:
    """Whatever the backend: one sync once SFT changed the weights (a vLLM server would otherwise evaluate and
    sample with the pre-SFT weights), then one per optimiser step."""
    from fim_rlvr.run import trainer as train

    calls: list[int] = []

    class Recording(TransformersBackend):
        def sync_weights(self, model: Any) -> None:
            calls.append(trainer.step)

    def recording_backend(config: Any, policy: Any, log: Any = None) -> TransformersBackend:
        return Recording(policy.model, policy.tokenizer, policy.stop_token_ids())

    monkeypatch.setattr(train, "make_backend", recording_backend)
    dataset = write_dataset(tmp_path / "data", per_pattern=4)
    config = {
        "sft_steps": 2,
        "steps": 2,
        "batch_size": 2,
        "group_size": 2,
        "max_new_tokens": 4,
        "eval_limit": 2,
        "compare": [],
    }
    trainer = train.Trainer(
        from_dict({**config, "curriculum": False, "seed": 5}),
        dataset,
        tmp_path / "run",
        resume=False,
        verifier=ParityVerifier(),
        events=RecordingEvents(),
    )
    trainer.prepare()
    trainer.run()
    assert calls == [0, 0, 1]  # after SFT (step 0), after step 1's update, after step 2's (self.step then moves on)


def test_a_pending_batch_keeps_vllms_logprobs_through_a_checkpoint() -> None:
    from fim_rlvr.model.rollout import Rollout
    from fim_rlvr.step.batch import Batch, Group

    task = SimpleNamespace(id="t1")
    vllm = Rollout([1, 2], [3, 4], "ab", [-0.5, -0.25], False, [-0.5, math.nan])
    plain = Rollout([1, 2], [5], "c", [-1.0], True)
    batch = Batch(3, [Group(task, [vllm, plain], ["ab", "c"])], 0.5)  # type: ignore[arg-type]
    restored = Batch.from_json(batch.to_json(), {"t1": task})  # type: ignore[dict-item]
    back_vllm, back_plain = restored.groups[0].rollouts
    assert back_vllm.sampling_logp is not None and back_vllm.sampling_logp[0] == -0.5
    assert math.isnan(back_vllm.sampling_logp[1])
    assert back_plain == plain and back_plain.sampling_logp is None
    assert len(batch.to_json()["groups"][0]["rollouts"][1]) == 5  # transformers rollouts keep the old format
