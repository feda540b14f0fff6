"""The Python client against a real `fim-rlvr serve --simulator` on loopback."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from service_process import ServiceProcess, export_dataset, read_tasks

from fim_rlvr.core.protocol import Verdict
from fim_rlvr.verifier.client import ServiceClient, ServiceRefused, hole_key, parse_address


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_dataset(tmp_path_factory.mktemp("service") / "dataset")


@pytest.fixture()
def service(dataset: Path) -> Iterator[ServiceProcess]:
    process = ServiceProcess(dataset)
    yield process
    process.stop()


def test_addresses() -> None:
    assert parse_address("127.0.0.1:8470").port == 8470
    assert parse_address("[::1]:9000").host == "::1"
    assert parse_address("8470").host == "127.0.0.1"
    with pytest.raises(ValueError):
        parse_address("nowhere")
    hole = {"start": {"line": 3, "character": 2}, "end": {"line": 4, "character": 9}}
    assert hole_key({"file": "A.lean", "hole": hole, "candidate": "x"}) == "A.lean@3:2-4:9"
    assert hole_key({"taskId": "t", "candidate": "x"}) == "task:t"


def test_round_trip_by_task_id_and_by_hole(service: ServiceProcess, dataset: Path) -> None:
    task = next(t for t in read_tasks(dataset) if t["kind"] == "proof")
    with ServiceClient(service.address) as client:
        verdicts = client.verify(
            [
                {"taskId": task["id"], "candidate": task["middle"]},
                {"taskId": task["id"], "candidate": "exact nonsense_lemma"},
                {"file": task["file"], "hole": task["range"], "candidate": task["middle"]},
                {"taskId": "no-such-task", "candidate": "rfl"},
            ]
        )
        assert [v["kind"] for v in verdicts] == ["proved", "failed", "proved", "rejected"]
        assert [v["reward"] for v in verdicts] == [1, 0, 1, 0]
        assert verdicts[0]["taskId"] == task["id"]
        assert verdicts[0]["verifier"]["kind"] == "simulator"
        assert "unknown task id" in verdicts[3]["diagnostics"][0]["message"]
        [stats] = client.stats()
        assert stats["checks"] == 4
        assert stats["verifier"]["kind"] == "simulator"
        assert stats["refused"] == 0


def test_the_trainers_own_loop_can_verify_through_the_service(service: ServiceProcess, dataset: Path) -> None:
    """ServiceClient is a fim_rlvr.verifier.check.Verifier: submit now, collect later (as the trainer's pipelined loop
    does)."""
    from fim_rlvr.core.protocol import VerifyItem
    from fim_rlvr.verifier.check import send

    task = next(t for t in read_tasks(dataset) if t["kind"] == "tactic")
    with ServiceClient(service.address) as client:
        items: list[VerifyItem] = [
            {"taskId": task["id"], "candidate": task["middle"]},
            {"taskId": task["id"], "candidate": "sorry"},
        ]
        pending = send(client, items)
        verdicts, _waited = pending.collect(client, silence_s=60)
        assert [(v.kind, v.reward) for v in verdicts] == [("proved", 1.0), ("rejected", 0.0)]
        assert {v.task_id for v in verdicts} == {task["id"]}
        assert not any(v.masked() for v in verdicts)


def test_the_service_reports_progress_on_a_batch_and_the_client_hears_it(
    service: ServiceProcess, dataset: Path
) -> None:
    """Each request carries a batchId; the service's verify/progress for it reaches the client's book (the first one
    goes out at once, before the answer), which is what keeps a slow batch from counting as unanswered."""
    task = next(t for t in read_tasks(dataset) if t["kind"] == "tactic")
    with ServiceClient(service.address) as client:
        future = client.submit([{"taskId": task["id"], "candidate": c} for c in (task["middle"], "simp", "omega")])
        assert client.progress_at(future) is not None or future.done()
        assert future.result(60)[0]["kind"] == "proved"
        assert client.progress_notes >= 1
        assert client.progress_at(future) is None, "an answered batch is no longer followed"


def test_token_is_required_when_set_and_refusals_are_counted(dataset: Path) -> None:
    process = ServiceProcess(dataset, token="a-long-test-token")
    try:
        task = read_tasks(dataset)[0]
        with ServiceClient(process.address) as anonymous, pytest.raises(ServiceRefused, match="requires a token"):
            anonymous.verify([{"taskId": task["id"], "candidate": task["middle"]}])
        with ServiceClient(process.address, token="a-long-test-token") as client:
            assert client.verify([{"taskId": task["id"], "candidate": task["middle"]}])[0]["kind"] == "proved"
            assert client.stats()[0]["refused"] == 1, "the refused handshake is counted"
    finally:
        process.stop()


def test_a_service_killed_mid_batch_is_reconnected_and_the_batch_resubmitted(dataset: Path) -> None:
    tasks = [t for t in read_tasks(dataset) if t["kind"] == "proof"][:2]
    # Loading imports takes 3 s (simulated) in the first service, so the batch is surely in flight when it dies.
    first = ServiceProcess(dataset, "--sim-header-ms", "3000")
    client = ServiceClient(first.address, retry_window=30)
    second: ServiceProcess | None = None
    try:
        items = [{"taskId": t["id"], "candidate": c} for t in tasks for c in (t["middle"], "exact wrong_lemma")]
        future = client.submit(items)
        monitor = ServiceClient(first.address)
        deadline = time.monotonic() + 20
        while monitor.stats()[0].get("queue", 0) < len(items):
            assert time.monotonic() < deadline, "the batch never reached the service"
            time.sleep(0.02)
        monitor.close()
        first.kill()
        second = ServiceProcess(dataset, port=first.port)
        verdicts = future.result(60)
        assert [v["kind"] for v in verdicts] == ["proved", "failed", "proved", "failed"]
        # At least once each: a dying service can still accept a connection it then resets, losing them again.
        assert client.resubmitted >= len(items)
        assert client.reconnects >= 1
    finally:
        client.close()
        if second is not None:
            second.stop()


def test_balancing_over_two_services_keeps_each_hole_on_one(dataset: Path) -> None:
    tasks = [t for t in read_tasks(dataset) if t["kind"] == "tactic"][:4]
    services = [ServiceProcess(dataset), ServiceProcess(dataset)]
    client = ServiceClient([s.address for s in services])
    try:
        items = [{"taskId": t["id"], "candidate": c} for t in tasks for c in (t["middle"], "exact wrong_lemma")]
        assert [v["kind"] for v in client.verify(items)] == ["proved", "failed"] * 4
        first = [s["checks"] for s in client.stats()]
        assert first == [4, 4], "two holes (two candidates each) on each service"
        client.verify(list(reversed(items)))
        second = [s["checks"] for s in client.stats()]
        assert second == [8, 8]
        # A hole's group went back to the service that checked it: its second check was a cache hit there, and so
        # was each proof's no-op check of its hole (lean-bridge/verify/noopProbe.ts): 4 + 2 per service.
        assert [s["cacheHits"] for s in client.stats()] == [6, 6]
    finally:
        client.close()
        for service in services:
            service.stop()


def test_no_service_gives_infrastructure_verdicts() -> None:
    with ServiceClient("127.0.0.1:9", retry_window=0.3) as client:
        [verdict] = client.verify([{"taskId": "t", "candidate": "rfl"}])
        assert (verdict["kind"], verdict.get("cause")) == ("crashed", "infrastructure")
        assert Verdict.from_wire(verdict).masked()  # the candidate had no part in it
        assert "fim-rlvr serve" in verdict["diagnostics"][0]["message"]
