"""The single-process trainer checks its candidates through the verifier service the host names in `initialize` (the
path every rank of a multi-process run takes too, and the only one: the stdio connection carries no candidates)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_host import FakeHost
from service_process import ServiceProcess, export_dataset

from fim_rlvr.verifier.client import ServiceClient

TOKEN = "service-path-token"
MASKED = {"timeout", "crashed", "environment"}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_dataset(tmp_path_factory.mktemp("service-path") / "dataset")


@pytest.fixture()
def service(dataset: Path) -> Iterator[ServiceProcess]:
    process = ServiceProcess(dataset, token=TOKEN)
    yield process
    process.stop()


def test_a_run_checks_through_the_service_and_never_over_stdio(
    dataset: Path, service: ServiceProcess, tmp_path: Path
) -> None:
    host = FakeHost(dataset)
    try:
        config: dict[str, Any] = {"steps": 2, "sft_steps": 0, "batch_size": 2, "group_size": 2, "max_new_tokens": 8}
        config |= {"eval_limit": 2, "kinds": ["tactic"], "checkpoint_every": 1}
        host.request(
            "initialize",
            {
                "protocolVersion": 2,
                "config": config,
                "datasetDir": str(dataset),
                "runDir": str(tmp_path / "run"),
                "resume": False,
                "verifier": {"kind": "simulator", "version": "-", "label": "fim-rlvr serve --simulator (not Lean)"},
                "verifierService": {"host": "127.0.0.1", "port": service.port, "token": TOKEN},
                "verifierBudget": {"slots": 2, "checkTimeoutMs": 60_000, "checkBoundMs": 360_000},
            },
        )
        assert host.done.wait(timeout=120), "".join(host.stderr_lines)
        assert host.of("train/done")[0]["status"] == "completed"
        assert host.service.batches == 0, "everything went to the service the host named"
        logs = [entry["message"] for entry in host.of("train/log")]
        assert any(f"through the run's verifier service at 127.0.0.1:{service.port}" in m for m in logs), logs
        samples = host.of("train/sample")
        assert len(samples) == 2 * 2 * 2
        assert not MASKED & {s["verdict"] for s in samples}, "every candidate got a verdict from the service"
        with ServiceClient(service.address, token=TOKEN) as client:
            (stats,) = client.stats()
        assert stats["checks"] >= len(samples) and stats["refused"] == 0
        assert host.shutdown() == 0
    finally:
        host.kill()
