"""Generates trainer/fim_rlvr/core/wire.py, the Python types of the host <-> trainer protocol, from
lean-bridge/protocol/trainer.schema.json with datamodel-code-generator (TypedDicts, the schema's descriptions as
docstrings, `closed` where the schema forbids other keys). `npm run protocol:generate` runs it (with the TypeScript
side); trainer/tests/test_protocol_generated.py checks that regenerating changes nothing.

    trainer/.venv/bin/python scripts/generate_wire.py [--check]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "lean-bridge" / "protocol" / "trainer.schema.json"
OUTPUT = REPO / "trainer" / "fim_rlvr" / "core" / "wire.py"
GENERATOR = "datamodel-code-generator==0.89.0"
"""The generator release this output comes from (trainer[test] pins the same)."""
HEADER = (
    "Generated from lean-bridge/protocol/trainer.schema.json by datamodel-code-generator (scripts/generate_wire.py):\n"
    "do not edit; change the schema and run `npm run protocol:generate`. The hand-written rest of the protocol\n"
    "(method names, error codes, the Verdict view) is fim_rlvr/core/protocol.py."
)
ARGUMENTS = [
    "--input-file-type",
    "jsonschema",
    "--output-model-type",
    "typing.TypedDict",
    "--target-python-version",
    "3.10",
    "--use-schema-description",
    "--use-inline-field-description",
    "--enum-field-as-literal",
    "all",
    "--use-union-operator",
    "--disable-timestamp",
    "--disable-future-imports",  # TypedDict reads NotRequired from evaluated annotations only
    "--no-formatters",
]
"""The generator's options; its output is then sorted and formatted by the trainer's own ruff and config."""
ROOT_ALIAS = "Model: TypeAlias = Any\n"
"""What the generator makes of the schema's root, which is no message (it only holds $defs): left out."""


def generate() -> str:
    """The text wire.py must hold."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="fim-rlvr-wire-") as folder:
        source = Path(folder) / "trainer.schema.json"
        source.write_text(json.dumps({"$defs": schema["$defs"]}), encoding="utf-8")
        output = Path(folder) / "wire.py"
        command = [sys.executable, "-m", "datamodel_code_generator", "--input", str(source), "--output", str(output)]
        command += [*ARGUMENTS, "--custom-file-header", "\n".join(f"# {line}" for line in HEADER.splitlines())]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"datamodel-code-generator failed: {done.stderr.strip()} (pip install '{GENERATOR}')")
        text = output.read_text(encoding="utf-8")
    if ROOT_ALIAS not in text:
        raise RuntimeError(f"the generator no longer writes {ROOT_ALIAS.strip()!r}: update scripts/generate_wire.py")
    return _ruff(["format"], _ruff(["check", "--fix", "--select", "I", "--quiet"], text.replace(ROOT_ALIAS, "", 1)))


def _ruff(command: list[str], text: str) -> str:
    """`text` through the trainer's ruff with the trainer's configuration, as trainer/tests/test_lint.py checks it."""
    trainer = REPO / "trainer"
    args = [sys.executable, "-m", "ruff", *command, "--config", str(trainer / "pyproject.toml")]
    args += ["--stdin-filename", str(OUTPUT.relative_to(trainer)), "-"]
    done = subprocess.run(args, input=text, capture_output=True, text=True, cwd=trainer)
    if done.returncode != 0:
        raise RuntimeError(f"ruff {command[0]} failed on the generated text: {done.stderr.strip()}")
    return done.stdout


def main(argv: list[str]) -> int:
    text = generate()
    if "--check" in argv:
        same = OUTPUT.is_file() and OUTPUT.read_text(encoding="utf-8") == text
        print(f"{OUTPUT.relative_to(REPO)} is {'up to date' if same else 'stale: run `npm run protocol:generate`'}")
        return 0 if same else 1
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
