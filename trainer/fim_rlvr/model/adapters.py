"""What a run trains: every weight, a LoRA adapter (peft), or a LoRA adapter on a 4-bit base (QLoRA), optionally
through Unsloth; in which precision; with or without gradient checkpointing; and where the KL reference comes from.

`resolve` turns a TrainConfig into a Plan for the chosen device (null options take their defaults here, and an
option that cannot work here fails with a PolicyError that says what to install or change). `load_policy` builds
the run's policy under a Plan: fresh (the embedded model or a model path) or from a checkpoint (see checkpoint.py
for the layout). With LoRA the reference model is the policy itself with its adapters disabled (`reference_mode`),
so no second copy of the weights is kept; `fold_adapter` merges what an SFT warm start taught the adapter into the
base weights, so that disabled-adapter reference is the SFT policy, as the full fine-tuning copy is.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..core.config import TrainConfig
from ..tasks.data import Task
from .policy import Policy, PolicyError, build_embedded, finish, load_pretrained

ADAPTER_CONFIG = "adapter_config.json"
"""The file that marks a peft adapter folder (a LoRA checkpoint's model/)."""

UNSLOTH_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
"""Unsloth's own default LoRA targets (it takes module names, not peft's "all-linear")."""


@dataclass(frozen=True)
class Plan:
    """The resolved training set-up of one run."""

    lora_r: int | None
    """LoRA rank; None: full fine-tuning."""
    lora_alpha: int
    lora_targets: list[str] | str
    """Module names, or peft's "all-linear" (every linear layer but the output head)."""
    lora_dropout: float
    load_in_4bit: bool
    unsloth: bool
    dtype: torch.dtype
    """The dtype the model's weights are stored in: the frozen base's with LoRA (its adapter weights stay float32,
    peft's default), float32 for full fine-tuning (the master weights, also in bf16: see compute_dtype)."""
    compute_dtype: torch.dtype | None
    """bfloat16 when full fine-tuning runs in bf16: forward passes autocast to it over the float32 master weights
    (model/precision.py). None: forward passes run in the weights' own dtype."""
    gradient_checkpointing: bool
    seed: int
    """Seeds the adapter's initial weights."""
    max_seq_length: int
    """Longest prompt + completion (Unsloth sizes its kernels by it)."""

    @property
    def lora(self) -> bool:
        return self.lora_r is not None


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def resolve(config: TrainConfig, device: torch.device) -> Plan:
    """The Plan for `config` on `device`; raises PolicyError for an option this machine cannot honour."""
    cuda = device.type == "cuda"
    lora = config.lora_r is not None
    if config.bf16 is None:
        bf16 = cuda and torch.cuda.is_bf16_supported()
    elif config.bf16 and cuda and not torch.cuda.is_bf16_supported():
        raise PolicyError(
            f"bf16 was asked for but {torch.cuda.get_device_name(device)} does not support bfloat16: "
            "set bf16 to false (float32) or use an Ampere or newer GPU"
        )
    else:
        bf16 = bool(config.bf16)  # bf16 on CPU is allowed (half the memory), though slower than float32 there
    if config.load_in_4bit:
        if not cuda:
            raise PolicyError(
                f"load_in_4bit (QLoRA) needs a CUDA GPU (bitsandbytes' 4-bit kernels) and this run is on {device}: "
                "run on a CUDA machine with device cuda, or drop --load-in-4bit to train plain LoRA"
            )
        if not _importable("bitsandbytes"):
            raise PolicyError(
                "load_in_4bit (QLoRA) needs bitsandbytes, which is not installed: pip install 'fim_rlvr[qlora]' "
                "(on a CUDA machine), or drop --load-in-4bit to train plain LoRA"
            )
    unsloth = _resolve_unsloth(config, cuda, lora)
    master_weights = bf16 and not lora  # full fine-tuning: float32 weights the optimiser updates, bf16 compute
    return Plan(
        lora_r=config.lora_r,
        lora_alpha=config.lora_alpha if config.lora_alpha is not None else 2 * (config.lora_r or 0),
        lora_targets=list(config.lora_targets) if config.lora_targets is not None else "all-linear",
        lora_dropout=config.lora_dropout,
        load_in_4bit=config.load_in_4bit,
        unsloth=unsloth,
        dtype=torch.bfloat16 if bf16 and not master_weights else torch.float32,
        compute_dtype=torch.bfloat16 if master_weights else None,
        gradient_checkpointing=config.gradient_checkpointing,
        seed=config.seed,
        max_seq_length=config.max_prompt_tokens + config.max_new_tokens,
    )


def _resolve_unsloth(config: TrainConfig, cuda: bool, lora: bool) -> bool:
    """Unsloth when asked for (and usable: else a PolicyError), or by default when importable on CUDA with LoRA and a
    model path (Unsloth loads models by name; the embedded model is built in memory)."""
    usable = _importable("unsloth")
    if config.unsloth is None:
        return usable and cuda and lora and config.model is not None
    if not config.unsloth:
        return False
    missing = []
    if not usable:
        missing.append("Unsloth is not installed (pip install 'fim_rlvr[unsloth]')")
    if not cuda:
        missing.append("it needs a CUDA GPU (set device cuda on a CUDA machine)")
    if not lora:
        missing.append("it trains LoRA adapters (give --lora-r R)")
    if config.model is None:
        missing.append("it loads a model path (give --model DIR; the embedded model trains through peft)")
    if missing:
        raise PolicyError(
            "unsloth was asked for but cannot be used: " + "; ".join(missing) + ", or set unsloth to false"
        )
    return True


# ----------------------------------------------------------------------------------------------- loading


def load_policy(
    config: TrainConfig,
    plan: Plan,
    device: torch.device,
    dataset_dir: str | Path,
    tasks: Sequence[Task],
    checkpoint_dir: Path | None = None,
) -> Policy:
    """The run's policy: from `checkpoint_dir` when resuming, else the embedded model or config.model; with a LoRA
    adapter when the plan says so, in the plan's precision, with gradient checkpointing when asked."""
    embedded = config.model is None
    if checkpoint_dir is not None:
        policy = _load_checkpoint(checkpoint_dir, plan, device, embedded)
    elif embedded:
        policy = build_embedded(
            dataset_dir, tasks, config.seed, device, width=config.embedded_width, layers=config.embedded_layers
        )
        if plan.load_in_4bit:
            policy = _quantise_embedded(policy, plan, device)
        elif plan.dtype != torch.float32:
            policy.model.to(plan.dtype)
    else:
        policy = _load_base(config.model or "", plan, device, embedded=False)
        policy.base_path = str(Path(config.model or "").resolve())
    fresh = plan.lora and not is_lora(policy.model)
    if fresh:
        policy.model = _attach_fresh(policy.model, plan, policy.base_path)
    if not (fresh and plan.unsloth):  # Unsloth's get_peft_model enabled its own kind of checkpointing
        _enable_checkpointing(policy.model, plan)
    policy.model.train()
    policy.compute_dtype = plan.compute_dtype
    return policy


def _load_base(path: str | Path, plan: Plan, device: torch.device, embedded: bool) -> Policy:
    """A Hugging Face folder in the plan's precision (4-bit NF4 for QLoRA), through Unsloth when the plan says so."""
    if plan.unsloth:
        return _load_unsloth(path, plan, device, embedded)
    quantization = None
    if plan.load_in_4bit:
        from transformers import BitsAndBytesConfig

        quantization = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=plan.dtype if plan.dtype != torch.float32 else torch.float16,
        )
    return load_pretrained(path, device, embedded=embedded, dtype=plan.dtype, quantization=quantization)


