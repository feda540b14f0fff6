"""The policy: model + tokenizer + device + prompt style, built fresh, loaded from a path, or from a checkpoint."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..core.errors import UserError
from ..tasks.data import Task, lean_texts
from ..tasks.prompts import PromptStyle, detect_style
from . import tiny_model


class PolicyError(UserError, ValueError):
    """The model cannot be used; the message says what to do."""


@dataclass
class Policy:
    model: Any
    tokenizer: Any
    device: torch.device
    device_label: str
    style: PromptStyle
    embedded: bool
    compute_dtype: torch.dtype | None = None
    """The dtype forward passes autocast to over float32 master weights (bf16 full fine-tuning; model/precision.py),
    or None: the weights' own."""
    base_path: str | None = None
    """With LoRA: the unchanged Hugging Face folder the base weights come from (a checkpoint names it instead of
    copying the base); None when the base exists only in memory (the embedded model, or a base an SFT warm start
    changed)."""

    def stop_token_ids(self) -> list[int]:
        """Token ids that end a completion: eos and the style's stop tokens that are single tokens."""
        ids: list[int] = []
        if self.tokenizer.eos_token_id is not None:
            ids.append(int(self.tokenizer.eos_token_id))
        model_eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        # An instruct model's generation config lists every end of turn (Qwen: <|im_end|> and <|endoftext|>).
        ids.extend(int(i) for i in (model_eos if isinstance(model_eos, list) else [model_eos]) if i is not None)
        vocab = self.tokenizer.get_vocab()
        for stop in self.style.stop_strings:
            if stop in vocab:
                ids.append(int(vocab[stop]))
        return list(dict.fromkeys(ids))


def pick_device(requested: str, model_given: bool) -> torch.device:
    """auto: CUDA when present and a model path is given (the embedded model is faster and exactly
    reproducible on CPU), else CPU."""
    if requested == "auto":
        return torch.device("cuda:0" if model_given and torch.cuda.is_available() else "cpu")
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise PolicyError(f"device {requested!r} was asked for but no CUDA GPU is visible; use device 'auto' or 'cpu'")
    try:
        return torch.device(requested)
    except RuntimeError as error:
        raise PolicyError(f"unknown device {requested!r}: use auto, cpu, cuda or cuda:N") from error


def device_label(device: torch.device) -> str:
    if device.type == "cuda":
        index = device.index or 0
        return f"cuda:{index} ({torch.cuda.get_device_name(index)})"
    return str(device)


def finish(model: Any, tokenizer: Any, device: torch.device, embedded: bool) -> Policy:
    """A Policy around a loaded model: padding set up for generation, on `device`, in train mode."""
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    if not getattr(model, "is_loaded_in_4bit", False):  # bitsandbytes placed it at load time and cannot move it
        model.to(device)
    model.train()
    return Policy(model, tokenizer, device, device_label(device), detect_style(tokenizer), embedded)


def build_embedded(
    dataset_dir: str | Path,
    tasks: Sequence[Task],
    seed: int,
    device: torch.device,
    width: int = tiny_model.HIDDEN,
    layers: int = tiny_model.LAYERS,
) -> Policy:
    """The embedded tiny model: tokenizer trained on the workspace's Lean text, seeded Llama weights of the given
    width and depth."""
    tokenizer = tiny_model.train_tokenizer(lean_texts(dataset_dir, tasks))
    model = tiny_model.build_model(tokenizer, seed, width=width, layers=layers)
    return finish(model, tokenizer, device, embedded=True)


def load_pretrained(
    path: str | Path,
    device: torch.device,
    embedded: bool = False,
    dtype: torch.dtype | None = None,
    quantization: Any = None,
) -> Policy:
    """A Hugging Face causal LM directory (a model path or a checkpoint's model/ or base_model/) in `dtype` (None:
    bf16 on GPUs that support it, else float32), quantised at load time when `quantization` (a transformers
    quantization config, e.g. bitsandbytes NF4) is given."""
    folder = Path(path)
    if not (folder / "config.json").is_file():
        raise PolicyError(
            f"model path {folder} is not a Hugging Face model directory (no config.json): pass a folder written by "
            "save_pretrained, or leave `model` unset for the embedded tiny model"
        )
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if dtype is None:
        dtype = torch.bfloat16 if device.type == "cuda" and torch.cuda.is_bf16_supported() else torch.float32
    placement: dict[str, Any] = {}
    if quantization is not None:
        gpu = device.index if device.index is not None else 0  # bitsandbytes places the weights as it loads them
        placement = {"quantization_config": quantization, "device_map": {"": gpu}}
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, **placement)
    except (OSError, ValueError) as error:
        raise PolicyError(f"could not load the model at {folder}: {error}") from error
    return finish(model, tokenizer, device, embedded=embedded)


def load_reference(folder: str | Path, like: Policy) -> Any:
    """A frozen copy of a saved model (a checkpoint's ref_model/), on the policy's device, in its compute dtype (or its
    weights' dtype)."""
    from transformers import AutoModelForCausalLM

    dtype = like.compute_dtype or next(like.model.parameters()).dtype
    model: Any = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype)
    model.to(like.device)
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model
