"""Mixed precision as large-model training does it: float32 master weights, bfloat16 compute.

Full fine-tuning in bf16 keeps every trained weight in float32 and runs the forward passes (sampling, old and new
log-probs, SFT) under `torch.autocast` in bfloat16: the optimiser's updates land on float32 weights, where an update of
a learning rate's size (1e-6 of a weight) is not rounded away, as it is on bfloat16 weights (8 bits of mantissa: a step
below 1/256 of the weight is lost). Adam's moments and the gradients are float32 too, so memory is 16 bytes per
trained parameter (4 weights, 4 gradient, 8 moments), the activations half that of float32.

LoRA trains only its adapters, which peft keeps in float32, over a frozen base stored in the plan's dtype (bfloat16):
nothing there needs a master copy, so its forward passes run as peft casts them, without autocast. The frozen KL
reference of full fine-tuning is stored in the compute dtype: it is never updated.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

import torch


def compute(dtype: torch.dtype | None, model: Any) -> AbstractContextManager[Any]:
    """The context forward passes of `model` run in: autocast to `dtype` on the model's device, or nothing (None)."""
    if dtype is None:
        return nullcontext()
    device = next(model.parameters()).device
    return torch.autocast(device_type=device.type, dtype=dtype)
