"""Sampling from the trainer's own models for the host's `hf:PATH` backend (lean-bridge/models/pythonBackend.ts).

`python -m fim_rlvr.generate_stdio` reads JSON lines on stdin and answers JSON lines on stdout, one request at a
time. The host builds the prompt (it must be the trainer's prompt, and prompts.ts is tested against prompts.py),
so this side only tokenizes it as the trainer does (add_special_tokens=False), samples, and decodes as rollouts
do (special tokens kept, the host's cleaning cuts at the stops).

- {"type": "load", "path": P, "threads": N}: P is a run folder (its latest checkpoint), a checkpoint folder
  (RUN_DIR/checkpoints/step-N: full or LoRA, merged as export-model merges it) or a transformers model folder.
  Answers {"type": "loaded", "engine": "vllm"|"transformers", "device": ..., "tokenizer_dir": ...} or
  {"type": "load-failed", "message": ..., "hint": ...}. vLLM serves when it is installed and a CUDA GPU is there
  (and the model is a whole one), so a GPU user evaluates with the engine training used; else transformers.
- {"type": "generate", "id": I, "prompt": S, "n": N, "temperature": T, "top_p": P, "max_new_tokens": M,
  "seed": S, "stop": [...]}: answers {"type": "result", "id": I, "prompt_tokens": K, "samples": [{"text",
  "completion_tokens", "finish": "stop"|"length"}]} or {"type": "failed", "id": I, "message": ...}.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from .export_model import ExportError, inspect_checkpoint, load_policy, resolve_checkpoint, tokenizer_dir


class Engine:
    """A loaded model that samples completions of a prompt text."""

    name = "transformers"

    def __init__(self, model: Any, tokenizer: Any, device: str) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.device = device

    def generate(self, request: dict[str, Any]) -> dict[str, Any]:
        import torch

        ids = self.tokenizer(request["prompt"], add_special_tokens=False, return_tensors="pt")["input_ids"]
        ids = ids.to(self.device)
        torch.manual_seed(int(request.get("seed", 0)))
        temperature = float(request["temperature"])
        sampling: dict[str, Any] = (
            {"do_sample": True, "temperature": temperature, "top_p": float(request["top_p"])}
            if temperature > 0
            else {"do_sample": False}
        )
        eos = self.tokenizer.eos_token_id
        with torch.no_grad():
            out = self.model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=int(request["max_new_tokens"]),
                # Greedy samples are all the same one: generate it once (transformers refuses n > 1 greedy).
                num_return_sequences=int(request["n"]) if temperature > 0 else 1,
                pad_token_id=self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos,
                eos_token_id=eos,
                top_k=None,
                **sampling,
            )
        samples = []
        rows = out[:, ids.shape[1] :].tolist()
        if len(rows) < int(request["n"]):
            rows = rows * int(request["n"])
        for row in rows:
            finish = "length"
            if eos is not None and eos in row:
                row = row[: row.index(eos)]
                finish = "stop"
            samples.append(
                {
                    "text": self.tokenizer.decode(row, skip_special_tokens=False),
                    "completion_tokens": len(row),
                    "finish": finish,
                }
            )
        return {"prompt_tokens": int(ids.shape[1]), "samples": samples}


class VllmEngine:
    """vLLM's offline engine, as rollouts use it (vllm_backend.py)."""

    name = "vllm"
    device = "cuda"

    def __init__(self, path: Path, tokenizer: Any) -> None:
        from vllm import LLM

        self.tokenizer = tokenizer
        self.llm = LLM(model=str(path), tokenizer=str(path), enable_prefix_caching=True)

    def generate(self, request: dict[str, Any]) -> dict[str, Any]:
        from vllm import SamplingParams, TokensPrompt

        ids = self.tokenizer(request["prompt"], add_special_tokens=False)["input_ids"]
        params = SamplingParams(
            n=int(request["n"]),
            temperature=float(request["temperature"]),
            top_p=float(request["top_p"]),
            max_tokens=int(request["max_new_tokens"]),
            seed=int(request.get("seed", 0)),
            skip_special_tokens=False,
        )
        out = self.llm.generate([TokensPrompt(prompt_token_ids=ids)], params, use_tqdm=False)[0]
        samples = [
            {
                "text": c.text,
                "completion_tokens": len(c.token_ids),
                "finish": "length" if c.finish_reason == "length" else "stop",
            }
            for c in out.outputs
        ]
        return {"prompt_tokens": len(ids), "samples": samples}


def _vllm_usable() -> bool:
    if importlib.util.find_spec("vllm") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def load(path: Path, threads: int) -> tuple[Any, Path]:
    """The engine for `path` and the folder of its tokenizer; ExportError when `path` holds no model."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(max(1, threads))
    if (path / "checkpoints").is_dir():
        path = resolve_checkpoint(path, "latest")
    if (path / "state.json").is_file():
        ckpt = inspect_checkpoint(path)
        tokenizer_folder = tokenizer_dir(ckpt)
        if ckpt.kind == "full" and _vllm_usable():
            return VllmEngine(ckpt.model_dir, AutoTokenizer.from_pretrained(tokenizer_folder)), tokenizer_folder
        model, tokenizer = load_policy(ckpt)
    elif (path / "config.json").is_file():
        tokenizer_folder = path
        tokenizer = AutoTokenizer.from_pretrained(path)
        if _vllm_usable():
            return VllmEngine(path, tokenizer), tokenizer_folder
        model = AutoModelForCausalLM.from_pretrained(path, dtype="auto")
        model.eval()
    else:
        raise ExportError(
            f"{path} holds no model (no checkpoints/, state.json or config.json)",
            "Pass a run folder, one of its checkpoints/step-N folders, or a transformers model folder.",
        )
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return Engine(model.to(device), tokenizer, device), tokenizer_folder


def _answer(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    engine: Any = None
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("type") == "load":
            try:
                engine, folder = load(Path(request["path"]), int(request.get("threads", 1)))
            except ExportError as error:
                _answer({"type": "load-failed", "message": error.message, "hint": error.hint})
                continue
            except (OSError, ValueError) as error:
                _answer(
                    {
                        "type": "load-failed",
                        "message": f"{request['path']}: {error}",
                        "hint": "Check the folder is a complete model or checkpoint.",
                    }
                )
                continue
            _answer({"type": "loaded", "engine": engine.name, "device": engine.device, "tokenizer_dir": str(folder)})
        elif request.get("type") == "generate":
            if engine is None:
                _answer({"type": "failed", "id": request.get("id"), "message": "no model is loaded"})
                continue
            try:
                _answer({"type": "result", "id": request["id"], **engine.generate(request)})
            except (RuntimeError, ValueError) as error:  # out of memory, a prompt longer than the model takes
                _answer({"type": "failed", "id": request["id"], "message": str(error).split("\n")[0][:300]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
