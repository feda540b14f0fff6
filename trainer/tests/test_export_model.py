"""`python -m fim_rlvr.model.export`: adapter, merged and ONNX exports from full and LoRA checkpoints, and the
checkpoint's policy and each export agreeing on logits (the ONNX one through onnxruntime, where installed)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from export_fixtures import PROMPT, make_run

from fim_rlvr.model import export as export_model
from fim_rlvr.model.export import ExportError, export


def logits_of(model: Any, tokenizer: Any) -> torch.Tensor:
    ids = tokenizer(PROMPT, return_tensors="pt").input_ids
    with torch.no_grad():
        return model(input_ids=ids).logits[0]


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, torch.Tensor]:
    run = tmp_path_factory.mktemp("full-run")
    policy, tokenizer = make_run(run, "full")
    return run, logits_of(policy, tokenizer)


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, torch.Tensor]:
    run = tmp_path_factory.mktemp("lora-run")
    policy, tokenizer = make_run(run, "lora")
    return run, logits_of(policy, tokenizer)


def load_merged(folder: Path) -> torch.Tensor:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    return logits_of(model, AutoTokenizer.from_pretrained(folder))


def test_merged_from_a_full_checkpoint_has_the_policys_logits(full_run: tuple[Path, torch.Tensor]) -> None:
    run, expected = full_run
    result = export(run, "merged")
    out = Path(result.path)
    assert out == run / "exports" / "step-3-merged"
    assert (result.step, result.checkpoint_kind, result.format) == (3, "full", "merged")
    assert {"config.json", "model.safetensors", "tokenizer.json", "generation_config.json"} <= set(result.files)
    assert result.size_bytes == sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert torch.equal(load_merged(out), expected)
    assert not list((run / "exports").glob(".tmp-*"))


def test_merged_from_a_lora_checkpoint_merges_the_adapter(lora_run: tuple[Path, torch.Tensor], tmp_path: Path) -> None:
    run, expected = lora_run
    result = export(run, "merged", out=tmp_path / "merged")
    assert result.checkpoint_kind == "lora"
    assert "adapter_config.json" not in result.files and "model.safetensors" in result.files
    logits = load_merged(tmp_path / "merged")
    torch.testing.assert_close(logits, expected, rtol=0, atol=1e-5)
    # The adapter matters: the base model alone gives other logits.
    base = load_merged(run / "checkpoints" / "step-3" / "base_model")
    assert (base - expected).abs().max() > 1e-2


def test_lora_base_model_named_by_adapter_config(tmp_path: Path) -> None:
    policy, tokenizer = make_run(tmp_path / "run", "lora", base_in="config")
    assert not (tmp_path / "run" / "checkpoints" / "step-3" / "base_model").exists()
    export(tmp_path / "run", "merged", out=tmp_path / "merged")
    torch.testing.assert_close(load_merged(tmp_path / "merged"), logits_of(policy, tokenizer), rtol=0, atol=1e-5)


def test_adapter_export_loads_over_its_base(lora_run: tuple[Path, torch.Tensor], tmp_path: Path) -> None:
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    run, expected = lora_run
    result = export(run, "adapter", out=tmp_path / "adapter", which="3")
    assert {"adapter_config.json", "adapter_model.safetensors", "tokenizer.json"} <= set(result.files)
    base = AutoModelForCausalLM.from_pretrained(run / "checkpoints" / "step-3" / "base_model")
    model = PeftModel.from_pretrained(base, tmp_path / "adapter").eval()
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "adapter")
    torch.testing.assert_close(logits_of(model, tokenizer), expected, rtol=0, atol=1e-6)


def test_adapter_export_of_a_full_run_says_use_merged(full_run: tuple[Path, torch.Tensor], tmp_path: Path) -> None:
    with pytest.raises(ExportError) as raised:
        export(full_run[0], "adapter", out=tmp_path / "adapter")
    assert "no LoRA adapter" in raised.value.message
    assert "--format merged" in raised.value.hint
    assert not (tmp_path / "adapter").exists() and list(tmp_path.iterdir()) == []


def onnx_logits(folder: Path, input_ids: list[int]) -> np.ndarray:
    """The exported graph run as transformers.js runs its first step: empty past, positions from the mask."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(folder / "onnx" / "model.onnx"), providers=["CPUExecutionProvider"])
    ids = np.array([input_ids], dtype=np.int64)
    feeds: dict[str, np.ndarray] = {
        "input_ids": ids,
        "attention_mask": np.ones_like(ids),
        "position_ids": np.arange(ids.shape[1], dtype=np.int64)[None],
    }
    for meta in session.get_inputs():
        if meta.name.startswith("past_key_values."):
            shape = [d if isinstance(d, int) else (1 if d == "batch_size" else 0) for d in meta.shape]
            feeds[meta.name] = np.zeros(shape, dtype=np.float32)
    return np.asarray(session.run(["logits"], feeds)[0][0])


