"""Rollouts with vLLM, behind the RolloutBackend interface, and the choice between it and transformers.

Two engines, both modelled on TRL 1.16's `trl/generation/vllm_generation.py` (class VLLMGeneration):
- colocated: a `vllm.LLM` in the trainer's process with `enable_sleep_mode=True`. It sleeps at level 2 (weights
  and KV cache released) except while it generates, so the optimiser has the GPU to itself; after each optimiser
  step the trainer's weights are pushed into it (`wake_up(tags=["weights"])`, then the driver worker's
  `model.load_weights`), and generation wakes the KV cache (`wake_up(tags=["kv_cache"])`) and sleeps again.
- server: a vLLM server on other GPUs, reached through TRL's `VLLMClient` (`generate`, `init_communicator`,
  `update_named_params` over NCCL, `reset_prefix_cache`).

Either way the trainer's pipeline keeps its semantics: step k+1 is sampled before step k's update, with the
weights after step k-1, because `sync_weights` runs after each optimiser step and before the next sampling.
The "old" log-probs of the ratio are recomputed with the trainer's own model at generation time, as the
transformers backend does; vLLM's own log-probs of the sampled tokens travel as `Rollout.sampling_logp` and
drive the truncated importance sampling of algorithms/importance.py.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from ..core.errors import UserError
from .generation import cut_at_stop, multi_token_stops
from .rollout import Rollout, TransformersBackend, old_logprobs

INSTALL_HINT = "pip install 'fim_rlvr[vllm]' (vLLM and TRL's client; vLLM needs a CUDA GPU)"
PROMPT_TEMPLATE_MARGIN = 128
"""Tokens the prompt style's markers may add beyond max_prompt_tokens (which bounds the prefix and suffix): the
colocated engine's max_model_len is prompt budget + margin + max_new_tokens, so its KV cache is sized for our
sequences rather than for the model's whole context."""


class BackendError(UserError):
    """The rollout backend asked for cannot run here; the message says what to do (a start-up error)."""


@dataclass(frozen=True)
class Sample:
    """One completion as an engine returns it."""

    token_ids: list[int]
    logprobs: list[float]
    """vLLM's log-prob of each sampled token (NaN where it gave none)."""


class Engine(Protocol):
    """What VLLMBackend needs from a vLLM deployment."""

    needs_weights: bool
    """True while the engine does not hold the trainer's current weights (at start, and after a level-2 sleep)."""

    def generate(
        self,
        prompt_ids: list[list[int]],
        *,
        num_return: int,
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        seed: int,
        stop_token_ids: list[int],
    ) -> list[Sample]:
        """`num_return` samples per prompt, grouped by prompt."""
        ...

    def load_weights(self, weights: Callable[[], Iterator[tuple[str, torch.Tensor]]]) -> None:
        """Replace the engine's weights by those `weights()` yields (Hugging Face names), one tensor at a time."""
        ...


def sampled_logprob(position: Any, token_id: int) -> float:
    """The log-prob vLLM reports for the sampled token at one position: a dict token id -> Logprob (offline
    `CompletionOutput.logprobs[i]`); NaN when missing. With `logprobs=0` the dict holds just that token."""
    entry = position.get(token_id) if position is not None else None
    value = getattr(entry, "logprob", None)
    return float(value) if value is not None else math.nan


