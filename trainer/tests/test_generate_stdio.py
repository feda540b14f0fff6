"""generate_stdio's JSON lines (the host's `hf:PATH` backend) against the schema's `x-modelMessages`: every answer
it writes, to good requests and to bad lines, validates as the ModelAnswer it claims to be; a bad line never ends
the process. The model is a stand-in engine (the real one is test/models/localModels.test.ts's hf: test)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from test_protocol_schema import schema

from fim_rlvr.core.protocol import ModelGenerateRequest, ModelSample
from fim_rlvr.model import generate_stdio
from fim_rlvr.model.export import ExportError


class FakeEngine:
    name = "transformers"
    device = "cpu"

    def __init__(self) -> None:
        self.requests: list[ModelGenerateRequest] = []

    def generate(self, request: ModelGenerateRequest) -> tuple[int, list[ModelSample]]:
        self.requests.append(request)
        if request["prompt"] == "too long":
            raise RuntimeError("prompt longer than the model takes\nmore detail")
        samples: list[ModelSample] = [
            {"text": f"simp<|endoftext|>{i}", "completionTokens": 2, "finish": "stop"} for i in range(request["n"])
        ]
        return len(request["prompt"]), samples


def run(lines: list[str], monkeypatch: pytest.MonkeyPatch, engine: FakeEngine | None = None) -> list[dict[str, Any]]:
    def fake_load(path: Path, threads: int) -> tuple[Any, Path]:
        if path.name == "missing":
            raise ExportError(f"{path} holds no model", "Pass a run folder.")
        return engine or FakeEngine(), path / "tokenizer"

    monkeypatch.setattr(generate_stdio, "load", fake_load)
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(line + "\n" for line in lines)))
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    assert generate_stdio.main() == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def validate(instance: Any, name: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    defs = schema()["$defs"]
    jsonschema.validate(instance, {"$ref": f"#/$defs/{name}", "$defs": defs})


def generate(request_id: str, prompt: str = "<|fim_prefix|>by <|fim_suffix|><|fim_middle|>", n: int = 2) -> str:
    request = {
        "type": "generate",
        "id": request_id,
        "prompt": prompt,
        "n": n,
        "temperature": 0.4,
        "topP": 0.95,
        "maxNewTokens": 16,
        "seed": 3,
        "stop": ["<|endoftext|>"],
    }
    validate(request, "ModelGenerateRequest")
    return json.dumps(request)


def test_every_answer_is_a_declared_message(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = FakeEngine()
    load = {"type": "load", "path": "/runs/run-1", "threads": 2}
    validate(load, "ModelLoadRequest")
    answers = run(
        [
            generate("0"),
            json.dumps(load),
            generate("1"),
            generate("2", prompt="too long"),
            "{not json",
            "[1]",
            json.dumps({"type": "sing", "id": "9"}),
            json.dumps({"type": "generate", "id": 4}),
            json.dumps({"type": "generate", "id": "5"}),
        ],
        monkeypatch,
        engine,
    )
    kinds = ["failed", "loaded", "result", "failed", "failed", "failed", "failed", "failed", "failed"]
    assert [a["type"] for a in answers] == kinds
    names = {
        "loaded": "ModelLoaded",
        "load-failed": "ModelLoadFailed",
        "result": "ModelGenerateResult",
        "failed": "ModelGenerateFailed",
    }
    for answer in answers:
        validate(answer, names[answer["type"]])
        validate(answer, "ModelAnswer")
    assert answers[0] == {"type": "failed", "id": "0", "message": "no model is loaded"}
    assert answers[1]["tokenizerDir"] == "/runs/run-1/tokenizer"
    assert answers[2]["id"] == "1" and len(answers[2]["samples"]) == 2
    assert answers[3]["message"] == "prompt longer than the model takes"
    assert [a["id"] for a in answers[4:]] == ["", "", "9", "", "5"]
    assert "malformed" in answers[8]["message"]
    assert engine.requests[0]["topP"] == 0.95 and engine.requests[0]["maxNewTokens"] == 16


def test_a_failed_load_says_what_to_do_and_keeps_the_loaded_model(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = run(
        [
            json.dumps({"type": "load", "path": "/runs/a", "threads": 1}),
            json.dumps({"type": "load", "path": "/runs/missing", "threads": 1}),
            json.dumps({"type": "load", "threads": 1}),
            generate("7"),
        ],
        monkeypatch,
    )
    assert [a["type"] for a in answers] == ["loaded", "load-failed", "load-failed", "result"]
    validate(answers[1], "ModelLoadFailed")
    assert answers[1]["hint"] == "Pass a run folder."


def test_the_schema_refuses_the_old_snake_case_lines() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    with pytest.raises(jsonschema.ValidationError):
        validate({"type": "loaded", "engine": "transformers", "device": "cpu", "tokenizer_dir": "x"}, "ModelLoaded")