def test_onnx_export_in_the_transformers_js_layout(lora_run: tuple[Path, torch.Tensor], tmp_path: Path) -> None:
    """A LoRA checkpoint, merged; the full checkpoint's ONNX export is the external-data test's below."""
    if importlib.util.find_spec("onnxscript") is None:
        pytest.skip("onnxscript is not installed (pip install 'fim_rlvr[onnx]')")
    run, expected = lora_run
    result = export(run, "onnx", out=tmp_path / "onnx")
    out = tmp_path / "onnx"
    assert set(result.files) == {
        "config.json",
        "generation_config.json",
        "onnx/model.onnx",
        "tokenizer.json",
        "tokenizer_config.json",
    }
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert config["transformers.js_config"] == {"dtype": "fp32"} and config["use_cache"] is True
    import onnx

    graph = onnx.load(str(out / "onnx" / "model.onnx")).graph
    layers = config["num_hidden_layers"]
    past = [f"past_key_values.{i}.{p}" for i in range(layers) for p in ("key", "value")]
    assert [i.name for i in graph.input] == ["input_ids", "attention_mask", "position_ids", *past]
    assert [o.name for o in graph.output] == ["logits", *[n.replace("past_key_values", "present") for n in past]]
    if importlib.util.find_spec("onnxruntime") is None:
        assert result.check is None
        pytest.skip("onnxruntime is not installed: the layout is checked, the logits are not")
    assert result.check is not None and "matches PyTorch" in result.check
    from transformers import AutoTokenizer

    ids = AutoTokenizer.from_pretrained(out)(PROMPT).input_ids
    np.testing.assert_allclose(onnx_logits(out, ids), expected.numpy(), rtol=0, atol=1e-4)


def test_onnx_export_of_grouped_query_attention_keeps_the_checkpoints_tokenizer(tmp_path: Path) -> None:
    if importlib.util.find_spec("onnxscript") is None or importlib.util.find_spec("onnxruntime") is None:
        pytest.skip("onnxscript or onnxruntime is not installed (pip install 'fim_rlvr[onnx]')")
    import onnx

    policy, tokenizer = make_run(tmp_path / "run", "full", arch="qwen2")
    export(tmp_path / "run", "onnx", out=tmp_path / "onnx")
    out = tmp_path / "onnx"
    past = onnx.load(str(out / "onnx" / "model.onnx")).graph.input[3].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in past] == ["batch_size", 2, "past_sequence_length", 32]
    # Byte for byte: transformers 5 would rebuild a qwen2 tokenizer's pre-tokenizer on re-saving.
    stored = tmp_path / "run" / "checkpoints" / "step-3" / "model"
    for name in ("tokenizer.json", "tokenizer_config.json"):
        assert (out / name).read_bytes() == (stored / name).read_bytes()
    ids = tokenizer(PROMPT).input_ids
    np.testing.assert_allclose(onnx_logits(out, ids), logits_of(policy, tokenizer).numpy(), rtol=0, atol=1e-4)


