"""GPU checks in one go: what a machine with a GPU, when one is lent, should measure and confirm.

    python bench/gpu_check.py [--out FILE] [--budget-s 450] [--only NAME,NAME]
    python bench/gpu_check.py --device cpu --tiny          # the same code on a CPU with a tiny model: the script works

Needs PyTorch, transformers, peft, accelerate and numpy (TRL, datasets, vLLM and `kernels` for the rows that use
them); no Node and no Lean. Nothing is downloaded: the model is Qwen2-0.5B's shape built from a transformers config
(24 layers, hidden 896, 14 query and 2 key-value heads, MLP 4864, the 151,936-token vocabulary) with random weights,
its tokenizer a byte-level BPE made here with as many tokens, and the tasks are made-up Lean holes. Rewards come from
a stand-in verifier in the trainer's process (a candidate passes when its length in characters is even: not Lean,
not the simulator), so every group has mixed rewards and every step trains; what is measured is the training loop.

The checks, in this order (each in its own process, so one that crashes or exhausts the GPU leaves the rest):

    full_bf16       ours: full fine-tuning, float32 master weights computing in bf16, transformers rollouts; every
                    weight tensor must move (the mixed-precision rule of model/precision.py at 0.5B)
    lora_bf16       ours: LoRA r=16 on a bf16 base; every lora_B must move, the base must not
    vllm            ours: full fine-tuning with colocated vLLM rollouts; after the run the weights are pushed once
                    more and vLLM's tensors compared with the trainer's, name by name
    trl_grpo        TRL's GRPOTrainer on the same model, prompts and settings (transformers generate)
    trl_grpo_vllm   the same with TRL's colocated vLLM
    trl_async_grpo  TRL's AsyncGRPOTrainer (LoRA: the adapter reaches a `vllm serve` on the same GPU through disk;
                    its full-weight sync is NCCL, which needs the server on another GPU)
    vllm_lora       ours: LoRA with vLLM rollouts (merged-weight sync), compared as in `vllm`

Tokens per second count completion tokens from the end of the first step to the end of the last (the first step's
warm-up and compilation left out). Checkpoints are not written (the measure is the step, and a 0.5B full checkpoint
with its optimiser state is 6 GB). A check runs only when what it needs is installed and the time budget has room;
otherwise it is listed as skipped with the reason. One JSON file holds everything (out/gpu_check-<time>.json unless
--out says otherwise), and a table is printed. Exit status: 0 when no check failed (skips are not failures), 1 when
one did, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "trainer"))

# ------------------------------------------------------------------------------------------------ settings


@dataclass(frozen=True)
class Settings:
    """What every loop is held to (ours and TRL's alike)."""

    steps: int
    prompts: int
    """Groups per step."""
    group: int
    """Completions per prompt."""
    max_new_tokens: int
    max_prompt_tokens: int
    temperature: float
    lr_full: float
    lr_lora: float
    lora_r: int
    beta: float
    """0: no KL term, so no reference model (TRL's default)."""
    vllm_memory: float
    """The colocated engine's share of the GPU (ours' and TRL's default 0.3)."""
    micro_batch: int
    """Completions per forward/backward pass (gradients accumulate over a step's batch): ours' `micro_batch_size`,
    TRL's `per_device_train_batch_size` with `gradient_accumulation_steps` making up the batch."""
    weight_decay: float = 0.01
    """Ours' default for RL (TRL's is 0): held equal."""


GPU_SETTINGS = Settings(3, 8, 8, 128, 256, 1.0, 1e-6, 1e-5, 16, 0.0, 0.3, 8)
TINY_SETTINGS = Settings(2, 2, 2, 8, 64, 1.0, 1e-6, 1e-5, 4, 0.0, 0.3, 4)

QWEN2_0_5B: dict[str, Any] = {
    "vocab_size": 151_936,
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "max_position_embeddings": 32_768,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
}
"""Qwen2-0.5B's (and Qwen2.5-0.5B's) config.json: 494M parameters."""
TINY_MODEL: dict[str, Any] = {
    "vocab_size": 512,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 1024,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
}

SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
]
"""Qwen2's special tokens, at the end of the vocabulary as in Qwen's tokenizer."""
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""ChatML, for AsyncGRPOTrainer (its rollouts are conversations). Our loop and GRPOTrainer take the FIM prompts: the
template ends turns with <|im_end|>, not the tokenizer's end of sequence, so this reads as a base model."""

STAND_IN = {"kind": "simulator", "version": "stand-in", "label": "bench/gpu_check.py stand-in verifier (not Lean)"}


@dataclass(frozen=True)
class Check:
    name: str
    title: str
    needs: tuple[str, ...]
    """Python modules it imports, beyond torch and transformers."""
    cuda: bool
    """Needs a CUDA GPU."""
    limit_s: float
    """Its own time limit on a GPU (the child is stopped past it)."""
    min_s: float
    """It is not started with less of the time budget left (a vLLM engine alone takes about a minute to start)."""


