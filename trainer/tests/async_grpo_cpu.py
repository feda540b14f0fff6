"""Runs examples/trl_grpo.py's `--async-trainer` path on a CPU, for the test suite: `python async_grpo_cpu.py
EXAMPLE ARGS...` runs EXAMPLE (as `__main__`) with four parts of TRL's AsyncGRPOTrainer replaced, since each needs
CUDA or a vLLM install. Everything else is TRL's own: the trainer, its rollout worker (a spawned process that receives
the pickled reward functions and calls them), its packing, loss and optimiser steps.

What is replaced, and with what:
- the vLLM server: a stand-in in this process that serves `/health`, `/v1/models` and `/v1/completions` (token ids in,
  sampled token ids and their log-probabilities out) from a transformers copy of the model the trainer loads;
- the weight sync (NCCL into vLLM): the trainer's `weight_transfer` hook copies its parameters into that copy;
- tree attention's FlashAttention-3 kernel (fetched from the Hub's `kernels`): the same variable-length causal
  attention written with PyTorch's scaled_dot_product_attention;
- two CUDA-only probes: the accelerator's peak FLOPs (for the MFU metric) and the check that vLLM is importable.

`--vllm-server` is filled in by the stand-in (any value given is replaced).
"""

from __future__ import annotations

import json
import runpy
import sys
import threading
import types
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import torch

MAX_MODEL_LEN = 1024


def varlen_causal_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    cu_seqlens_k: torch.Tensor,
    max_seqlen_q: int,
    max_seqlen_k: int,
    softmax_scale: float | None = None,
    causal: bool = True,
    window_size: tuple[int, int] = (-1, -1),
    **_: Any,
) -> torch.Tensor:
    """flash_attn_varlen_func's contract for what tree attention passes: packed (tokens, heads, dim) tensors, segment
    i's queries q[cu_q[i]:cu_q[i+1]] against keys k[cu_k[i]:cu_k[i+1]], causal aligned to the bottom right (a segment's
    queries are the last of its keys), grouped-query heads repeated."""
    if not causal or window_size != (-1, -1):
        raise NotImplementedError("the CPU stand-in covers causal attention without a sliding window")
    out = torch.empty_like(q)
    repeat = q.shape[1] // k.shape[1]
    for i in range(len(cu_seqlens_q) - 1):
        qa, qb = int(cu_seqlens_q[i]), int(cu_seqlens_q[i + 1])
        ka, kb = int(cu_seqlens_k[i]), int(cu_seqlens_k[i + 1])
        queries = q[qa:qb].transpose(0, 1)
        keys = k[ka:kb].transpose(0, 1).repeat_interleave(repeat, 0)
        values = v[ka:kb].transpose(0, 1).repeat_interleave(repeat, 0)
        mask = torch.ones(qb - qa, kb - ka, dtype=torch.bool).tril(kb - ka - (qb - qa))
        attended = torch.nn.functional.scaled_dot_product_attention(
            queries, keys, values, attn_mask=mask, scale=softmax_scale
        )
        out[qa:qb] = attended.transpose(0, 1)
    return out


class StandInServer:
    """The three endpoints of a vLLM server that AsyncGRPOTrainer and its rollout worker call, over a transformers
    model. Sampling follows the request's temperature and seed; log-probabilities are of the sampled tokens at that
    temperature, as vLLM returns them."""

    def __init__(self, model_dir: str) -> None:
        from transformers import AutoModelForCausalLM

        self.model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
        self.lock = threading.Lock()
        self.requests = 0
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.http.server_port}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def reply(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.startswith("/health"):
                    self.reply(200, {})
                elif self.path.startswith("/v1/models"):
                    self.reply(200, {"data": [{"id": "stand-in", "max_model_len": MAX_MODEL_LEN}]})
                else:
                    self.reply(404, {"error": f"the CPU stand-in does not serve GET {self.path}"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.startswith("/v1/completions"):
                    self.reply(200, server.complete(body))
                else:
                    self.reply(404, {"error": f"the CPU stand-in does not serve POST {self.path}"})

        return Handler

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        generator = torch.Generator().manual_seed(int(body.get("seed", 0)) % 2**63)
        temperature = max(float(body.get("temperature", 1.0)), 1e-5)
        eos = self.model.generation_config.eos_token_id
        stops = set(eos if isinstance(eos, list) else [eos])
        ids = torch.tensor([body["prompt"]])
        tokens: list[int] = []
        logprobs: list[float] = []
        with self.lock, torch.no_grad():
            self.requests += 1
            for _ in range(int(body["max_tokens"])):
                logits = self.model(ids).logits[0, -1].float()
                logp = torch.log_softmax(logits / temperature, -1)
                token = int(torch.multinomial(logp.exp(), 1, generator=generator))
                tokens.append(token)
                logprobs.append(float(logp[token]))
                if token in stops:
                    break
                ids = torch.cat([ids, torch.tensor([[token]])], 1)
        return {"choices": [{"token_ids": tokens, "logprobs": {"token_logprobs": logprobs}}]}


class CopyWeights:
    """TRL's WeightTransferProtocol into the stand-in's model: pause holds generation, send copies, resume lets go."""

    def __init__(self, server: StandInServer) -> None:
        self.server = server

    def init_weight_transfer(self) -> None:
        pass

    def pause(self) -> None:
        self.server.lock.acquire()

    def send_weights(self, iterator: Iterator[tuple[str, torch.Tensor]]) -> None:
        params = dict(self.server.model.named_parameters())
        with torch.no_grad():
            for name, tensor in iterator:
                params[name].copy_(tensor)

    def resume(self) -> None:
        self.server.lock.release()

    def destroy(self) -> None:
        # TRL calls this at the end of training, before it stops the rollout worker, whose requests in flight must
        # still be answered: the server's thread ends with the process.
        pass


def install() -> None:
    """Replaces the four parts (module docstring) in this process; the rollout worker's process needs none of them."""
    import trl.experimental.async_grpo.async_grpo_trainer as trainer_module
    import trl.experimental.async_grpo.async_rollout_worker as worker_module
    import trl.experimental.async_grpo.packing as packing

    packing._flash_attn = lambda: types.SimpleNamespace(flash_attn_varlen_func=varlen_causal_attention)  # type: ignore[assignment]
    trainer_module.get_peak_flops_per_device = lambda *_, **__: float("nan")
    worker_module.is_vllm_available = lambda *_: True
    original = trainer_module.AsyncGRPOTrainer.__init__

    def with_stand_in(self: Any, model: str, *args: Any, **kwargs: Any) -> None:
        server = StandInServer(model)
        kwargs["args"].vllm_server_base_url = server.url
        kwargs.setdefault("weight_transfer", CopyWeights(server))
        original(self, model, *args, **kwargs)
        self.stand_in = server

    trainer_module.AsyncGRPOTrainer.__init__ = with_stand_in  # type: ignore[method-assign]


if __name__ == "__main__":
    install()
    example, *rest = sys.argv[1:]
    sys.argv = [example, *rest]
    runpy.run_path(example, run_name="__main__")
