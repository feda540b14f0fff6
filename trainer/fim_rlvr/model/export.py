"""Exports from a training run's checkpoint (`fim-rlvr export-model RUN_DIR --format adapter|merged|onnx`).

A checkpoint's model/ (see checkpoint.py) is either a full Hugging Face model folder (config.json + weights +
tokenizer) or a peft LoRA adapter folder (adapter_config.json + adapter_model.safetensors + tokenizer) whose base
model is the checkpoint's base_model/ folder, or the local folder that adapter_config.json's
`base_model_name_or_path` names (nothing is downloaded). Three exports:

- adapter: the adapter folder as trained (with the tokenizer); a full fine-tuning checkpoint has none.
- merged: a transformers folder (safetensors, tokenizer, generation config), LoRA merged with merge_and_unload.
- onnx: the merged model in fp32 as transformers.js loads a decoder (see onnx_export.py).

The output is built in a temporary folder beside its destination and renamed into place, so an interrupted export
leaves nothing under the destination's name. `python -m fim_rlvr.model.export` prints progress on stderr and
one JSON line on stdout: `{"kind": "ok", ...}` or `{"kind": "error", "message", "hint"}`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import shutil
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from ..core.errors import ExportError
from . import checkpoint

Format = Literal["adapter", "merged", "onnx"]
FORMATS: tuple[Format, ...] = ("adapter", "merged", "onnx")
_TMP_PREFIX = ".tmp-"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class CheckpointModel:
    """Where a checkpoint's policy lives."""

    folder: Path
    """The checkpoint folder (RUN_DIR/checkpoints/step-<N>)."""
    step: int
    kind: Literal["full", "lora"]
    """`full`: model/ is a whole model; `lora`: model/ is a peft adapter over `base`."""
    model_dir: Path
    base_dir: Path | None
    """The base model folder of a LoRA checkpoint; None for a full one."""


@dataclass(frozen=True)
class ExportResult:
    kind: Literal["ok"]
    format: Format
    path: str
    size_bytes: int
    files: list[str]
    checkpoint: str
    step: int
    checkpoint_kind: Literal["full", "lora"]
    check: str | None
    """What was checked after writing (ONNX: onnxruntime against PyTorch), or None."""
    base_model: str | None
    """A LoRA checkpoint's base model folder (an adapter export needs it to be loaded), or None."""


# --------------------------------------------------------------------------------------------- the checkpoint


def resolve_checkpoint(run_dir: Path, which: str) -> Path:
    """`latest` (the newest complete checkpoint), `N` or `step-N`; raises ExportError naming what exists."""
    if not run_dir.is_dir():
        raise ExportError(f"{run_dir} is not a folder", "Pass the run folder that `fim-rlvr train` printed.")
    root = checkpoint.checkpoints_dir(run_dir)
    if not root.is_dir():
        raise ExportError(
            f"{run_dir} is not a training run folder (it has no checkpoints/ folder)",
            "Pass the run folder that `fim-rlvr train` printed (it holds metrics.jsonl and checkpoints/).",
        )
    steps = sorted(
        int(p.name[len("step-") :])
        for p in root.iterdir()
        if p.is_dir()
        and p.name.startswith("step-")
        and p.name[len("step-") :].isdigit()
        and (p / "state.json").is_file()
    )
    if which == "latest":
        found = checkpoint.latest(run_dir)
        if found is None:
            raise ExportError(
                f"{run_dir} has no complete checkpoint yet",
                "Let the run reach its first checkpoint (checkpoint_every steps), or resume it with --resume.",
            )
        return found
    name = which if which.startswith("step-") else f"step-{which}"
    folder = root / name
    if not (folder / "state.json").is_file():
        available = ", ".join(str(s) for s in steps) or "none"
        raise ExportError(
            f"{run_dir} has no complete checkpoint {name} (available steps: {available})",
            "Pass --checkpoint with one of the available steps, or latest.",
        )
    return folder


def inspect_checkpoint(folder: Path, base_model: Path | None = None) -> CheckpointModel:
    """Reads what kind of model a checkpoint holds and where its base model is."""
    step = int(checkpoint.load_state(folder).get("step", folder.name[len("step-") :]))
    model_dir = folder / "model"
    if (model_dir / "adapter_config.json").is_file():
        return CheckpointModel(folder, step, "lora", model_dir, _base_of(folder, model_dir, base_model))
    if (model_dir / "config.json").is_file():
        return CheckpointModel(folder, step, "full", model_dir, None)
    raise ExportError(
        f"checkpoint {folder} has no model: {model_dir} holds neither config.json nor adapter_config.json",
        "The checkpoint is damaged; export an earlier one with --checkpoint STEP.",
    )