CHECKS: tuple[Check, ...] = (
    Check("full_bf16", "ours, full fine-tuning (fp32 masters, bf16 compute)", ("numpy",), False, 150, 45),
    Check("lora_bf16", "ours, LoRA on a bf16 base", ("numpy", "peft"), False, 150, 45),
    Check("vllm", "ours, full, colocated vLLM + weight sync", ("numpy", "vllm", "trl"), True, 240, 120),
    Check("trl_grpo", "TRL GRPOTrainer", ("trl", "datasets", "accelerate"), False, 150, 45),
    Check("trl_grpo_vllm", "TRL GRPOTrainer, colocated vLLM", ("trl", "datasets", "vllm"), True, 240, 120),
    Check(
        "trl_async_grpo", "TRL AsyncGRPOTrainer, LoRA", ("trl", "datasets", "peft", "vllm", "kernels"), True, 240, 150
    ),
    Check("vllm_lora", "ours, LoRA, colocated vLLM + merged sync", ("numpy", "peft", "vllm", "trl"), True, 240, 120),
)
RATIOS = (("full_bf16", "trl_grpo"), ("vllm", "trl_grpo_vllm"), ("vllm_lora", "trl_async_grpo"))
"""Rows compared as tokens/s ratios (ours / TRL's) when both ran."""


