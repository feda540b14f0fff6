"""The protocol's Python types (fim_rlvr/core/wire.py) are generated from lean-bridge/protocol/trainer.schema.json by
datamodel-code-generator, and regenerating them changes nothing: the schema is the one source, and a change to it
that is not regenerated fails here (`npm run protocol:generate` writes both sides; test/unit/protocolGenerated.test.ts
checks the TypeScript one). The generator comes with trainer[test]; where it is missing the test is skipped with the
reason, except on CI (CI=true), where that is a failure."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DRIVER = REPO / "scripts" / "generate_wire.py"


def driver() -> object:
    spec = importlib.util.spec_from_file_location("generate_wire", DRIVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_regenerating_the_wire_types_changes_nothing() -> None:
    if not DRIVER.is_file():
        pytest.skip(f"{DRIVER} not found (the trainer outside its repository)")
    if importlib.util.find_spec("datamodel_code_generator") is None:
        reason = "datamodel-code-generator is not installed (pip install -e 'trainer[test]', or npm run test:setup)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}: CI must run this check")
        pytest.skip(reason)
    generate = driver()
    text = generate.generate()  # type: ignore[attr-defined]
    current = (REPO / "trainer" / "fim_rlvr" / "core" / "wire.py").read_text(encoding="utf-8")
    assert current == text, "fim_rlvr/core/wire.py differs from the schema's: run `npm run protocol:generate`"


def test_the_generated_types_are_what_the_trainer_uses() -> None:
    """protocol.py re-exports every generated message type (no hand-written copy beside them)."""
    from fim_rlvr.core import protocol, wire

    generated = {
        name for name, value in vars(wire).items() if isinstance(value, type) and value.__module__ == wire.__name__
    }
    assert generated, "wire.py defines the message types"
    for name in generated:
        assert getattr(protocol, name) is getattr(wire, name), name
