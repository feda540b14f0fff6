"""protocol.py mirrors lean-bridge/protocol/trainer.schema.json: names, fields, required-ness, enums, methods and
error codes, for the host <-> trainer protocol and the verifier service's; the service client's requests match it."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any, get_args, get_origin

import pytest

from fim_rlvr.core import config as train_config
from fim_rlvr.core import protocol

SCHEMA = Path(__file__).resolve().parents[2] / "lean-bridge" / "protocol" / "trainer.schema.json"

pytestmark = pytest.mark.skipif(not SCHEMA.is_file(), reason=f"{SCHEMA} not found (the host's schema)")


def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return data


def _literal_values(annotation: Any) -> set[str] | None:
    """The string values of a Literal (possibly inside Optional / a named alias), else None."""
    if get_origin(annotation) is typing.Literal:
        return set(get_args(annotation))
    for arg in get_args(annotation):
        values = _literal_values(arg)
        if values is not None:
            return values
    return None


def _enum_of(prop: dict[str, Any], defs: dict[str, Any]) -> set[str] | None:
    if "enum" in prop:
        return set(prop["enum"])
    if "const" in prop:
        return {prop["const"]}
    ref = prop.get("$ref")
    if ref:
        target = defs[ref.rsplit("/", 1)[1]]
        return set(target["enum"]) if "enum" in target else None
    return None


def test_every_object_definition_has_a_typed_dict_with_the_same_fields() -> None:
    defs = schema()["$defs"]
    checked = 0
    for name, definition in defs.items():
        if definition.get("type") != "object":
            continue
        mirror = getattr(protocol, name, None)
        assert mirror is not None, f"protocol.py has no {name}"
        hints = typing.get_type_hints(mirror, include_extras=False)
        assert set(hints) == set(definition.get("properties", {})), name
        if name != "TrainConfig":  # every TrainConfig key is optional on the wire
            assert set(mirror.__required_keys__) == set(definition.get("required", [])), name
        for field, prop in definition.get("properties", {}).items():
            expected = _enum_of(prop, defs)
            if expected is not None:
                assert _literal_values(hints[field]) == expected, f"{name}.{field}"
        checked += 1
    assert checked >= 15


def test_enums_and_method_names() -> None:
    data = schema()
    defs = data["$defs"]
    assert set(protocol.VERDICT_KINDS) == set(defs["VerdictKind"]["enum"])
    assert set(protocol.HOLE_KINDS) == set(defs["HoleKind"]["enum"])
    assert tuple(defs["AlgorithmName"]["enum"]) == train_config.ALGORITHM_NAMES
    assert get_args(protocol.AlgorithmName) == train_config.ALGORITHM_NAMES
    methods = {m["method"] for m in data["x-messages"] + data["x-serviceMessages"]}
    constants = {
        v
        for k, v in vars(protocol).items()
        if (k.isupper() and isinstance(v, str) and "/" in v) or v in ("initialize", "shutdown", "stats", "auth")
    }
    assert methods <= constants and protocol.STATS == "stats" and protocol.AUTH == "auth"
    assert {m["type"] for m in data["x-modelMessages"]} == {protocol.MODEL_LOAD, protocol.MODEL_GENERATE}
    assert data["x-protocolVersion"] == protocol.PROTOCOL_VERSION
    assert data["x-errorCodes"] == {
        "trainerError": protocol.TRAINER_ERROR,
        "serviceUnauthorized": protocol.SERVICE_UNAUTHORIZED,
        "serviceBusy": protocol.SERVICE_BUSY,
        "serviceInvalidParams": protocol.SERVICE_INVALID_PARAMS,
    }


def test_wire_config_keys_are_train_config_fields() -> None:
    wire = set(schema()["$defs"]["TrainConfig"]["properties"])
    assert wire <= set(train_config.valid_keys())


def test_sample_messages_validate_against_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    data = schema()

    def validate(instance: Any, name: str) -> None:
        jsonschema.validate(instance, {"$ref": f"#/$defs/{name}", "$defs": data["$defs"]})

    validate(
        {"trainer": "fim_rlvr 0.1.0", "device": "cpu", "resumedFromStep": None, "totalSteps": 3}, "InitializeResult"
    )
    validate({"level": "info", "message": "x"}, "TrainLogParams")
    validate(
        {"stage": "sft", "split": "test", "passAt1": 0.5, "byKind": {"tactic": 0.5}, "tasks": 4}, "TrainEvalParams"
    )
    verdict = protocol.Verdict.not_checked("t", "timeout", "no answer")
    assert verdict.masked() and verdict.diagnostics[0]["candidateRange"] is None


def test_the_service_client_speaks_the_schemas_service_protocol(toy_dataset: Path) -> None:
    pytest.importorskip("jsonschema")
    from fake_service import TOKEN, FakeService

    from fim_rlvr.verifier.client import ServiceClient

    service = FakeService(toy_dataset)
    try:
        with ServiceClient(f"127.0.0.1:{service.port}", token=TOKEN) as client:
            verdicts = client.verify([{"taskId": "task-0-2", "candidate": "rfl"}, {"taskId": "nope", "candidate": ""}])
            (stats,) = client.stats()
        assert [v["kind"] for v in verdicts] == ["proved", "failed"] and stats["slots"] >= 1
        assert service.violations == []
        service._validate({"items": [{"taskId": "t"}]}, "VerifyBatchParams")  # the check itself can fail
        assert service.violations and "VerifyBatchParams" in service.violations[0]
    finally:
        service.close()


def test_the_schemas_algorithm_options_are_algorithm_configs_fields() -> None:
    """The host refuses an unknown `--algo-config` key before start-up from this list; it must be the trainer's."""
    from fim_rlvr.algorithms.config import VALID_KEYS

    assert list(schema()["x-algorithmOptions"]) == list(VALID_KEYS)


ALGORITHM_OPTION_PROBES: list[object] = [None, True, False, -1, 0, 0.5, 1, 3, 0.999, 1.5, -0.1, "x", "sequence_mask"]
# 10**9, not 1e9: the host sends values as JSON.stringify writes them, and it writes 1e9 as the integer 1000000000.
ALGORITHM_OPTION_PROBES += [[1], {"a": 1}, "token_truncate", "token_mask", "sequence_truncate", 10**9]


ALGORITHM_OPTION_KEYS = (
    list(json.loads(SCHEMA.read_text(encoding="utf-8"))["x-algorithmOptions"]) if SCHEMA.is_file() else []
)


@pytest.mark.parametrize("key", ALGORITHM_OPTION_KEYS)
def test_the_host_accepts_an_algorithm_option_value_exactly_when_the_trainer_does(key: str) -> None:
    """The host checks `--algo-config` values against the schema's entry before start-up (exit 2); the trainer's
    own check (`_check_value`) is the oracle: the same values pass, so nothing the host lets through fails later."""
    import jsonschema

    from fim_rlvr.algorithms.config import ConfigError, _check_value

    option = schema()["x-algorithmOptions"][key]
    for value in ALGORITHM_OPTION_PROBES:
        host = jsonschema.Draft202012Validator(option).is_valid(value)
        try:
            _check_value(key, value)
            trainer = True
        except ConfigError:
            trainer = False
        assert host == trainer, f"{key}={value!r}: schema {'accepts' if host else 'refuses'}, trainer does not"
