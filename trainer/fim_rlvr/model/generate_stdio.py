"""Sampling from the trainer's own models for the host's `hf:PATH` backend (lean-bridge/models/pythonBackend.ts).

`python -m fim_rlvr.model.generate_stdio` reads JSON lines on stdin and answers JSON lines on stdout, one request at a
time. Every line is declared in lean-bridge/protocol/trainer.schema.json (`x-modelMessages`) and mirrored in
fim_rlvr.core.protocol (ModelLoadRequest, ModelGenerateRequest and their answers). The host builds the prompt (it must
be the trainer's prompt, and prompts.ts is tested against prompts.py), so this side only tokenizes it as the
trainer does (add_special_tokens=False), samples, and decodes as rollouts do (special tokens kept, the host's
cleaning cuts at the stops).

- `load` (ModelLoadRequest): a run folder (its latest checkpoint), a checkpoint folder (RUN_DIR/checkpoints/step-N:
  full or LoRA, merged as export-model merges it) or a transformers model folder. Answers ModelLoaded or
  ModelLoadFailed. vLLM serves when it is installed and a CUDA GPU is there (and the model is a whole one), so a GPU
  user evaluates with the engine training used; else transformers.
- `generate` (ModelGenerateRequest): answers ModelGenerateResult or ModelGenerateFailed with the request's id.
A line that is not a request gets a ModelGenerateFailed saying why (id "" when it had none); nothing crashes.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, Literal

from ..core.protocol import (
    MODEL_GENERATE,
    MODEL_LOAD,
    ModelAnswer,
    ModelGenerateFailed,
    ModelGenerateRequest,
    ModelLoaded,
    ModelLoadFailed,
    ModelSample,
)
from .export import ExportError, inspect_checkpoint, load_policy, resolve_checkpoint, tokenizer_dir

Generated = tuple[int, list[ModelSample]]
"""The prompt's length in tokens and the samples."""


class Engine:
    """A loaded model that samples completions of a prompt text."""

    name = "transformers"

    def __init__(self, model: Any, tokenizer: Any, device: str) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.device = device

    def generate(self, request: ModelGenerateRequest) -> Generated:
        import torch

        ids = self.tokenizer(request["prompt"], add_special_tokens=False, return_tensors="pt")["input_ids"]
        ids = ids.to(self.device)
        torch.manual_seed(int(request.get("seed", 0)))
        temperature = float(request["temperature"])
        sampling: dict[str, Any] = (
            {"do_sample": True, "temperature": temperature, "top_p": float(request["topP"])}
            if temperature > 0
            else {"do_sample": False}
        )
        eos = self.tokenizer.eos_token_id
        with torch.no_grad():
            out = self.model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=int(request["maxNewTokens"]),
                # Greedy samples are all the same one: generate it once (transformers refuses n > 1 greedy).
                num_return_sequences=int(request["n"]) if temperature > 0 else 1,
                pad_token_id=self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos,
                eos_token_id=eos,
                top_k=None,
                **sampling,
            )
        samples: list[ModelSample] = []
        rows = out[:, ids.shape[1] :].tolist()
        if len(rows) < int(request["n"]):
            rows = rows * int(request["n"])
        for row in rows:
            finish: Literal["stop", "length"] = "length"
            if eos is not None and eos in row:
                row = row[: row.index(eos)]
                finish = "stop"
            samples.append(
                {
                    "text": self.tokenizer.decode(row, skip_special_tokens=False),
                    "completionTokens": len(row),
                    "finish": finish,
                }
            )
        return int(ids.shape[1]), samples


class VllmEngine:
    """vLLM's offline engine, as rollouts use it (vllm_backend.py)."""

    name = "vllm"
    device = "cuda"

    def __init__(self, path: Path, tokenizer: Any) -> None:
        from vllm import LLM

        self.tokenizer = tokenizer
        self.llm = LLM(model=str(path), tokenizer=str(path), enable_prefix_caching=True)

    def generate(self, request: ModelGenerateRequest) -> Generated:
        from vllm import SamplingParams, TokensPrompt

        ids = self.tokenizer(request["prompt"], add_special_tokens=False)["input_ids"]
        params = SamplingParams(
            n=int(request["n"]),
            temperature=float(request["temperature"]),
            top_p=float(request["topP"]),
            max_tokens=int(request["maxNewTokens"]),
            seed=int(request.get("seed", 0)),
            stop=list(request.get("stop") or []) or None,
            skip_special_tokens=False,
        )
        out = self.llm.generate([TokensPrompt(prompt_token_ids=ids)], params, use_tqdm=False)[0]
        samples: list[ModelSample] = [
            {
                "text": c.text,
                "completionTokens": len(c.token_ids),
                "finish": "length" if c.finish_reason == "length" else "stop",
            }
            for c in out.outputs
        ]
        return len(ids), samples


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


def _answer(message: ModelAnswer) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _failed(request_id: Any, message: str) -> ModelGenerateFailed:
    return {"type": "failed", "id": request_id if isinstance(request_id, str) else "", "message": message}


def _load(request: dict[str, Any]) -> tuple[Any, ModelLoaded | ModelLoadFailed]:
    """The engine (None when loading failed) and the answer to a load request."""
    path = request.get("path")
    if not isinstance(path, str) or not path:
        return None, {"type": "load-failed", "message": "the load request names no path", "hint": "Send a path."}
    try:
        threads = int(request.get("threads", 1))
        engine, folder = load(Path(path), threads)
    except ExportError as error:
        return None, {"type": "load-failed", "message": error.message, "hint": error.hint}
    except (OSError, ValueError) as error:
        hint = "Check the folder is a complete model or checkpoint."
        return None, {"type": "load-failed", "message": f"{path}: {error}", "hint": hint}
    return engine, {"type": "loaded", "engine": engine.name, "device": engine.device, "tokenizerDir": str(folder)}


def _generate(engine: Any, request: dict[str, Any]) -> ModelAnswer:
    request_id = request.get("id")
    if engine is None:
        return _failed(request_id, "no model is loaded")
    if not isinstance(request_id, str):
        return _failed("", "a generate request needs a string id")
    try:
        prompt_tokens, samples = engine.generate(request)
    except (KeyError, TypeError) as error:
        return _failed(request_id, f"malformed generate request: {error!r}")
    except (RuntimeError, ValueError) as error:  # out of memory, a prompt longer than the model takes
        return _failed(request_id, str(error).split("\n")[0][:300])
    return {"type": "result", "id": request_id, "promptTokens": prompt_tokens, "samples": samples}


def main() -> int:
    engine: Any = None
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as error:
            _answer(_failed("", f"not a JSON line: {error}"))
            continue
        kind = request.get("type") if isinstance(request, dict) else None
        if kind == MODEL_LOAD:
            loaded, answer = _load(request)
            engine = loaded if loaded is not None else engine
            _answer(answer)
        elif kind == MODEL_GENERATE:
            _answer(_generate(engine, request))
        else:
            request_id = request.get("id") if isinstance(request, dict) else None
            _answer(_failed(request_id, f"unknown request type {kind!r}; expected load or generate"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
