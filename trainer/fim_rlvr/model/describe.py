"""The run's start line: what is trained and how ("LoRA r=16 alpha=32 on q_proj,… (1.2% of 494M parameters
trainable), bf16, gradient checkpointing, …")."""

from __future__ import annotations

from typing import Any

import torch

from .adapters import Plan, is_lora


def _count(n: float) -> str:
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return str(int(n))


def parameter_counts(model: Any) -> tuple[int, int]:
    """(trainable, total) parameters, 4-bit weights counted as their unpacked size, tied weights once."""
    if is_lora(model):
        trainable, total = model.get_nb_trainable_parameters()
        return int(trainable), int(total)
    return sum(p.numel() for p in model.parameters() if p.requires_grad), sum(p.numel() for p in model.parameters())


def training(model: Any, plan: Plan) -> str:
    """What is trained and how: "LoRA r=16 alpha=32 on q_proj,… (1.2% of 494M parameters trainable), bf16, …"."""
    trainable, total = parameter_counts(model)
    if is_lora(model):
        config = model.peft_config["default"]
        targets = config.target_modules
        names = ",".join(sorted(targets)) if isinstance(targets, (set, list, tuple)) else str(targets)
        kind = "QLoRA (4-bit NF4 base)" if plan.load_in_4bit else "LoRA"
        share = 100 * trainable / total if total else 0.0
        share_text = f"{share:.2g}%" if share < 1 else f"{share:.1f}%"
        what = (
            f"{kind} r={config.r} alpha={config.lora_alpha} on {names} "
            f"({share_text} of {_count(total)} parameters trainable)"
        )
    else:
        what = f"full fine-tuning ({_count(trainable)} of {_count(total)} parameters trainable)"
    if plan.compute_dtype == torch.bfloat16:
        precision = "bf16 compute over float32 master weights (autocast; AdamW updates the float32 weights)"
    elif plan.dtype == torch.bfloat16:
        precision = "bf16 base, float32 adapters" if is_lora(model) else "bf16"
    else:
        precision = "float32"
    if torch.bfloat16 in (plan.dtype, plan.compute_dtype) and next(model.parameters()).device.type == "cpu":
        precision += " (on CPU: slower than float32 there)"
    parts = [what, precision]
    if plan.gradient_checkpointing:
        parts.append("gradient checkpointing")
    if plan.unsloth:
        parts.append("Unsloth")
    if is_lora(model):
        parts.append("KL reference: the policy with adapters disabled (no second copy)")
    return ", ".join(parts)