class ColocatedEngine:
    """A `vllm.LLM` in this process, asleep except while generating (TRL's colocate mode with sleep mode on)."""

    def __init__(self, llm: Any, sampling_params: Callable[..., Any]) -> None:
        self.llm = llm
        self.sampling_params = sampling_params
        self.llm.sleep(level=2)  # TRL: right after start-up; level 2 drops the weights, they are pushed before use
        self.needs_weights = True

    @classmethod
    def start(cls, model_path: str, gpu_memory_utilization: float, max_model_len: int, seed: int) -> ColocatedEngine:
        try:
            from trl.trainer.utils import ensure_master_addr_port
            from vllm import LLM, SamplingParams
        except ImportError as error:
            raise BackendError(f"vLLM rollouts need vllm and trl ({error}); install them: {INSTALL_HINT}") from error
        # TRL sets these for vLLM's external_launcher executor, which runs the engine inside this process (so its
        # model is reachable for load_weights). A launcher (accelerate) has set them already; keep its values.
        os.environ.setdefault("RANK", "0")
        os.environ.setdefault("LOCAL_RANK", "0")
        os.environ.setdefault("WORLD_SIZE", "1")
        ensure_master_addr_port()
        try:
            llm = LLM(
                model=model_path,
                gpu_memory_utilization=gpu_memory_utilization,
                max_model_len=max_model_len,
                enable_sleep_mode=True,
                distributed_executor_backend="external_launcher",
                seed=seed,
                max_num_batched_tokens=4096,  # as TRL: vLLM v1's profiler misjudges memory with its 32768 default
                logprobs_mode="processed_logprobs",  # log-probs after temperature, as the trainer computes them
            )
        except Exception as error:  # vLLM raises many types at start-up (CUDA OOM, unsupported model ...)
            raise BackendError(
                f"vLLM could not start on {model_path}: {error}. Lower vllm_gpu_memory_utilization "
                f"({gpu_memory_utilization}), or set rollout_backend to transformers"
            ) from error
        return cls(llm, SamplingParams)

    def load_weights(self, weights: Callable[[], Iterator[tuple[str, torch.Tensor]]]) -> None:
        # TRL's VLLMGeneration.sync_weights, colocate branch: wake the weights first (level-2 sleep unmapped them),
        # load parameter by parameter into the driver worker's model, then drop the prefix cache.
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        self.llm.wake_up(tags=["weights"])
        self.needs_weights = False
        model = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
        for name, tensor in weights():
            model.load_weights([(name, tensor)])
        self.llm.reset_prefix_cache()

    def generate(
        self,
        prompt_ids: list[list[int]],
        *,
        num_return: int,
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        seed: int,
        stop_token_ids: list[int],
    ) -> list[Sample]:
        expanded = [ids for ids in prompt_ids for _ in range(num_return)]
        # One request per sample (n=1, as TRL's colocate mode), each with its own seed: reproducible samples.
        params = [
            self.sampling_params(
                n=1,
                temperature=temperature,
                top_p=top_p,
                max_tokens=max_new_tokens,
                logprobs=0,  # the sampled token's log-prob only
                seed=seed + index,
                stop_token_ids=stop_token_ids,
            )
            for index in range(len(expanded))
        ]
        self.llm.wake_up(tags=["kv_cache"])
        try:
            outputs = self.llm.generate(
                [{"prompt_token_ids": ids} for ids in expanded], sampling_params=params, use_tqdm=False
            )
        finally:
            self.llm.sleep(level=2)  # TRL: back to sleep at once, the optimiser runs next
            self.needs_weights = True
        samples = []
        for request in outputs:
            for completion in request.outputs:
                ids = list(completion.token_ids)
                positions = completion.logprobs or [None] * len(ids)
                samples.append(Sample(ids, [sampled_logprob(p, t) for p, t in zip(positions, ids, strict=True)]))
        return samples


