"""Test helpers: a dataset exported from lean-env and a `fim-rlvr serve --simulator` process on loopback."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "dist" / "cli.js"
EXAMPLE = REPO / "lean-env"


def require_cli() -> str:
    """The node binary; skips (saying why) when node or the built CLI is missing."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH: the verifier service is a Node program")
    if not CLI.exists():
        pytest.skip(f"{CLI} is missing: run `npm run build` first")
    return node


def export_dataset(out: Path) -> Path:
    """lean-env mined into `out` (the dataset the service serves by task id)."""
    node = require_cli()
    subprocess.run([node, str(CLI), "export", str(EXAMPLE), "--out", str(out)], check=True, capture_output=True)
    return out


def read_tasks(dataset: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (dataset / "tasks.jsonl").read_text().splitlines() if line.strip()]


class ServiceProcess:
    """`fim-rlvr serve --simulator` on 127.0.0.1; `address` is HOST:PORT once it listens."""

    def __init__(self, dataset: Path, *extra: str, port: int = 0, token: str | None = None) -> None:
        node = require_cli()
        args = [node, str(CLI), "serve", "--project", str(EXAMPLE), "--dataset", str(dataset), "--simulator"]
        args += ["--port", str(port), "--workers", "2", *extra]
        if token is not None:
            args += [f"--token={token}"]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        for line in self.process.stdout:
            match = re.search(r"listening on (\S+)", line)
            if match:
                self.address = match.group(1)
                break
        else:
            stderr = self.process.stderr.read() if self.process.stderr else ""
            raise RuntimeError(f"fim-rlvr serve did not start: {stderr}")

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def kill(self) -> None:
        """Ends the service abruptly (a crash or a preempted machine)."""
        self.process.kill()
        self.process.wait(30)

    def stop(self) -> int:
        """Ctrl-C: the service stops its verifier and exits."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        return self.process.wait(30)