def _base_of(folder: Path, model_dir: Path, given: Path | None) -> Path:
    if given is not None:
        if not (given / "config.json").is_file():
            raise ExportError(
                f"--base-model {given} is not a Hugging Face model folder (no config.json)",
                "Pass the folder of the model the run started from.",
            )
        return given
    if (folder / "base_model" / "config.json").is_file():
        return folder / "base_model"
    config = json.loads((model_dir / "adapter_config.json").read_text(encoding="utf-8"))
    named = config.get("base_model_name_or_path")
    if named and (Path(named) / "config.json").is_file():
        return Path(named)
    raise ExportError(
        f"the LoRA checkpoint {folder} names its base model as {named!r}, which is not a local model folder "
        "(nothing is downloaded)",
        "Pass the folder of the model the run started from with --base-model DIR.",
    )


def _require(modules: dict[str, str], purpose: str) -> None:
    """Raises ExportError with the exact pip command when an optional dependency is missing."""
    missing = [pip for module, pip in modules.items() if importlib.util.find_spec(module) is None]
    if missing:
        quoted = " ".join(f"'{m}'" for m in missing)
        raise ExportError(
            f"{purpose} needs {', '.join(missing)}, which {sys.executable} lacks",
            f"Install with: {sys.executable} -m pip install {quoted}",
        )


TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    "tokenizer.model",
    "chat_template.jinja",
    "chat_template.json",
)


def tokenizer_dir(ckpt: CheckpointModel) -> Path:
    """The checkpoint saves its tokenizer beside the model; an adapter folder without one takes the base's."""
    if (ckpt.model_dir / "tokenizer_config.json").is_file() or ckpt.base_dir is None:
        return ckpt.model_dir
    return ckpt.base_dir


def copy_tokenizer(ckpt: CheckpointModel, tokenizer: Any, into: Path) -> None:
    """The checkpoint's tokenizer files, byte for byte. Re-saving through AutoTokenizer would let transformers
    re-derive parts of them from the model type (transformers 5 gives a qwen2 model's tokenizer Qwen2's
    pre-tokenizer, whatever tokenizer.json says), and an export must tokenize as the checkpoint does. A tokenizer
    stored without tokenizer.json gets one written from its fast form."""
    source = tokenizer_dir(ckpt)
    into.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        if (source / name).is_file():
            shutil.copy2(source / name, into / name)
    if not (into / "tokenizer.json").is_file() and getattr(tokenizer, "is_fast", False):
        tokenizer.save_pretrained(into)