def test_large_models_put_onnx_weights_in_external_data(
    full_run: tuple[Path, torch.Tensor], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if importlib.util.find_spec("onnxscript") is None or importlib.util.find_spec("onnxruntime") is None:
        pytest.skip("onnxscript or onnxruntime is not installed (pip install 'fim_rlvr[onnx]')")
    from fim_rlvr.model import onnx_export

    monkeypatch.setattr(onnx_export, "EXTERNAL_DATA_BYTES", 0)  # As if the weights were over protobuf's 2 GB.
    run, expected = full_run
    result = export(run, "onnx", out=tmp_path / "onnx")
    out = tmp_path / "onnx"
    assert {"onnx/model.onnx", "onnx/model.onnx_data"} <= set(result.files)
    assert (out / "onnx" / "model.onnx").stat().st_size < (out / "onnx" / "model.onnx_data").stat().st_size
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert config["transformers.js_config"] == {"dtype": "fp32", "use_external_data_format": True}
    from transformers import AutoTokenizer

    ids = AutoTokenizer.from_pretrained(out)(PROMPT).input_ids
    np.testing.assert_allclose(onnx_logits(out, ids), expected.numpy(), rtol=0, atol=1e-4)


def test_unusable_run_folders_say_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="is not a folder"):
        export(tmp_path / "missing", "merged")
    with pytest.raises(ExportError, match="not a training run folder") as raised:
        export(tmp_path, "merged")
    assert "fim-rlvr train" in raised.value.hint
    (tmp_path / "checkpoints").mkdir()
    with pytest.raises(ExportError, match="no complete checkpoint yet"):
        export(tmp_path, "merged")


def test_checkpoint_choice_and_existing_output(full_run: tuple[Path, torch.Tensor], tmp_path: Path) -> None:
    run = full_run[0]
    with pytest.raises(ExportError, match=r"no complete checkpoint step-9 \(available steps: 3\)"):
        export(run, "merged", which="9", out=tmp_path / "x")
    out = tmp_path / "merged"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(ExportError, match="already exists") as raised:
        export(run, "merged", which="step-3", out=out)
    assert "--force" in raised.value.hint and (out / "keep.txt").is_file()
    export(run, "merged", which="step-3", out=out, force=True)
    assert not (out / "keep.txt").exists() and (out / "model.safetensors").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merged"]  # No temporary folder left behind.


def test_a_failed_export_leaves_nothing(
    full_run: tuple[Path, torch.Tensor], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any) -> None:
        raise ExportError("disk full", "free some space")

    monkeypatch.setitem(export_model._WRITERS, "merged", broken)
    with pytest.raises(ExportError, match="disk full"):
        export(full_run[0], "merged", out=tmp_path / "merged")
    assert list(tmp_path.iterdir()) == []


def test_missing_onnx_dependencies_give_the_pip_command(
    full_run: tuple[Path, torch.Tensor],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxscript" else real(name, *a))
    code = export_model.main([str(full_run[0]), "--format", "onnx", "--out", str(tmp_path / "onnx")])
    answer = json.loads(capsys.readouterr().out.strip())
    assert code == 1 and answer["kind"] == "error"
    assert "onnxscript" in answer["message"]
    assert answer["hint"].endswith("-m pip install 'onnxscript>=0.1'")
    assert not (tmp_path / "onnx").exists()


def test_without_onnxruntime_the_onnx_export_says_its_check_was_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The PyTorch parity check needs onnxruntime: without it the answer and the progress say so, with the pip line
    (it used to skip silently)."""
    from fim_rlvr.model import onnx_export

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    said: list[str] = []
    check = onnx_export._check_with_onnxruntime(None, Path("unused.onnx"), [], (1, 1, 1), said.append)  # type: ignore[arg-type]
    assert check is not None and check.startswith("skipped: onnxruntime is not installed")
    assert "pip install 'onnxruntime>=1.20'" in check
    assert said == [f"not checking the ONNX model against PyTorch: {onnx_export.ONNXRUNTIME_MISSING}"]


def test_a_lora_checkpoint_is_saved_without_asking_the_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """peft's default would ask the Hub whether the base's vocabulary changed (here a name that leads nowhere) at
    every checkpoint; the trainer saves the adapter alone, so no save looks anything up, offline mode or not."""
    from peft.utils import save_and_load

    asked: list[str] = []
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(save_and_load, "check_file_exists_on_hf_hub", lambda repo, *_a, **_k: asked.append(repo))
    make_run(tmp_path / "run", "lora", base_in="checkpoint")
    assert asked == []
    adapter = json.loads((tmp_path / "run" / "checkpoints" / "step-3" / "model" / "adapter_config.json").read_text())
    assert adapter["base_model_name_or_path"] == "hub-org/not-downloadable"
