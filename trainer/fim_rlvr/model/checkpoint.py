"""Atomic checkpoints: RUN_DIR/checkpoints/step-<N>/ plus a `latest` file naming the newest complete one.

A checkpoint is written into a temporary folder, every file fsynced, then renamed into place (one atomic
rename), and only then is `latest` replaced (write-temp + fsync + rename). A process killed at any moment leaves
either the previous `latest` or the new one, never a half-written checkpoint under a `step-<N>` name; leftover
temporary folders are ignored and swept by the next save.

Contents of step-<N>/:
- model/: the policy, with its tokenizer. Either a full Hugging Face model folder (config.json + weights), when
  every weight is trained, or a peft adapter folder (adapter_config.json + adapter_model.safetensors), when a LoRA
  adapter is trained. The adapter's base model is then base_model/ when that folder exists, else the folder named
  by `base_model_name_or_path` in adapter_config.json.
- base_model/ (LoRA only, when the base exists nowhere else unchanged: the embedded model, which is built from a
  seed, or a base an SFT warm start changed): the base weights without the adapter, a plain Hugging Face model
  folder (config.json + weights + tokenizer). A LoRA run on an unchanged model path writes no base_model/; its
  adapter_config.json names that path (absolute), and state.json's `base_model` repeats it.
- ref_model/: a full copy of the KL reference, when every weight is trained and the algorithm uses a reference.
  With LoRA the reference is the base (the policy with its adapters disabled), so there is no ref_model/.
- optimizer.pt (the optimiser's state over the trainable parameters), rng.pt (python, numpy, torch, CUDA),
  pending.pt (rollouts generated for the next step, which the overlap had already sampled), state.json (step,
  sampler position, curriculum, metrics/samples line counts, `lora`, `base_model`).

`fim-rlvr export-model` and `--resume` both read this layout; keep it.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch

KEEP = 3
"""The newest complete checkpoints kept, besides step-0; older ones are deleted once a newer one is in place."""

_TMP_PREFIX = ".tmp-"


def checkpoints_dir(run_dir: str | Path) -> Path:
    return Path(run_dir) / "checkpoints"


def _fsync_tree(folder: Path) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())
    for path in [folder, *sorted(p for p in folder.rglob("*") if p.is_dir())]:
        _fsync_dir(path)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_text_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` atomically (temp file in the same folder, fsync, rename)."""
    tmp = path.with_name(f"{_TMP_PREFIX}{path.name}.{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def rng_state() -> dict[str, Any]:
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _is_peft(model: Any) -> bool:
    from .adapters import is_lora

    return is_lora(model)


def save(
    run_dir: str | Path,
    step: int,
    *,
    model: Any,
    tokenizer: Any,
    optimizer: torch.optim.Optimizer | None,
    state: dict[str, Any],
    pending: Any = None,
    ref_model: Any = None,
    save_base_model: bool = False,
    before_rename: Callable[[Path], None] | None = None,
) -> Path:
    """Write checkpoint `step` atomically and point `latest` at it; returns its folder.

    `save_base_model`: `model` is a LoRA (peft) model whose base must be written to base_model/ (see the layout
    above). `before_rename` is a test hook called with the complete temporary folder just before it is renamed."""
    root = checkpoints_dir(run_dir)
    root.mkdir(parents=True, exist_ok=True)
    _sweep_temporaries(root)
    tmp = root / f"{_TMP_PREFIX}step-{step}-{os.getpid()}"
    tmp.mkdir()
    # A LoRA model saves its adapter alone: the trainer never resizes the embeddings, and peft's default ("auto")
    # would ask the Hub at every checkpoint whether the base's vocabulary differs (a network request per save).
    model.save_pretrained(tmp / "model", **({"save_embedding_layers": False} if _is_peft(model) else {}))
    tokenizer.save_pretrained(tmp / "model")
    if save_base_model:
        from .adapters import save_base

        save_base(model, tokenizer, tmp / "base_model")
    if ref_model is not None:
        ref_model.save_pretrained(tmp / "ref_model")
    if optimizer is not None:
        torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
    torch.save(rng_state(), tmp / "rng.pt")
    torch.save(pending, tmp / "pending.pt")
    (tmp / "state.json").write_text(json.dumps({"step": step, **state}, indent=1), encoding="utf-8")
    _fsync_tree(tmp)
    if before_rename is not None:
        before_rename(tmp)
    final = root / f"step-{step}"
    if final.exists():
        # Re-saving a step (a resumed run stopped again at the same step): move the old one aside first, so the
        # name never points at a mix of the two.
        aside = root / f"{_TMP_PREFIX}old-step-{step}-{os.getpid()}"
        os.replace(final, aside)
        os.replace(tmp, final)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        os.replace(tmp, final)
    _fsync_dir(root)
    write_text_atomic(root / "latest", f"step-{step}\n")
    _prune(root, keep_name=final.name)
    return final


def _sweep_temporaries(root: Path) -> None:
    for path in root.glob(f"{_TMP_PREFIX}*"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _step_of(name: str) -> int | None:
    """The step of a checkpoint folder's name (`step-N`), else None (temporaries, strays, paths)."""
    match = re.fullmatch(r"step-(\d+)", name)
    return int(match.group(1)) if match else None


def kept_steps(steps: Iterable[int]) -> list[int]:
    """The retention rule: the KEEP newest checkpoints and step-0 (the policy after the SFT warm start, before any RL
    step: what an export or a comparison of SFT against RL needs), whatever else a run writes. The host follows it too
    (lean-bridge/train/checkpoints.ts; both run against test/fixtures/checkpoint-retention.json)."""
    ordered = sorted(set(steps))
    return sorted(set(ordered[-KEEP:]) | ({0} & set(ordered)))


def _prune(root: Path, keep_name: str) -> None:
    steps = {s: p for p in root.iterdir() if p.is_dir() and (s := _step_of(p.name)) is not None}
    kept = set(kept_steps(steps))
    for step, path in steps.items():
        if step not in kept and path.name != keep_name:
            shutil.rmtree(path, ignore_errors=True)


def latest(run_dir: str | Path) -> Path | None:
    """The newest complete checkpoint: the step-<N> folder `latest` names when it is complete (holds state.json),
    else the complete step-<N> folder with the highest N, else None. The host and the editor follow the same rule
    (lean-bridge/train/checkpoints.ts; both run against test/fixtures/latest-checkpoint.json)."""
    root = checkpoints_dir(run_dir)
    pointer = root / "latest"
    if pointer.is_file():
        name = pointer.read_text(encoding="utf-8").strip()
        if _step_of(name) is not None and (root / name / "state.json").is_file():
            return root / name
    if not root.is_dir():
        return None
    complete = sorted(
        (s, p)
        for p in root.iterdir()
        if p.is_dir() and (s := _step_of(p.name)) is not None and (p / "state.json").is_file()
    )
    return complete[-1][1] if complete else None


def load_state(folder: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    return state


def load_tensors(folder: Path, name: str) -> Any:
    path = folder / name
    return torch.load(path, weights_only=False) if path.is_file() else None