def load_policy(ckpt: CheckpointModel, dtype: Any = None) -> tuple[Any, Any]:
    """The checkpoint's policy as one plain transformers model (LoRA merged in) and its tokenizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dtype = dtype if dtype is not None else "auto"
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir(ckpt))
    if ckpt.kind == "full":
        model = AutoModelForCausalLM.from_pretrained(ckpt.model_dir, dtype=dtype)
    else:
        assert ckpt.base_dir is not None  # A LoRA checkpoint always has one (inspect_checkpoint).
        _require({"peft": "peft>=0.13"}, "a LoRA checkpoint")
        from peft import PeftModel

        base = AutoModelForCausalLM.from_pretrained(ckpt.base_dir, dtype=dtype)
        model = PeftModel.from_pretrained(base, ckpt.model_dir).merge_and_unload()
    model.eval()
    model.requires_grad_(False)
    return model, tokenizer


# ------------------------------------------------------------------------------------------------ the formats


def _write_adapter(ckpt: CheckpointModel, into: Path, say: Progress) -> str | None:
    if ckpt.kind != "lora":
        raise ExportError(
            f"checkpoint step-{ckpt.step} is from a full fine-tuning run: it has no LoRA adapter to export",
            "Export the whole model with --format merged (or --format onnx); train with --lora-r to get adapters.",
        )
    say(f"copying the adapter of step-{ckpt.step}")
    shutil.copytree(ckpt.model_dir, into)
    return None


def _write_merged(ckpt: CheckpointModel, into: Path, say: Progress) -> str | None:
    say(f"loading step-{ckpt.step}" + (f" (LoRA over {ckpt.base_dir}, merging)" if ckpt.kind == "lora" else ""))
    model, tokenizer = load_policy(ckpt)
    say("writing the merged model (safetensors)")
    model.save_pretrained(into, safe_serialization=True)
    copy_tokenizer(ckpt, tokenizer, into)
    return None


def _write_onnx(ckpt: CheckpointModel, into: Path, say: Progress) -> str | None:
    _require({"onnx": "onnx>=1.16", "onnxscript": "onnxscript>=0.1"}, "ONNX export")
    import torch

    from . import onnx_export

    say(f"loading step-{ckpt.step}" + (f" (LoRA over {ckpt.base_dir}, merging)" if ckpt.kind == "lora" else ""))
    model, tokenizer = load_policy(ckpt, dtype=torch.float32)
    if not (tokenizer_dir(ckpt) / "tokenizer.json").is_file() and not getattr(tokenizer, "is_fast", False):
        raise ExportError(
            f"the checkpoint's tokenizer ({type(tokenizer).__name__}) has no tokenizer.json and no fast form to write "
            "one from, and transformers.js reads only tokenizer.json",
            "Train from a model whose tokenizer ships tokenizer.json (a `tokenizers` tokenizer).",
        )
    check = onnx_export.export_onnx(model, into, say)
    copy_tokenizer(ckpt, tokenizer, into)
    return check


_WRITERS: dict[Format, Callable[[CheckpointModel, Path, Progress], str | None]] = {
    "adapter": _write_adapter,
    "merged": _write_merged,
    "onnx": _write_onnx,
}


# --------------------------------------------------------------------------------------------- atomic output


def _fsync_tree(folder: Path) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())
    for path in [folder, *sorted(p for p in folder.rglob("*") if p.is_dir())]:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def _atomic_folder(out: Path, force: bool) -> Iterator[Path]:
    """Yields a temporary folder path beside `out` (not yet created); renames it to `out` when the block ends
    without an error, replacing an existing `out` only with `force`, and removes it otherwise."""
    tmp = out.parent / f"{_TMP_PREFIX}{out.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        yield tmp
        _fsync_tree(tmp)
        if out.exists() or out.is_symlink():
            if not force:  # It appeared while we were exporting.
                raise ExportError(f"{out} already exists", "Pass --force to replace it, or --out DIR.")
            aside = out.parent / f"{_TMP_PREFIX}old-{out.name}-{os.getpid()}"
            os.replace(out, aside)
            os.replace(tmp, out)
            if aside.is_dir() and not aside.is_symlink():
                shutil.rmtree(aside, ignore_errors=True)
            else:
                aside.unlink(missing_ok=True)
        else:
            os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def default_out(run_dir: Path, step: int, fmt: Format) -> Path:
    return run_dir / "exports" / f"step-{step}-{fmt}"


def export(
    run_dir: Path,
    fmt: Format,
    *,
    out: Path | None = None,
    which: str = "latest",
    force: bool = False,
    base_model: Path | None = None,
    say: Progress = lambda line: None,
) -> ExportResult:
    """Writes the export; raises ExportError for anything the user can fix."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}", f"Choose one of: {', '.join(FORMATS)}.")
    ckpt = inspect_checkpoint(resolve_checkpoint(run_dir, which), base_model)
    target = (out if out is not None else default_out(run_dir, ckpt.step, fmt)).absolute()
    if (target.exists() or target.is_symlink()) and not force:
        raise ExportError(f"{target} already exists", "Pass --force to replace it, or choose another --out DIR.")
    if fmt == "adapter" and ckpt.kind != "lora":
        _write_adapter(ckpt, target, say)  # Raises the "no adapter" error before anything is written.
    target.parent.mkdir(parents=True, exist_ok=True)
    with _atomic_folder(target, force) as tmp:
        check = _WRITERS[fmt](ckpt, tmp, say)
    files = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    size = sum((target / f).stat().st_size for f in files)
    base = str(ckpt.base_dir.absolute()) if ckpt.base_dir is not None else None
    return ExportResult("ok", fmt, str(target), size, files, str(ckpt.folder), ckpt.step, ckpt.kind, check, base)


# ----------------------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fim_rlvr.model.export", description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--format", required=True, choices=FORMATS)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--checkpoint", default="latest")
    parser.add_argument("--base-model", type=Path)
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args(argv)
    # Local folders only (a checkpoint never needs the hub), and no download bars or deprecation notices in the
    # progress lines.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    warnings.filterwarnings("ignore", category=FutureWarning)

    def say(line: str) -> None:
        print(f"export-model: {line}", file=sys.stderr, flush=True)

    try:
        # Libraries print to stdout (torch.onnx's step log); stdout carries only our JSON answer.
        with contextlib.redirect_stdout(sys.stderr):
            result = export(
                args.run_dir,
                args.format,
                out=args.out,
                which=args.checkpoint,
                force=args.force,
                base_model=args.base_model,
                say=say,
            )
    except ExportError as error:
        print(json.dumps({"kind": "error", "message": error.message, "hint": error.hint}), flush=True)
        return 1
    except KeyboardInterrupt:  # The temporary folder is already gone (_atomic_folder's finally).
        print("export-model: interrupted; nothing was written", file=sys.stderr, flush=True)
        return 130
    print(json.dumps(asdict(result)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