def _load_unsloth(path: str | Path, plan: Plan, device: torch.device, embedded: bool) -> Policy:
    from unsloth import FastLanguageModel  # type: ignore[import-not-found]

    try:
        model, tokenizer = FastLanguageModel.from_pretrained(
            model_name=str(path), dtype=plan.dtype, load_in_4bit=plan.load_in_4bit, max_seq_length=plan.max_seq_length
        )
    except (OSError, ValueError) as error:
        raise PolicyError(f"Unsloth could not load the model at {path}: {error}; set unsloth to false") from error
    return finish(model, tokenizer, device, embedded)


def _quantise_embedded(policy: Policy, plan: Plan, device: torch.device) -> Policy:
    """The embedded model is built in memory; bitsandbytes quantises at load time, so save and reload it."""
    with tempfile.TemporaryDirectory(prefix="fim-rlvr-embedded-") as folder:
        policy.model.save_pretrained(folder)
        policy.tokenizer.save_pretrained(folder)
        return _load_base(folder, plan, device, embedded=True)


def _attach_fresh(model: Any, plan: Plan, base_path: str | None) -> Any:
    """A new LoRA adapter (B = 0, so the policy starts equal to its base), seeded by the plan."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(plan.seed)
        if plan.unsloth:
            from unsloth import FastLanguageModel

            targets = plan.lora_targets if isinstance(plan.lora_targets, list) else UNSLOTH_TARGETS
            peft_model = FastLanguageModel.get_peft_model(
                model,
                r=plan.lora_r,
                lora_alpha=plan.lora_alpha,
                lora_dropout=plan.lora_dropout,
                target_modules=targets,
                bias="none",
                use_gradient_checkpointing="unsloth" if plan.gradient_checkpointing else False,
                random_state=plan.seed,
            )
        else:
            from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

            if plan.load_in_4bit:
                model = prepare_model_for_kbit_training(
                    model,
                    use_gradient_checkpointing=plan.gradient_checkpointing,
                    gradient_checkpointing_kwargs={"use_reentrant": False},
                )
            lora = LoraConfig(
                r=plan.lora_r or 0,
                lora_alpha=plan.lora_alpha,
                target_modules=plan.lora_targets,
                lora_dropout=plan.lora_dropout,
                bias="none",
                task_type="CAUSAL_LM",
            )
            try:
                peft_model = get_peft_model(model, lora)
            except ValueError as error:
                raise PolicyError(
                    f"LoRA cannot adapt {plan.lora_targets}: {error}. Name linear layers of this model in "
                    "lora_targets (e.g. q_proj,v_proj) or leave it unset for every linear layer"
                ) from error
    peft_model.peft_config["default"].base_model_name_or_path = base_path
    return peft_model


def _load_checkpoint(folder: Path, plan: Plan, device: torch.device, embedded: bool) -> Policy:
    """A checkpoint's policy: a full model in model/, or an adapter in model/ on the base in base_model/ (or the
    folder its adapter_config.json names)."""
    model_dir = folder / "model"
    adapter_config = model_dir / ADAPTER_CONFIG
    if not adapter_config.is_file():
        if plan.lora:
            raise PolicyError(
                f"{folder} holds a fully fine-tuned model but this run trains LoRA: resume without --lora-r, "
                "or start a new run folder"
            )
        return _load_base(model_dir, plan, device, embedded)
    if not plan.lora:
        raise PolicyError(
            f"{folder} holds a LoRA adapter but this run trains every weight: resume with the run's --lora-r, "
            "or start a new run folder"
        )
    base_dir = folder / "base_model"
    named = json.loads(adapter_config.read_text(encoding="utf-8")).get("base_model_name_or_path")
    if base_dir.is_dir():
        policy = _load_base(base_dir, plan, device, embedded)
    elif named and Path(named).is_dir():
        policy = _load_base(named, plan, device, embedded)
        policy.base_path = str(Path(named).resolve())
    else:
        raise PolicyError(
            f"{folder} holds a LoRA adapter whose base model is not there: no base_model/ folder, and its "
            f"adapter_config.json names {named!r}, which is not a folder here; restore that folder and resume again"
        )
    from peft import PeftModel, prepare_model_for_kbit_training

    base = policy.model
    if plan.load_in_4bit and not plan.unsloth:
        base = prepare_model_for_kbit_training(
            base,
            use_gradient_checkpointing=plan.gradient_checkpointing,
            gradient_checkpointing_kwargs={"use_reentrant": False},
        )
    policy.model = PeftModel.from_pretrained(base, model_dir, is_trainable=True)
    policy.model.peft_config["default"].base_model_name_or_path = policy.base_path
    return policy


def _enable_checkpointing(model: Any, plan: Plan) -> None:
    """Recompute activations in the backward pass (non-reentrant checkpoints: they need no input that requires grad,
    but peft's input hook keeps the reentrant kind working too)."""
    if not plan.gradient_checkpointing:
        return
    enable = getattr(model, "activation_checkpointing_enable", None)  # transformers 5's name for it
    if enable is not None:
        enable(activation_checkpointing_kwargs={"use_reentrant": False})
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if is_lora(model):
        model.enable_input_require_grads()


# ----------------------------------------------------------------------------------------------- during the run


def is_lora(model: Any) -> bool:
    """Whether `model` is a peft model (a LoRA adapter on a frozen base)."""
    from peft import PeftModel

    return isinstance(model, PeftModel)


def trainable_parameters(model: Any) -> list[torch.nn.Parameter]:
    """What the optimiser updates: the adapter's weights with LoRA, every weight otherwise."""
    return [p for p in model.parameters() if p.requires_grad]


def frozen_reference(model: Any, dtype: torch.dtype | None = None) -> Any:
    """A frozen copy of the policy as it is now (after SFT): the KL anchor when beta > 0, stored in `dtype` when given
    (the compute dtype of bf16 full fine-tuning: it is never updated, so it needs no float32 master). With LoRA no copy
    (None): the reference is the policy with its adapters disabled (`reference_mode`), whose base holds the SFT
    weights."""
    if is_lora(model):
        return None
    reference = copy.deepcopy(model).eval()
    if dtype is not None:
        reference.to(dtype)
    for parameter in reference.parameters():
        parameter.requires_grad_(False)
    return reference


@contextmanager
def reference_mode(model: Any) -> Iterator[None]:
    """The KL reference with LoRA: the policy with its adapters disabled, in eval mode, without gradients."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad(), model.disable_adapter():
            yield
    finally:
        model.train(was_training)


@contextmanager
def training_the_base(model: Any) -> Iterator[list[torch.nn.Parameter]]:
    """A LoRA policy's base weights made trainable, the adapter switched off, for the duration (the embedded model's
    SFT warm start, which is its pretraining); yields those weights for an optimiser. Frozen again afterwards."""
    frozen = [p for p in model.parameters() if not p.requires_grad]
    for parameter in frozen:
        parameter.requires_grad_(True)
    try:
        with model.disable_adapter():
            yield frozen
    finally:
        for parameter in frozen:
            parameter.requires_grad_(False)


def fold_adapter(model: Any, seed: int) -> None:
    """Merge the adapter into the base weights and restart it from B = 0 (a seeded A): the policy is unchanged, and
    its adapters-disabled reference becomes this policy. Called after an SFT warm start. On a 4-bit base the merge
    re-quantises, so the reference is the SFT policy up to 4-bit rounding."""
    if not is_lora(model):
        return
    from peft.tuners.lora import LoraLayer

    model.merge_adapter()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed + 1)
        for module in model.modules():
            if isinstance(module, LoraLayer):
                module.merged_adapters.clear()  # the merged weights are now simply the base
                for name in module.lora_A:
                    module.reset_lora_parameters(name, True)


def save_base(model: Any, tokenizer: Any, folder: Path) -> None:
    """Write a LoRA policy's base weights (without the adapter) as a plain Hugging Face model folder."""
    base = model.get_base_model()
    prefix = model.base_model.prefix  # "lora_"
    weights = {
        name.replace(".base_layer.", "."): tensor for name, tensor in base.state_dict().items() if prefix not in name
    }
    base.save_pretrained(folder, state_dict=weights)
    tokenizer.save_pretrained(folder)


