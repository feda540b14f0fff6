"""A fake host that speaks the protocol to a real `python -m fim_rlvr --stdio` process over pipes.

Like the real host it starts a verifier service for the run (fake_service.FakeService: exact match against the
task's middle, modulo whitespace) and names it in `initialize`; it records every notification, and its service can
leave chosen verify/batch requests unanswered (a verifier that stopped answering) or answer them with an error.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fake_service import BUDGET, FakeService
from fakes import IDENTITY
from pylsp_jsonrpc.endpoint import Endpoint
from pylsp_jsonrpc.streams import JsonRpcStreamReader, JsonRpcStreamWriter

TRAINER_ROOT = Path(__file__).resolve().parents[1]


class FakeHost:
    def __init__(self, dataset_dir: str | Path, hang: Sequence[int] = (), fail: Sequence[int] = ()) -> None:
        self.service = FakeService(dataset_dir, hang=hang, fail=fail)
        self.notifications: list[tuple[str, Any]] = []
        self.done = threading.Event()
        self.lock = threading.Lock()
        env = {**os.environ, "PYTHONPATH": str(TRAINER_ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fim_rlvr", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=TRAINER_ROOT,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.writer = JsonRpcStreamWriter(self.process.stdin)
        self.reader = JsonRpcStreamReader(self.process.stdout)
        handlers: dict[str, Any] = {}
        for method in ("train/progress", "train/sample", "train/checkpoint", "train/log", "train/eval", "train/done"):
            handlers[method] = self._recorder(method)
        self.endpoint = Endpoint(handlers, self.writer.write)
        self.listener = threading.Thread(target=self.reader.listen, args=(self.endpoint.consume,), daemon=True)
        self.listener.start()
        self.stderr_lines: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr_lines.append(line.decode("utf-8", "replace"))

    def _recorder(self, method: str) -> Any:
        def record(params: Any) -> None:
            with self.lock:
                self.notifications.append((method, params))
            if method == "train/done":
                self.done.set()

        return record

    def request(self, method: str, params: Any, timeout: float = 120) -> Any:
        return self.endpoint.request(method, params).result(timeout=timeout)

    def initialize(
        self, config: dict[str, Any], dataset_dir: str | Path, run_dir: str | Path, resume: bool = False
    ) -> Any:
        return self.request(
            "initialize",
            {
                "protocolVersion": 2,
                "config": config,
                "datasetDir": str(dataset_dir),
                "runDir": str(run_dir),
                "resume": resume,
                "verifier": IDENTITY,
                "verifierService": self.service.address,
                "verifierBudget": BUDGET,
            },
        )

    def of(self, method: str) -> list[Any]:
        with self.lock:
            return [p for m, p in self.notifications if m == method]

    def shutdown(self) -> int:
        self.request("shutdown", None)
        return self.process.wait(timeout=60)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        self.service.close()