def log(message: str) -> None:
    print(f"gpu_check: {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------- model and dataset


def build_tokenizer(vocab_size: int) -> Any:
    """A byte-level BPE with exactly `vocab_size` tokens: the 256 byte symbols, then two- and three-byte merges in a
    fixed order, then Qwen2's special tokens. Every id decodes to text, so a random model's samples are text of the
    usual length per token (a smaller tokenizer under a 151,936-row head would decode most samples to nothing)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    alphabet.sort()
    regular = vocab_size - len(SPECIAL_TOKENS)
    vocab: dict[str, int] = {symbol: i for i, symbol in enumerate(alphabet)}
    merges: list[tuple[str, str]] = []

    def pairs() -> Iterator[tuple[str, str]]:
        for a in alphabet:
            for b in alphabet:
                yield a, b
        for a in alphabet:
            for b in alphabet:
                for c in alphabet:
                    yield a + b, c

    for left, right in pairs():
        if len(vocab) >= regular:
            break
        vocab[left + right] = len(vocab)
        merges.append((left, right))
    core = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    core.decoder = decoders.ByteLevel()
    core.add_special_tokens(SPECIAL_TOKENS)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|endoftext|>",
        pad_token="<|fim_pad|>",
        additional_special_tokens=SPECIAL_TOKENS[1:6] + SPECIAL_TOKENS[7:],
        clean_up_tokenization_spaces=False,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    assert len(tokenizer) == vocab_size, (len(tokenizer), vocab_size)
    return tokenizer


def build_model(shape: dict[str, Any], into: Path, seed: int = 0) -> dict[str, Any]:
    """Qwen2ForCausalLM from `shape` with seeded random weights, saved in bf16 with its tokenizer."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = build_tokenizer(shape["vocab_size"])
    eos = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    config = Qwen2Config(**shape, bos_token_id=eos, eos_token_id=eos, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(seed)
    model: Any = Qwen2ForCausalLM(config)
    parameters = sum(p.numel() for p in model.parameters())
    model.to(torch.bfloat16).save_pretrained(into)
    tokenizer.save_pretrained(into)
    return {"parameters": parameters, "layers": shape["num_hidden_layers"], "vocab": shape["vocab_size"]}


def write_dataset(folder: Path, tasks: int = 48) -> Path:
    """tasks.jsonl + files.jsonl in `fim-rlvr export`'s format: Lean-like declarations with one-line tactic holes
    after a few earlier lemmas (prompts of a few hundred tokens); every fourth is held out."""
    folder.mkdir(parents=True, exist_ok=True)
    proofs = [("omega", "a + {i} ≤ b + {i}"), ("simp [Nat.add_comm]", "n + {i} = {i} + n"), ("decide", "{i} < {i} + 1")]
    rows, text, offset = [], [], 0
    for n in range(tasks):
        middle, goal = proofs[n % len(proofs)]
        context = "".join(
            f"theorem helper{n}_{k} (a b : Nat) (h : a ≤ b) : a + {k} ≤ b + {k} := by\n  omega\n\n" for k in range(4)
        )
        head = f"theorem t{n} (a b n : Nat) (h : a ≤ b) : {goal.format(i=n + 1)} := by\n  "
        prefix = context + head
        line = prefix.count("\n")
        rows.append(
            {
                "id": f"task-{n}",
                "file": "Bench.lean",
                "decl": f"Bench.t{n}",
                "declKind": "theorem",
                "kind": "tactic",
                "range": {"start": {"line": line, "character": 2}, "end": {"line": line, "character": 2 + len(middle)}},
                "middle": middle,
                "indent": 2,
                "imports": [],
                "split": "test" if n % 4 == 3 else "train",
                "statement": head.split(" := ")[0],
                "prefix": prefix,
                "suffix": "",
                "declStart": {"line": line, "character": 0},
                "variables": [],
                "offsets": {"start": offset + len(prefix), "end": offset + len(prefix) + len(middle)},
            }
        )
        text.append(prefix + middle + "\n")
        offset += len(text[-1])
    (folder / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    files = {"file": "Bench.lean", "sha256": "0", "text": "".join(text)}
    (folder / "files.jsonl").write_text(json.dumps(files) + "\n", encoding="utf-8")
    return folder


# -------------------------------------------------------------------------------------------- our loop


def stand_in_verdict(task_id: str, candidate: str) -> dict[str, Any]:
    """The stand-in's verdict: proved when the candidate's length in characters is even."""
    passed = len(candidate) % 2 == 0
    return {
        "taskId": task_id,
        "kind": "proved" if passed else "failed",
        "reward": 1.0 if passed else 0.0,
        "rewardMetrics": {},
        "diagnostics": [],
        "elapsedMs": 0.0,
        "cached": False,
        "verifier": STAND_IN,
    }


class StandInVerifier:
    """The trainer's Verifier interface, answered at once in this process."""

    def submit(self, items: Sequence[Any]) -> Future[list[Any]]:
        future: Future[list[Any]] = Future()
        future.set_result([stand_in_verdict(i["taskId"], i["candidate"]) for i in items])
        return future

    def cancel(self, future: Future[list[Any]]) -> None:
        pass


class Clock:
    """The trainer's events: the time each step ended (after the device finished its work) and the log."""

    def __init__(self, cuda: bool) -> None:
        self.cuda = cuda
        self.step_ends: dict[int, float] = {}
        self.messages: list[tuple[str, Any]] = []

    def emit(self, method: str, params: Any) -> None:
        if method == "train/progress":
            if self.cuda:
                import torch

                torch.cuda.synchronize()
            self.step_ends[int(params["step"])] = time.perf_counter()
        if method == "train/log":
            log(f"  trainer: {params.get('message', '')}")
        self.messages.append((method, params))

    def of(self, method: str) -> list[Any]:
        return [p for m, p in self.messages if m == method]


def timed(step_ends: dict[int, float], tokens_by_step: dict[int, int]) -> dict[str, Any]:
    """Tokens/s and s/step from the end of the first step to the end of the last."""
    steps = sorted(step_ends)
    if len(steps) < 2:
        return {"tokens_per_second": None, "seconds_per_step": None, "timed_steps": 0, "tokens": 0}
    first, last = steps[0], steps[-1]
    seconds = step_ends[last] - step_ends[first]
    tokens = sum(n for step, n in tokens_by_step.items() if first < step <= last)
    return {
        "tokens_per_second": round(tokens / seconds, 2) if seconds > 0 else None,
        "seconds_per_step": round(seconds / (len(steps) - 1), 4),
        "timed_steps": len(steps) - 1,
        "tokens": tokens,
    }


def our_config(ctx: Context, *, lora: bool, rollout: str) -> dict[str, Any]:
    s = ctx.settings
    return {
        "model": str(ctx.model),
        "steps": s.steps,
        "batch_size": s.prompts,
        "group_size": s.group,
        "max_new_tokens": s.max_new_tokens,
        "max_prompt_tokens": s.max_prompt_tokens,
        "temperature": s.temperature,
        "learning_rate": s.lr_lora if lora else s.lr_full,
        "micro_batch_size": s.micro_batch,
        "weight_decay": s.weight_decay,
        "lr_scheduler": "constant",
        "gradient_checkpointing": False,
        "sft_steps": 0,
        "eval_limit": 1,
        "validation_every": 0,
        "checkpoint_every": 1_000_000,
        "curriculum": False,
        "seed": 0,
        "device": ctx.device,
        "bf16": True,
        "rollout_backend": rollout,
        "vllm_gpu_memory_utilization": s.vllm_memory,
        "algorithm": "grpo",
        "algo_config": {"beta": s.beta},
        **({"lora_r": s.lora_r} if lora else {}),
    }


def run_ours(ctx: Context, *, lora: bool, rollout: str) -> dict[str, Any]:
    """Our Trainer in this process on the built model; what moved, how fast, and how much memory."""
    import torch
    from fim_rlvr.core.config import from_dict
    from fim_rlvr.run.trainer import Trainer

    cuda = ctx.device == "cuda"
    clock = Clock(cuda)
    run_dir = ctx.work / f"run-{ctx.check}"
    trainer = Trainer(
        from_dict(our_config(ctx, lora=lora, rollout=rollout)),
        ctx.dataset,
        run_dir,
        resume=False,
        verifier=StandInVerifier(),
        events=clock,
    )
    # Checkpoints are not what is measured, and a 0.5B full one with its optimiser state is 6 GB: none is written.
    trainer._checkpoint = lambda step, pending=None: None  # type: ignore[method-assign]
    trainer.prepare()
    model = trainer.policy.model
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    trainer.run()
    seconds = time.perf_counter() - started
    done = clock.of("train/done")
    if not done or done[0].get("status") != "completed":
        raise CheckFailed(f"the run did not complete: {done[0] if done else 'no train/done'}")
    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    result: dict[str, Any] = {
        **timed(clock.step_ends, {int(m["step"]): int(m["tokens"]) for m in lines}),
        "run_seconds": round(seconds, 2),
        "peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if cuda else None,
        "loss": [m["loss"] for m in lines],
        "gen_seconds": [m["gen_seconds"] for m in lines],
        "opt_seconds": [m["opt_seconds"] for m in lines],
        "master_dtype": str(trainer.plan.dtype).removeprefix("torch."),
        "compute_dtype": str(trainer.policy.compute_dtype).removeprefix("torch."),
        "rollouts": type(trainer.backend).__name__,
    }
    mismatch = [m["sampling_logp_difference_mean"] for m in lines if "sampling_logp_difference_mean" in m]
    if mismatch:
        result["sampling_logp_difference_mean"] = mismatch
    if not all(math.isfinite(float(x)) for x in result["loss"]):
        raise CheckFailed(f"a loss is not finite: {result['loss']}")
    after = dict(model.named_parameters())
    if lora:
        result.update(lora_moves(before, after))
    else:
        result.update(full_moves(before, after))
    ctx.trainer = trainer
    return result


def full_moves(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Every trained weight tensor must have moved; the share of elements that moved is reported (bf16 weights updated
    in place lose most of a 1e-6 step to rounding: issue 24 measured 2.2%)."""
    import torch

    trained = [n for n, p in after.items() if p.requires_grad]
    still = [n for n in trained if torch.equal(before[n], after[n].detach())]
    elements = sum(after[n].numel() for n in trained)
    moved = sum(int(before[n].ne(after[n].detach()).sum()) for n in trained)
    found = {
        "tensors_trained": len(trained),
        "tensors_moved": len(trained) - len(still),
        "elements_moved_share": round(moved / max(1, elements), 6),
        "weights_dtype": str(next(iter(after.values())).dtype).removeprefix("torch."),
    }
    if still:
        raise CheckFailed(f"{len(still)} of {len(trained)} weight tensors did not move, e.g. {still[:3]}", found)
    return found


def lora_moves(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Every lora_B must have moved (it starts at zero and is what the first step's gradient reaches); the base must
    be frozen and bit for bit unchanged."""
    import torch

    adapters = [n for n in after if ".lora_" in n]
    lora_b = [n for n in adapters if ".lora_B." in n]
    base = [n for n in after if ".lora_" not in n]
    moved_base = [n for n in base if not torch.equal(before[n], after[n].detach())]
    still_b = [n for n in lora_b if torch.equal(before[n], after[n].detach())]
    trainable_base = [n for n in base if after[n].requires_grad]
    found = {
        "adapter_tensors": len(adapters),
        "lora_b_moved": len(lora_b) - len(still_b),
        "lora_b": len(lora_b),
        "base_tensors_moved": len(moved_base),
        "base_dtype": str(after[base[0]].dtype).removeprefix("torch.") if base else None,
        "adapter_dtype": str(after[adapters[0]].dtype).removeprefix("torch.") if adapters else None,
    }
    problems = []
    if not lora_b:
        problems.append("no LoRA adapters were found")
    if still_b:
        problems.append(f"{len(still_b)} of {len(lora_b)} lora_B tensors did not move, e.g. {still_b[:3]}")
    if moved_base or trainable_base:
        problems.append(f"base weights moved or trainable: {(moved_base + trainable_base)[:3]}")
    if problems:
        raise CheckFailed("; ".join(problems), found)
    return found


def vllm_sync(ctx: Context) -> dict[str, Any]:
    """Push the trainer's weights into the colocated engine once more and compare vLLM's tensors with what was pushed,
    for every name both sides use (vLLM fuses q/k/v and gate/up under other names, which are left out)."""
    import torch
    from fim_rlvr.model.vllm_backend import vllm_weights

    trainer = ctx.trainer
    backend = trainer.backend
    backend.sync_weights(trainer.policy.model)
    engine_model = backend.engine.llm.llm_engine.model_executor.driver_worker.model_runner.model
    named = list(engine_model.named_parameters())
    # Indexed by every dotted suffix too: a wrapper module in front of the model (CUDA graphs, compilation) prefixes
    # the names vLLM loads by.
    theirs: dict[str, Any] = {}
    for full, parameter in named:
        parts = full.split(".")
        for start in range(len(parts)):
            theirs.setdefault(".".join(parts[start:]), parameter)
    compared, different, worst = 0, [], 0.0
    for name, tensor in vllm_weights(trainer.policy.model, backend.compute_dtype):
        other = theirs.get(name)
        if other is None or tuple(other.shape) != tuple(tensor.shape):
            continue
        compared += 1
        ours = tensor.to(device=other.device, dtype=other.dtype)
        if not torch.equal(ours, other):
            different.append(name)
            worst = max(worst, float((ours.float() - other.float()).abs().max()))
    found: dict[str, Any] = {
        "sync_tensors_compared": compared,
        "sync_tensors_different": len(different),
        "sync_max_difference": worst,
    }
    if compared < 2:
        found["vllm_names"] = [n for n, _ in named[:8]]
        raise CheckFailed(f"only {compared} tensors could be matched by name with vLLM's model", found)
    if different:
        raise CheckFailed(f"vLLM holds other weights than the trainer pushed: {different[:3]}", found)
    return found


# ------------------------------------------------------------------------------------------------- TRL


RENAMED = {"activation_checkpointing": "gradient_checkpointing"}
"""Options under their new name, and the old one releases before the rename take (transformers 5 deprecates
`gradient_checkpointing`)."""


def accepted(config_class: Any, wanted: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The options this TRL version's config class has (under an older name where it has that one), and the names it
    has neither way (recorded, not fatal: TRL and transformers rename options between releases)."""
    names = {f.name for f in dataclasses.fields(config_class)}
    options: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in wanted.items():
        name = key if key in names else RENAMED.get(key, "")
        if name in names:
            options[name] = value
        else:
            dropped.append(key)
    return options, sorted(dropped)


def trl_reward(
    prompts: Any, completions: Any, completion_ids: Any = None, *, tally: list[int], **_: Any
) -> list[float]:
    """The stand-in's rule on TRL's completions (text or messages); counts completion tokens into `tally`."""
    tally.extend(len(ids) for ids in completion_ids or [])
    texts = [c if isinstance(c, str) else (c[-1].get("content", "") if c else "") for c in completions]
    return [1.0 if len(t) % 2 == 0 else 0.0 for t in texts]


def file_reward(prompts: Any, completions: Any, completion_ids: Any = None, *, path: str, **_: Any) -> list[float]:
    """trl_reward for a reward function that runs in another process (AsyncGRPOTrainer's rollout worker): each call
    appends its time and completion tokens to `path`."""
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps([time.time(), sum(len(ids) for ids in completion_ids or [])]) + "\n")
    return trl_reward(prompts, completions, completion_ids, tally=[])


def trl_config(ctx: Context, *, vllm: bool) -> tuple[Any, list[str]]:
    """GRPOConfig held to our settings: float32 master weights with bf16 autocast on CUDA (as ours), no KL term, the
    same sampling; colocated vLLM with sleep mode and the same memory share when `vllm`."""
    import torch
    from trl import GRPOConfig

    s = ctx.settings
    cuda = ctx.device == "cuda"
    wanted = {
        "output_dir": str(ctx.work / f"trl-{ctx.check}"),
        "max_steps": s.steps,
        # TRL counts completions, ours groups of them: one generation of prompts x group completions per optimiser
        # step, trained micro_batch at a time (TRL generates per_device x accumulation completions at once).
        "per_device_train_batch_size": s.micro_batch,
        "gradient_accumulation_steps": s.prompts * s.group // s.micro_batch,
        "num_generations": s.group,
        "max_completion_length": s.max_new_tokens,
        "temperature": s.temperature,
        "learning_rate": s.lr_full,
        "lr_scheduler_type": "constant",
        "weight_decay": s.weight_decay,
        "max_grad_norm": 1.0,
        "activation_checkpointing": False,
        "beta": s.beta,
        "loss_type": "grpo",
        "num_iterations": 1,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "use_cpu": not cuda,
        "bf16": cuda and torch.cuda.is_bf16_supported(),
        "disable_tqdm": True,
        "seed": 0,
        "dataloader_num_workers": 0,
        "use_vllm": vllm,
    }
    if vllm:
        wanted.update(
            {"vllm_mode": "colocate", "vllm_gpu_memory_utilization": s.vllm_memory, "vllm_enable_sleep_mode": True}
        )
    options, dropped = accepted(GRPOConfig, wanted)
    return GRPOConfig(**options), dropped


def run_trl(ctx: Context, *, vllm: bool) -> dict[str, Any]:
    import torch
    from fim_rlvr.integrations.datasets_view import load_view
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOTrainer

    cuda = ctx.device == "cuda"
    tokenizer = AutoTokenizer.from_pretrained(ctx.model)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(ctx.model, dtype=torch.float32)
    train = load_view(ctx.dataset, split="train", tokenizer=tokenizer, max_prompt_tokens=ctx.settings.max_prompt_tokens)
    tally: list[int] = []
    tokens_by_step: dict[int, int] = {}
    step_ends: dict[int, float] = {}

    class StepClock(TrainerCallback):  # type: ignore[misc]
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if cuda:
                torch.cuda.synchronize()
            step_ends[state.global_step] = time.perf_counter()
            tokens_by_step[state.global_step] = sum(tally)
            tally.clear()
            log(f"  TRL step {state.global_step}/{ctx.settings.steps}")

    reward: Any = functools.partial(trl_reward, tally=tally)
    reward.__name__ = "stand_in"  # type: ignore[attr-defined]
    config, dropped = trl_config(ctx, vllm=vllm)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    trainer = GRPOTrainer(
        model=model, reward_funcs=reward, args=config, train_dataset=train, processing_class=tokenizer,
        callbacks=[StepClock()],
    )  # fmt: skip
    trainer.train()
    import trl

    return {
        **timed(step_ends, tokens_by_step),
        "peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if cuda else None,
        "trl": trl.__version__,
        "options_this_trl_lacks": dropped,
        "bf16": bool(config.bf16),
    }


def async_grpo_classes() -> tuple[Any, Any]:
    """AsyncGRPOTrainer and its config: in `trl` itself from 1.18, in trl.experimental.async_grpo before."""
    try:
        from trl import AsyncGRPOConfig, AsyncGRPOTrainer  # type: ignore[attr-defined]

        return AsyncGRPOTrainer, AsyncGRPOConfig
    except ImportError:
        from trl.experimental.async_grpo import AsyncGRPOConfig, AsyncGRPOTrainer

        return AsyncGRPOTrainer, AsyncGRPOConfig


def async_grpo_config(
    settings: Settings, output_dir: Path, server_url: str, *, cuda: bool = True
) -> tuple[Any, list[str]]:
    """AsyncGRPOConfig held to our settings (LoRA's learning rate: it trains an adapter here). `cuda` False only to
    check the options on a CPU (transformers refuses bf16 without a GPU)."""
    _, config_class = async_grpo_classes()
    wanted = {
        "output_dir": str(output_dir),
        "max_steps": settings.steps,
        "per_device_train_batch_size": settings.micro_batch,
        "gradient_accumulation_steps": settings.prompts * settings.group // settings.micro_batch,
        "num_generations": settings.group,
        "max_completion_length": settings.max_new_tokens,
        "temperature": settings.temperature,
        "learning_rate": settings.lr_lora,
        "lr_scheduler_type": "constant",
        "weight_decay": settings.weight_decay,
        "max_grad_norm": 1.0,
        "activation_checkpointing": False,
        "dtype": "bfloat16",
        "bf16": cuda,
        "use_cpu": not cuda,
        "vllm_server_base_url": server_url,
        "weight_sync_steps": 1,
        "max_staleness": 1,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "seed": 0,
        "disable_tqdm": True,
    }
    options, dropped = accepted(config_class, wanted)
    return config_class(**options), dropped


def vllm_serve_command(vllm: str, model: Path, port: int, settings: Settings, max_loras: int) -> list[str]:
    """`vllm serve` as TRL's async trainer needs it (trl vllm-serve's settings: processed log-probs, all of them), with
    runtime LoRA loading for adapter-only sync; its environment needs VLLM_SERVER_DEV_MODE=1 (/server_info) and
    VLLM_ALLOW_RUNTIME_LORA_UPDATING=1."""
    return [
        vllm, "serve", str(model), "--port", str(port), "--dtype", "bfloat16",
        "--gpu-memory-utilization", str(settings.vllm_memory),
        "--max-model-len", str(settings.max_prompt_tokens + 256 + settings.max_new_tokens),
        "--enable-lora", "--max-lora-rank", str(settings.lora_r), "--max-loras", str(max_loras),
        "--logprobs-mode", "processed_logprobs", "--max-logprobs", "-1", "--seed", "0",
    ]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_trl_async(ctx: Context) -> dict[str, Any]:
    import torch
    from datasets import Dataset
    from fim_rlvr.integrations.datasets_view import trl_rows
    from peft import LoraConfig
    from transformers import AutoTokenizer, TrainerCallback

    trainer_class, _ = async_grpo_classes()
    try:  # its tree attention takes FlashAttention-3 from the Hub through `kernels`; offline, only a cached copy works
        from kernels import get_kernel

        get_kernel("kernels-community/flash-attn3", version=1)
    except Exception as error:
        raise CheckSkipped(
            "AsyncGRPOTrainer's tree attention loads FlashAttention-3 from the Hugging Face Hub through `kernels` "
            f"(kernels-community/flash-attn3) and this machine has no usable copy ({type(error).__name__}: "
            f"{str(error)[:200]}); fetch it once where the Hub is reachable"
        ) from error
    vllm = shutil.which("vllm", path=str(Path(sys.executable).parent)) or shutil.which("vllm")
    if vllm is None:
        raise CheckSkipped("the `vllm` command is not installed beside this Python (AsyncGRPOTrainer needs a server)")
    settings = ctx.settings
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    config, dropped = async_grpo_config(settings, ctx.work / "trl-async", url)
    server_log = ctx.work / "vllm-serve.log"
    env = {**os.environ, "VLLM_SERVER_DEV_MODE": "1", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "1"}
    max_loras = int(getattr(config, "max_staleness", 1)) + 2
    with open(server_log, "w", encoding="utf-8") as out:
        server = subprocess.Popen(
            vllm_serve_command(vllm, ctx.model, port, settings, max_loras),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(ctx.model)
        rows = trl_rows(ctx.dataset, split="train", tokenizer=tokenizer, max_prompt_tokens=settings.max_prompt_tokens)
        train = Dataset.from_list([{"prompt": [{"role": "user", "content": r["prompt"]}]} for r in rows])
        tally_path = ctx.work / "async-tokens.jsonl"
        reward: Any = functools.partial(file_reward, path=str(tally_path))
        reward.__name__ = "stand_in"  # type: ignore[attr-defined]
        step_ends: dict[int, float] = {}

        class StepClock(TrainerCallback):  # type: ignore[misc]
            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                torch.cuda.synchronize()
                step_ends[state.global_step] = time.time()
                log(f"  AsyncGRPO step {state.global_step}/{settings.steps}")

        torch.cuda.reset_peak_memory_stats()
        trainer = trainer_class(
            model=str(ctx.model), reward_funcs=reward, args=config, train_dataset=train, processing_class=tokenizer,
            callbacks=[StepClock()],
            peft_config=LoraConfig(r=settings.lora_r, lora_alpha=2 * settings.lora_r, target_modules="all-linear"),
        )  # fmt: skip
        trainer.train()
    except Exception as error:
        tail = server_log.read_text(encoding="utf-8", errors="replace")[-1500:] if server_log.exists() else ""
        raise CheckFailed(f"{type(error).__name__}: {str(error)[:500]}; vllm serve's log ends: {tail}") from error
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    # Tokens scored by the rollout worker between the end of the first step and the end of the last.
    scored = (
        [json.loads(line) for line in tally_path.read_text(encoding="utf-8").splitlines()]
        if tally_path.exists()
        else []
    )
    steps = sorted(step_ends)
    window = (step_ends[steps[0]], step_ends[steps[-1]]) if len(steps) >= 2 else None
    tokens = sum(n for at, n in scored if window and window[0] < at <= window[1])
    seconds = window[1] - window[0] if window else 0.0
    import trl

    return {
        "tokens_per_second": round(tokens / seconds, 2) if seconds > 0 else None,
        "seconds_per_step": round(seconds / (len(steps) - 1), 4) if len(steps) >= 2 else None,
        "timed_steps": max(0, len(steps) - 1),
        "tokens": tokens,
        "peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
        "trl": trl.__version__,
        "options_this_trl_lacks": dropped,
        "note": "tokens scored by the rollout worker during the timed steps (generation overlaps training)",
    }


# ------------------------------------------------------------------------------------- one check (child)


class CheckFailed(Exception):
    def __init__(self, why: str, results: dict[str, Any] | None = None) -> None:
        super().__init__(why)
        self.results = results or {}


class CheckSkipped(Exception):
    pass


@dataclass
class Context:
    check: str
    device: str
    settings: Settings
    model: Path
    dataset: Path
    work: Path
    trainer: Any = None


def run_check(ctx: Context) -> dict[str, Any]:
    """One check's results; raises CheckFailed or CheckSkipped."""
    if ctx.check == "full_bf16":
        return run_ours(ctx, lora=False, rollout="transformers")
    if ctx.check == "lora_bf16":
        return run_ours(ctx, lora=True, rollout="transformers")
    if ctx.check in ("vllm", "vllm_lora"):
        result = run_ours(ctx, lora=ctx.check == "vllm_lora", rollout="vllm")
        if result["rollouts"] != "VLLMBackend":
            raise CheckFailed(f"the run sampled with {result['rollouts']}, not vLLM", result)
        try:
            result.update(vllm_sync(ctx))
        except CheckFailed as failed:
            raise CheckFailed(str(failed), {**result, **failed.results}) from failed
        return result
    if ctx.check in ("trl_grpo", "trl_grpo_vllm"):
        return run_trl(ctx, vllm=ctx.check == "trl_grpo_vllm")
    if ctx.check == "trl_async_grpo":
        return run_trl_async(ctx)
    raise ValueError(f"unknown check {ctx.check}")


def child_main(args: argparse.Namespace) -> int:
    """Runs one check and writes {status, why, results} to --result."""
    work = Path(args.work)
    saved = json.loads((work / "setup.json").read_text(encoding="utf-8"))
    ctx = Context(
        args.child, saved["device"], Settings(**saved["settings"]), Path(saved["model"]), Path(saved["dataset"]), work
    )
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # set before anything imports huggingface_hub, which reads it once
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    answer: dict[str, Any]
    try:
        answer = {"status": "passed", "why": None, "results": run_check(ctx)}
    except CheckSkipped as skipped:
        answer = {"status": "skipped", "why": str(skipped), "results": {}}
    except CheckFailed as failed:
        answer = {"status": "failed", "why": str(failed), "results": failed.results}
    except Exception as error:
        answer = {"status": "failed", "why": f"{type(error).__name__}: {error}", "results": {}}
        answer["traceback"] = traceback.format_exc()[-3000:]
    write_json(Path(args.result), answer)
    return 0


# --------------------------------------------------------------------------------------- the whole (parent)


def write_json(path: Path, value: Any) -> None:
    """Written beside `path` and renamed over it: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def missing_modules(names: Sequence[str]) -> list[str]:
    return [n for n in names if importlib.util.find_spec(n) is None]


def device_info(device: str) -> dict[str, Any]:
    import torch

    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        return {
            "kind": "cuda",
            "name": torch.cuda.get_device_name(0),
            "count": torch.cuda.device_count(),
            "memory_gib": round(props.total_memory / 2**30, 1),
            "capability": f"{props.major}.{props.minor}",
            "bf16": bool(torch.cuda.is_bf16_supported()),
            "cuda": torch.version.cuda,
        }
    return {"kind": "cpu", "name": platform.processor() or platform.machine(), "cores": os.cpu_count()}


def run_child(check: Check, work: Path, limit_s: float, by_budget: bool) -> dict[str, Any]:
    """The check in its own process (its own session, so a timeout ends its vLLM server too). `by_budget`: the limit
    is what was left of the time budget, less than the check's own (running past it is then not the check's fault)."""
    result_file = work / f"result-{check.name}.json"
    command = [sys.executable, str(Path(__file__).resolve()), "--child", check.name, "--work", str(work)]
    command += ["--result", str(result_file)]
    started = time.perf_counter()
    child = subprocess.Popen(command, start_new_session=True)
    try:
        code = child.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        seconds = round(time.perf_counter() - started, 1)
        if by_budget:
            why = f"stopped after {limit_s:.0f} s, when the time budget ran out (--budget-s to allow more)"
            return {"status": "skipped", "why": why, "results": {}, "seconds": seconds}
        why = f"ran past its time limit of {limit_s:.0f} s and was stopped"
        return {"status": "failed", "why": why, "results": {}, "seconds": seconds}
    seconds = round(time.perf_counter() - started, 1)
    if not result_file.exists():
        why = f"its process ended with exit code {code} before writing a result (a crash; its output is above)"
        return {"status": "failed", "why": why, "results": {}, "seconds": seconds}
    answer: dict[str, Any] = json.loads(result_file.read_text(encoding="utf-8"))
    answer["seconds"] = seconds
    return answer


def cell(value: Any, width: int, digits: int = 1) -> str:
    if value is None:
        return "-".rjust(width)
    if isinstance(value, float):
        return f"{value:.{digits}f}".rjust(width)
    return str(value).rjust(width)


def note_of(name: str, entry: dict[str, Any]) -> str:
    if entry["status"] != "passed":
        return str(entry.get("why") or "")
    r = entry["results"]
    if "tensors_moved" in r:
        share = f"{r['elements_moved_share']:.1%}"
        note = f"{r['tensors_moved']}/{r['tensors_trained']} weight tensors moved ({share} of elements)"
    elif "lora_b" in r:
        dtypes = f"{r['base_dtype']} base, {r['adapter_dtype']} adapters"
        note = f"{r['lora_b_moved']}/{r['lora_b']} lora_B moved, base unchanged ({dtypes})"
    else:
        note = f"TRL {r.get('trl')}"
    if "sync_tensors_compared" in r:
        note += f"; vLLM weights equal the trainer's ({r['sync_tensors_compared']} tensors)"
    return note


def table(report: dict[str, Any]) -> str:
    lines = [
        f"{'check':<16} {'status':<8} {'tokens/s':>10} {'s/step':>8} {'peak GiB':>9} {'seconds':>8}  notes",
    ]
    for name, entry in report["checks"].items():
        r = entry.get("results", {})
        lines.append(
            f"{name:<16} {entry['status']:<8} {cell(r.get('tokens_per_second'), 10)} "
            f"{cell(r.get('seconds_per_step'), 8, 2)} {cell(r.get('peak_gib'), 9)} {cell(entry.get('seconds'), 8)}  "
            f"{note_of(name, entry)}"
        )
    for ours, theirs in RATIOS:
        ratio = report["ratios"].get(f"{ours}/{theirs}")
        if ratio is not None:
            lines.append(f"tokens/s ratio {ours} / {theirs}: {ratio:.2f}x")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--tiny", action="store_true", help="a 2-layer model and tiny settings (checks the script)")
    parser.add_argument("--out", type=Path, help="the JSON file (default out/gpu_check-<UTC time>.json)")
    parser.add_argument("--budget-s", type=float, help="stop starting checks after this long (GPU default 450)")
    parser.add_argument("--only", help="comma-separated check names: " + ", ".join(c.name for c in CHECKS))
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child_main(args)

    began = time.perf_counter()
    # Nothing is downloaded: what is not on this machine is skipped with the reason, never fetched half-way.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    chosen = [c for c in CHECKS if not args.only or c.name in args.only.split(",")]
    unknown = set(args.only.split(",")) - {c.name for c in CHECKS} if args.only else set()
    if unknown:
        parser.error(f"unknown check(s) {', '.join(sorted(unknown))}: one of {', '.join(c.name for c in CHECKS)}")
    budget = args.budget_s if args.budget_s is not None else (900.0 if args.tiny else 450.0)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or REPO / "out" / f"gpu_check-{stamp}.json"
    base_missing = missing_modules(["torch", "transformers"])
    if base_missing:
        log(f"{', '.join(base_missing)} not installed for {sys.executable}: nothing can run")
        return 1
    import torch

    cuda_here = torch.cuda.is_available()
    device = args.device
    report: dict[str, Any] = {
        "script": "bench/gpu_check.py",
        "started": stamp,
        "device": device_info(device) if device == "cpu" or cuda_here else {"kind": "cuda", "name": None},
        "versions": {
            "python": platform.python_version(),
            **{n: version(n) for n in ("torch", "transformers", "peft", "accelerate", "trl", "datasets", "vllm")},
        },
        "settings": dataclasses.asdict(TINY_SETTINGS if args.tiny else GPU_SETTINGS),
        "verifier": STAND_IN["label"] + ": a candidate passes when its length in characters is even",
        "notes": [
            "tokens/s: completion tokens from the end of the first step to the end of the last",
            "peak_gib: PyTorch's allocator in the check's process (a colocated vLLM's own memory pool is not in it)",
            "no checkpoints are written by our loop here (the measure is the step)",
        ],
        "checks": {},
        "ratios": {},
    }
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="fim-gpu-check-"))
    try:
        if device == "cuda" and not cuda_here:
            why = "no CUDA GPU is visible (torch.cuda.is_available() is False); --device cpu --tiny checks the script"
            for check in chosen:
                report["checks"][check.name] = {"status": "skipped", "why": why, "results": {}}
        else:
            shape = TINY_MODEL if args.tiny else QWEN2_0_5B
            log(f"building a Qwen2-shaped model ({'tiny' if args.tiny else '0.5B'}, random weights) and the tasks")
            setup_began = time.perf_counter()
            model_info = build_model(shape, work / "model")
            write_dataset(work / "dataset")
            report["model"] = {
                "shape": "tiny Qwen2" if args.tiny else "Qwen2-0.5B (config-built, random weights)",
                **model_info,
                "saved_dtype": "bfloat16",
                "setup_seconds": round(time.perf_counter() - setup_began, 1),
            }
            setup = {
                "device": device,
                "settings": report["settings"],
                "model": str(work / "model"),
                "dataset": str(work / "dataset"),
            }
            write_json(work / "setup.json", setup)
            for check in chosen:
                entry = plan_check(check, device, budget - (time.perf_counter() - began), args.tiny)
                if entry is None:
                    log(f"{check.name}: {check.title}")
                    own = check.limit_s * (4 if args.tiny else 1)
                    left = budget - (time.perf_counter() - began)
                    entry = run_child(check, work, min(own, left), by_budget=left < own)
                    log(f"{check.name}: {entry['status']}{': ' + str(entry['why']) if entry.get('why') else ''}")
                report["checks"][check.name] = entry
        for ours, theirs in RATIOS:
            a = report["checks"].get(ours, {}).get("results", {}).get("tokens_per_second")
            b = report["checks"].get(theirs, {}).get("results", {}).get("tokens_per_second")
            if a and b:
                report["ratios"][f"{ours}/{theirs}"] = round(a / b, 3)
        report["seconds"] = round(time.perf_counter() - began, 1)
        write_json(out, report)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    name = report["device"].get("name") or "no GPU"
    print(f"gpu_check on {name} ({report['device']['kind']}), {report.get('model', {}).get('shape', 'no model built')}")
    print(table(report))
    skipped = [n for n, e in report["checks"].items() if e["status"] == "skipped"]
    failed = [n for n, e in report["checks"].items() if e["status"] == "failed"]
    print(f"results: {out} ({report['seconds']} s; {len(failed)} failed, {len(skipped)} skipped)")
    return 1 if failed else 0


def plan_check(check: Check, device: str, remaining_s: float, tiny: bool) -> dict[str, Any] | None:
    """A skipped entry saying why, or None when the check can run."""

    def skip(why: str) -> dict[str, Any]:
        return {"status": "skipped", "why": why, "results": {}}

    if check.cuda and device != "cuda":
        return skip("needs a CUDA GPU (vLLM runs on CUDA only)")
    absent = missing_modules(check.needs)
    if absent:
        return skip(f"{', '.join(absent)} not installed for this Python")
    if check.name == "trl_async_grpo":
        try:
            async_grpo_classes()
        except ImportError:
            return skip(f"this TRL ({version('trl')}) has no AsyncGRPOTrainer")
    needed = check.min_s if not tiny else 20.0
    if remaining_s < needed:
        return skip(f"the time budget had {max(0.0, remaining_s):.0f} s left (--budget-s to allow more)")
    return None


if __name__ == "__main__":
    sys.exit(main())
