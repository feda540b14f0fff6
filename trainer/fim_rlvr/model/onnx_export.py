"""A causal LM as an ONNX decoder in the layout @huggingface/transformers (transformers.js) loads.

transformers.js (src/models/modeling_utils.js) runs a decoder-only model from `onnx/model.onnx` beside
config.json, tokenizer.json, tokenizer_config.json and generation_config.json. Its generation loop feeds only the
newly sampled token after the first step and expects the model to carry the context in `past_key_values`, so a
model without a KV cache would generate from one token of context: the graph therefore takes and returns the
cache. Inputs: input_ids [batch_size, sequence_length], attention_mask [batch_size, total_sequence_length],
position_ids [batch_size, sequence_length], past_key_values.<i>.key/value [batch_size, kv_heads,
past_sequence_length, head_dim]; outputs: logits [batch_size, sequence_length, vocab] and present.<i>.key/value.
For the first step transformers.js builds empty past tensors from the session's input shapes (every symbolic
dimension other than batch_size becomes 0), so kv_heads and head_dim are fixed numbers in the graph.

Weights stay in one file up to 1.8 GB (protobuf's 2 GB limit); larger models put them in
`onnx/model.onnx_data` and set `transformers.js_config.use_external_data_format`, which tells transformers.js to
load it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ..core.errors import ExportError

OPSET = 18
"""Opset 18 runs on every onnxruntime transformers.js v3 and v4 ship (1.20 and later)."""
EXTERNAL_DATA_BYTES = 1_800_000_000
MAX_LOGIT_ERROR = 1e-3
ONNXRUNTIME_MISSING = (
    "onnxruntime is not installed, so the export's logits were not compared with PyTorch's; install it into the "
    "trainer's Python (pip install 'onnxruntime>=1.20') and export again to check them"
)
"""onnxruntime and PyTorch agree to ~1e-6 in fp32; a larger gap means a mistranslated operation."""


class _DecoderWithCache(torch.nn.Module):
    """The model with its cache as flat tensors in and out, named as transformers.js names them."""

    def __init__(self, model: Any, layers: int) -> None:
        super().__init__()
        self.model = model
        self.layers = layers

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, position_ids: torch.Tensor, *past: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_values=cache,
            use_cache=True,
        )
        present: list[torch.Tensor] = []
        for layer in out.past_key_values.layers:
            present += [layer.keys, layer.values]
        return (out.logits, *present)


def _cache_geometry(model: Any) -> tuple[int, int, int]:
    """(layers, kv_heads, head_dim), read from a real forward pass rather than config names that vary by model."""
    with torch.no_grad():
        out = model(input_ids=torch.zeros(1, 2, dtype=torch.long), use_cache=True)
    layers = getattr(out.past_key_values, "layers", None)
    if not layers or any(getattr(layer, "keys", None) is None for layer in layers):
        raise ExportError(
            f"{type(model).__name__} does not keep a plain key/value cache, which the ONNX export needs",
            "Export with --format merged and convert it with a tool that knows this architecture (optimum-onnx).",
        )
    shapes = {tuple(layer.keys.shape[1::2]) for layer in layers} | {tuple(layer.values.shape[1::2]) for layer in layers}
    if len(shapes) != 1:
        raise ExportError(
            f"{type(model).__name__} has layers with different cache shapes ({sorted(shapes)})",
            "Export with --format merged and convert it with a tool that knows this architecture (optimum-onnx).",
        )
    kv_heads, head_dim = next(iter(shapes))
    return len(layers), int(kv_heads), int(head_dim)


def _names(layers: int) -> tuple[list[str], list[str]]:
    past = [f"past_key_values.{i}.{part}" for i in range(layers) for part in ("key", "value")]
    present = [f"present.{i}.{part}" for i in range(layers) for part in ("key", "value")]
    return ["input_ids", "attention_mask", "position_ids", *past], ["logits", *present]


def _sample_inputs(layers: int, kv_heads: int, head_dim: int, batch: int, new: int, past: int) -> list[torch.Tensor]:
    """Inputs for a step of `new` tokens after `past` cached ones (the first sequence left-padded by one)."""
    generator = torch.Generator().manual_seed(0)
    input_ids = torch.randint(0, 16, (batch, new), generator=generator)
    attention_mask = torch.ones(batch, past + new, dtype=torch.long)
    attention_mask[0, 0] = 0
    # As transformers.js computes them (create_position_ids): cumsum of the mask minus one, padding at 1.
    position_ids = (attention_mask.cumsum(-1) - 1).masked_fill(attention_mask == 0, 1)[:, past:]
    cache = [torch.randn(batch, kv_heads, past, head_dim, generator=generator) for _ in range(2 * layers)]
    return [input_ids, attention_mask, position_ids, *cache]


def export_onnx(model: Any, into: Path, say: Callable[[str], None]) -> str | None:
    """Writes onnx/model.onnx, config.json and generation_config.json `into` (the caller adds the tokenizer);
    returns what was checked afterwards (or None)."""
    import onnx

    model.config.use_cache = True
    layers, kv_heads, head_dim = _cache_geometry(model)
    input_names, output_names = _names(layers)
    batch, seq, past, total = "batch_size", "sequence_length", "past_sequence_length", "total_sequence_length"
    cache_shape = {0: batch, 2: past}
    dynamic_shapes = ({0: batch, 1: seq}, {0: batch, 1: total}, {0: batch, 1: seq}, tuple([cache_shape] * 2 * layers))
    say(f"tracing the model for ONNX (torch.onnx.export, opset {OPSET}; {layers} layers, this takes a while)")
    wrapper = _DecoderWithCache(model, layers).eval()
    with torch.no_grad(), warnings.catch_warnings(), _quiet_loggers():
        warnings.simplefilter("ignore")
        try:
            program: Any = torch.onnx.export(
                wrapper,
                tuple(_sample_inputs(layers, kv_heads, head_dim, batch=2, new=3, past=2)),
                input_names=input_names,
                output_names=output_names,
                dynamic_shapes=dynamic_shapes,
                opset_version=OPSET,
                dynamo=True,
                verbose=False,
            )
        except Exception as error:  # torch.export's failures have many types; all mean "cannot trace this model".
            first = str(error).strip().split("\n")[0][:300]
            raise ExportError(
                f"torch.onnx could not export {type(model).__name__} (torch {torch.__version__}): {first}",
                "Export with --format merged and convert that folder with optimum-onnx (pip install optimum-onnx), "
                "which knows more architectures.",
            ) from error
    proto = program.model_proto
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    external = weight_bytes > EXTERNAL_DATA_BYTES
    say(f"writing onnx/model.onnx{' + model.onnx_data' if external else ''}")
    (into / "onnx").mkdir(parents=True)
    onnx.save_model(
        proto,
        str(into / "onnx" / "model.onnx"),
        save_as_external_data=external,
        all_tensors_to_one_file=True,
        location="model.onnx_data",
    )
    if external:  # onnx writes the data file owner-only; give it the permissions model.onnx got.
        (into / "onnx" / "model.onnx_data").chmod((into / "onnx" / "model.onnx").stat().st_mode & 0o777)
    _write_configs(model, into, external)
    return _check_with_onnxruntime(
        wrapper, into / "onnx" / "model.onnx", input_names, (layers, kv_heads, head_dim), say
    )


def _write_configs(model: Any, into: Path, external: bool) -> None:
    config = model.config.to_dict()
    config["use_cache"] = True
    js_config: dict[str, Any] = {"dtype": "fp32"}
    if external:
        js_config["use_external_data_format"] = True
    config["transformers.js_config"] = js_config
    (into / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    model.generation_config.save_pretrained(into)


def _check_with_onnxruntime(
    wrapper: _DecoderWithCache,
    path: Path,
    input_names: list[str],
    geometry: tuple[int, int, int],
    say: Callable[[str], None],
) -> str | None:
    """Runs the written file with onnxruntime, when installed, on a prefill and a cached step against PyTorch; without
    onnxruntime the export says (on stderr and in its answer) that its logits were not compared, and how to install
    it."""
    if importlib.util.find_spec("onnxruntime") is None:
        skipped = f"skipped: {ONNXRUNTIME_MISSING}"
        say(f"not checking the ONNX model against PyTorch: {ONNXRUNTIME_MISSING}")
        return skipped
    import onnxruntime

    say("checking the ONNX model against PyTorch with onnxruntime")
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    worst = 0.0
    for past in (0, 3):
        inputs = _sample_inputs(*geometry, batch=2, new=4, past=past)
        with torch.no_grad():
            expected = wrapper(*inputs)[0]
        got = session.run(["logits"], {n: t.numpy() for n, t in zip(input_names, inputs, strict=True)})[0]
        real = inputs[1][:, past:].bool()  # Logits at padding positions are meaningless in both.
        worst = max(worst, float((torch.from_numpy(got) - expected)[real].abs().max()))
    if worst > MAX_LOGIT_ERROR:
        raise ExportError(
            f"the ONNX model's logits differ from PyTorch's by up to {worst:.3g} "
            f"(onnxruntime {onnxruntime.__version__})",
            "This architecture does not export faithfully with torch.onnx; use --format merged and optimum-onnx.",
        )
    return f"onnxruntime {onnxruntime.__version__} matches PyTorch (max |logit difference| {worst:.2g})"


@contextlib.contextmanager
def _quiet_loggers() -> Any:
    """torch.onnx logs every pass at WARNING level (and skipped torchvision ops); our progress line says enough."""
    loggers = [logging.getLogger(name) for name in ("torch.onnx", "torch.export", "torch._dynamo", "onnxscript")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