def merged_weights(model: Any) -> Iterator[tuple[str, torch.Tensor]]:
    """A LoRA policy's weights as one plain model: (name, tensor) under the base model's parameter names, each adapted
    weight a new tensor W + delta. Nothing is changed in place, unlike peft's merge_adapter/unmerge_adapter round trip,
    which in bf16 moves the base weights (the KL reference) by a rounding step each time. For an inference engine's
    weight sync or a merged export; not for a 4-bit base (its packed weights cannot take a delta)."""
    from peft.tuners.lora import LoraLayer

    if getattr(model, "is_loaded_in_4bit", False):
        raise PolicyError("a 4-bit (QLoRA) base cannot be merged with its adapter weight by weight; export the adapter")
    base = model.get_base_model()
    deltas: dict[str, torch.Tensor] = {}
    for name, module in base.named_modules():
        if isinstance(module, LoraLayer) and not module.merged and not module.disable_adapters:
            layer: Any = module  # every LoRA layer kind has get_delta_weight; the base class does not declare it
            for adapter in (a for a in layer.active_adapters if a in layer.lora_A):
                delta = layer.get_delta_weight(adapter)
                key = f"{name}.base_layer.weight"
                deltas[key] = deltas[key] + delta if key in deltas else delta
    prefix = model.base_model.prefix
    with torch.no_grad():
        for name, parameter in base.named_parameters():
            if prefix in name:
                continue
            weight = parameter.detach()
            if name in deltas:
                weight = weight + deltas[name].to(weight.dtype)
            yield name.replace(".base_layer.", "."), weight


def base_needs_saving(policy: Policy) -> bool:
    """A LoRA checkpoint carries its base in base_model/ unless the base is an unchanged folder it can name: the
    embedded model is built from a seed, and an SFT warm start changes the base weights."""
    return is_lora(policy.model) and policy.base_path is None