class ServerEngine:
    """A vLLM server (`trl vllm-serve` / `vllm serve` with the NCCL weight transfer) through TRL's VLLMClient."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.needs_weights = True  # the server loaded its model from disk; the trainer's may differ (SFT, resume)

    @classmethod
    def connect(cls, url: str, device: torch.device, timeout_s: float = 240.0) -> ServerEngine:
        try:
            from trl.generation.vllm_client import VLLMClient
        except ImportError as error:
            raise BackendError(
                f"vLLM server mode needs trl's VLLMClient ({error}); install it: {INSTALL_HINT}"
            ) from error
        try:
            client = VLLMClient(base_url=url, connection_timeout=timeout_s)
            client.init_communicator(device=device)  # NCCL group for weight updates: needs the trainer on CUDA
        except Exception as error:  # requests' ConnectionError, the server's missing weight-transfer engine ...
            raise BackendError(
                f"the vLLM server at {url} cannot be used: {error}. Start it with "
                '`VLLM_SERVER_DEV_MODE=1 vllm serve MODEL --weight-transfer-config \'{"backend": "nccl"}\' '
                "--logprobs-mode processed_logprobs --max-logprobs -1` (or `trl vllm-serve --model MODEL`) "
                "on other GPUs, or set vllm_mode to colocate"
            ) from error
        return cls(client)

    def load_weights(self, weights: Callable[[], Iterator[tuple[str, torch.Tensor]]]) -> None:
        # TRL's VLLMGeneration.sync_weights, server branch: walk once for (name, dtype, shape), which the server must
        # know before the broadcast, then stream the tensors in the same order; finally reset the prefix cache.
        metadata = [(name, str(t.dtype).removeprefix("torch."), list(t.shape)) for name, t in weights()]
        self.client.update_named_params(metadata, weights())
        self.client.reset_prefix_cache()
        self.needs_weights = False

    def generate(
        self,
        prompt_ids: list[list[int]],
        *,
        num_return: int,
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        seed: int,
        stop_token_ids: list[int],
    ) -> list[Sample]:
        # One request, n completions per prompt, prompt-major (VLLMClient.generate's contract).
        output = self.client.generate(
            prompts=prompt_ids,
            n=num_return,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_new_tokens,
            logprobs=0,
            generation_kwargs={"seed": seed, "stop_token_ids": stop_token_ids},
        )
        completions = output["completion_ids"]
        logprobs = output.get("logprobs")
        token_ids = output.get("logprob_token_ids")
        samples = []
        for row, ids in enumerate(completions):
            values = []
            for position, token in enumerate(ids):
                # [seq][position][rank]: with logprobs=0 rank 0 is the sampled token; match by id to be sure.
                candidates = logprobs[row][position] if logprobs is not None else []
                ranked_ids = token_ids[row][position] if token_ids is not None else [token] * len(candidates)
                value = next((lp for lp, t in zip(candidates, ranked_ids, strict=False) if t == token), None)
                values.append(float(value) if value is not None else math.nan)
            samples.append(Sample(list(ids), values))
        return samples


def vllm_weights(model: Any, dtype: torch.dtype | None = None) -> Iterator[tuple[str, torch.Tensor]]:
    """The model's weights one by one under the names vLLM loads (the Hugging Face names of the base model).

    A LoRA (peft) policy yields its merged weights W + delta from adapters.merged_weights, computed afresh without
    touching the model. TRL merges in place instead (merge_adapter, read, unmerge_adapter in
    VLLMGeneration._iter_named_params), which in bf16 moves the base weights, our KL reference, by a rounding step
    at every sync. A DDP wrapper is looked through (`.module`)."""
    from .adapters import is_lora, merged_weights

    inner = model.module if isinstance(model, torch.nn.parallel.DistributedDataParallel) else model
    if is_lora(inner):
        yield from merged_weights(inner)
        return
    for name, parameter in inner.named_parameters():
        weight = parameter.data if dtype is None else parameter.data.to(dtype)  # bf16 compute over float32 masters
        yield name.replace("_checkpoint_wrapped_module.", ""), weight  # TRL's _fix_param_name_to_vllm


class VLLMBackend:
    """RolloutBackend over a vLLM engine; old log-probs from the trainer's model, vLLM's kept for TIS."""

    def __init__(
        self,
        engine: Engine,
        model: Any,
        tokenizer: Any,
        stop_token_ids: Sequence[int],
        stop_strings: Sequence[str] = (),
        *,
        logprob_memory_mb: float = 4096,
        compute_dtype: torch.dtype | None = None,
    ) -> None:
        self.logprob_memory_mb = logprob_memory_mb
        self.compute_dtype = compute_dtype
        """bf16 when full fine-tuning keeps float32 master weights: vLLM gets them cast, old log-probs autocast."""
        self.engine = engine
        self.model = model
        self.tokenizer = tokenizer
        self.stop_token_ids = list(dict.fromkeys(stop_token_ids))
        self.stop_strings = multi_token_stops(tokenizer, stop_strings)
        """Cut after generation (the engines stop at ids only): no token past the answer is trained on."""

    @property
    def pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return int(pad if pad is not None else self.tokenizer.eos_token_id)

    def sync_weights(self, model: Any) -> None:
        """Push `model`'s current weights into vLLM (after each optimiser step, before the next sampling)."""
        self.engine.load_weights(lambda: vllm_weights(model, self.compute_dtype))

    @torch.no_grad()
    def generate(
        self,
        prompts: Sequence[str],
        *,
        num_return: int,
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        seed: int,
    ) -> list[Rollout]:
        if self.engine.needs_weights:  # first use, or a level-2 sleep since the last push (TRL does the same)
            self.sync_weights(self.model)
        prompt_ids = [list(self.tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts]
        samples = self.engine.generate(
            prompt_ids,
            num_return=num_return,
            max_new_tokens=max_new_tokens,
            temperature=max(temperature, 0.0),
            top_p=top_p,
            seed=seed,
            stop_token_ids=self.stop_token_ids,
        )
        if len(samples) != len(prompts) * num_return:
            raise RuntimeError(f"vLLM returned {len(samples)} completions for {len(prompts)} x {num_return}")
        expanded = [ids for ids in prompt_ids for _ in range(num_return)]
        completions, sampled, truncated = [], [], []
        for sample in samples:
            completion, stopped = cut_at_stop(sample.token_ids, self.tokenizer, self.stop_token_ids, self.stop_strings)
            completions.append(completion)
            sampled.append(sample.logprobs[: len(completion)])
            truncated.append(not stopped)
        old = old_logprobs(
            self.model,
            expanded,
            completions,
            self.pad_id,
            temperature if temperature > 0 else 1.0,
            memory_mb=self.logprob_memory_mb,
            compute_dtype=self.compute_dtype,
        )
        return [
            Rollout(
                expanded[i],
                completions[i],
                self.tokenizer.decode(completions[i], skip_special_tokens=False),
                old[i],
                truncated[i],
                sampled[i],
            )
            for i in range(len(completions))
        ]


# ------------------------------------------------------------------------------------------------ the choice


@dataclass(frozen=True)
class Choice:
    backend: str
    """"vllm" or "transformers"."""
    reason: str
    """Why, in words for the run's log."""


def vllm_importable() -> bool:
    """Whether vllm and trl (whose client and helpers the vLLM backend uses) are installed (no import: vllm is slow)."""
    return importlib.util.find_spec("vllm") is not None and importlib.util.find_spec("trl") is not None


def choose(config: Any, *, vllm_installed: bool, cuda: bool) -> Choice:
    """Which backend `config.rollout_backend` means here. Raises BackendError when "vllm" cannot run."""
    if config.rollout_backend == "transformers":
        return Choice("transformers", "rollout_backend is transformers")
    # (short reason for the auto choice's log line, the full one for an explicit "vllm" that cannot run)
    missing: list[tuple[str, str]] = []
    if not vllm_installed:
        missing.append(("not installed", f"vllm is not installed ({INSTALL_HINT})"))
    if not cuda:
        missing.append(
            ("no CUDA GPU", "the policy is not on a CUDA GPU (vLLM runs on CUDA only; device must be auto or cuda)")
        )
    if config.model is None:
        missing.append(
            ("no model path", "no model path is given (vLLM loads the model from a Hugging Face folder: --model DIR)")
        )
    if getattr(config, "load_in_4bit", False):
        missing.append(
            ("4-bit base", "load_in_4bit is on (pushing merged LoRA weights into a 4-bit vLLM model is not supported)")
        )
    where = f"server at {config.vllm_server_url}" if config.vllm_mode == "server" else "colocated"
    if not missing:
        return Choice("vllm", f"rollout_backend {config.rollout_backend}: vLLM ({where}) is installed and CUDA visible")
    if config.rollout_backend == "vllm":
        raise BackendError(
            "rollout_backend vllm cannot be used: " + "; ".join(full for _, full in missing) + ". Fix that, or set "
            "rollout_backend to auto (vLLM where it can run, transformers otherwise) or transformers"
        )
    return Choice(
        "transformers",
        "rollout_backend auto; vLLM not used: " + ", ".join(short for short, _ in missing) + " (docs/SCALING.md)",
    )


def make_backend(config: Any, policy: Any, log: Callable[[str, str], None] | None = None) -> Any:
    """The run's RolloutBackend: vLLM or transformers as `config.rollout_backend` says and this machine allows.
    Logs the choice and why, once. Raises BackendError (a start-up error) when vLLM was asked for and cannot run."""
    choice = choose(config, vllm_installed=vllm_importable(), cuda=policy.device.type == "cuda")
    if log is not None:
        log("info", f"rollouts: {choice.backend} ({choice.reason})")
    stops = policy.stop_token_ids()
    stop_strings = getattr(getattr(policy, "style", None), "stop_strings", ())
    if choice.backend == "transformers":
        return TransformersBackend(
            policy.model,
            policy.tokenizer,
            stops,
            stop_strings=stop_strings,
            logprob_memory_mb=config.logprob_memory_mb,
            compute_dtype=getattr(policy, "compute_dtype", None),
        )
    engine: Engine
    if config.vllm_mode == "server":
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            raise BackendError(
                "vllm_mode server with several trainer processes is not supported (each would open its own weight "
                "channel to the server): use vllm_mode colocate with --launcher accelerate, or one process"
            )
        engine = ServerEngine.connect(str(config.vllm_server_url), policy.device)
    else:
        model_path = getattr(policy, "base_path", None) or str(config.model)
        engine = ColocatedEngine.start(
            model_path,
            config.vllm_gpu_memory_utilization,
            config.max_prompt_tokens + config.max_new_tokens + PROMPT_TEMPLATE_MARGIN,
            config.seed,
        )
    return VLLMBackend(
        engine,
        policy.model,
        policy.tokenizer,
        stops,
        stop_strings,
        logprob_memory_mb=config.logprob_memory_mb,
        compute_dtype=getattr(policy, "compute_dtype", None),
    )
