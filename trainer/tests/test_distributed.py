"""Two CPU ranks (gloo) train through accelerate's DDP against a real `fim-rlvr serve --simulator`.

After one RL step the parameters are identical on both ranks and differ from before (the ranks sampled different
tasks, so only averaged gradients keep them equal); both ranks' rollouts were checked by the service; only rank 0
emitted notifications and wrote the run's files, and its samples cover both ranks' groups.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch.multiprocessing as mp
from distributed_worker import run_rank
from service_process import ServiceProcess, export_dataset

TOKEN = "test-token"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_dataset(tmp_path_factory.mktemp("distributed") / "dataset")


@pytest.fixture()
def service(dataset: Path) -> Iterator[ServiceProcess]:
    process = ServiceProcess(dataset, token=TOKEN)
    yield process
    process.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def initialize_params(dataset: Path, run_dir: Path, service: ServiceProcess) -> dict[str, Any]:
    return {
        "protocolVersion": 2,
        "config": {
            "steps": 1,
            # A short SFT warm start (the same on both ranks) so that rewards vary within a group: the untrained
            # model proves nothing and never stops early, and all-equal rewards give no gradient to average.
            "sft_steps": 15,
            "eval_limit": 1,
            "batch_size": 2,
            "group_size": 4,
            "max_new_tokens": 12,
            "kinds": ["tactic"],
            "checkpoint_every": 1,
            "temperature": 1.0,
            # DAPO's overlong penalty: rewards differ by length too, not only by verdict.
            "algo_config": {"overlong_shaping": True, "overlong_cache_len": 8},
            # Micro-batches: gradients accumulate without synchronising (accelerate's no_sync) until the last one.
            "micro_batch_size": 3,
        },
        "datasetDir": str(dataset),
        "runDir": str(run_dir),
        "resume": False,
        "verifier": {"kind": "simulator", "version": "-", "label": "fim-rlvr serve --simulator (not Lean)"},
        "verifierService": {"host": "127.0.0.1", "port": service.port, "token": TOKEN},
        "verifierBudget": {"slots": 2, "checkTimeoutMs": 60_000, "checkBoundMs": 360_000},
    }


def test_two_ranks_synchronise_gradients_and_verify_through_the_service(
    dataset: Path, service: ServiceProcess, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    params = initialize_params(dataset, run_dir, service)
    mp.spawn(run_rank, args=(free_port(), params, str(tmp_path)), nprocs=2, join=True)
    main, other = (json.loads((tmp_path / f"rank-{k}.json").read_text()) for k in (0, 1))

    assert main["before"] == other["before"], "both ranks start from the same weights"
    assert main["after"] != main["before"], "the step changed the weights"
    assert main["after"] == other["after"], "averaged gradients keep the ranks identical"

    # Each rank sampled its own groups and the service answered them with real verdicts.
    rl_items = 2 * 4  # batch_size groups of group_size candidates
    assert len(other["sent"]) == rl_items and len(main["sent"]) >= rl_items
    assert set(other["sent"]) != set(main["sent"][-rl_items:]), "the ranks drew different tasks"
    for rank in (main, other):
        assert len(rank["answered"]) == len(rank["sent"])
        assert not {"crashed", "timeout", "environment"} & set(rank["answered"]), rank["answered"]
    stats = service_stats(service)
    assert stats["checks"] >= len(main["sent"]) + len(other["sent"])
    assert stats["refused"] == 0

    # Only rank 0 reports and writes; its samples cover both ranks' groups. The other rank's records stay in memory.
    assert other["methods"] == [] and (main["files"], other["files"]) == ("RunFiles", "RankRunFiles")
    assert "train/progress" in main["methods"] and main["methods"][-1] == "train/done"
    rl_samples = [s for s in main["samples"] if s["step"] == 1]
    assert len(rl_samples) == 2 * rl_items
    assert set(other["sent"]) <= {s["taskId"] for s in rl_samples}
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert len(metrics) == 1 and sum(metrics[0]["verdicts"].values()) == 2 * rl_items
    assert (run_dir / "checkpoints" / "latest").read_text().strip() == "step-1"
    state = json.loads((run_dir / "checkpoints" / "step-1" / "state.json").read_text())
    assert len(state["ranks"]) == 2, "each rank's sampler is kept for --resume"


def service_stats(service: ServiceProcess) -> dict[str, Any]:
    from fim_rlvr.verifier.client import ServiceClient

    with ServiceClient(service.address, token=TOKEN) as client:
        (report,) = client.stats()
    return report


def test_another_node_reaches_its_own_service_through_the_environment(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fim_rlvr.run.server import make_trainer
    from fim_rlvr.verifier.client import Address, ServiceClient

    params = {
        "protocolVersion": 2,
        "config": {"steps": 1},
        "datasetDir": str(dataset),
        "runDir": str(tmp_path / "run"),
        "resume": False,
        "verifier": {"kind": "simulator", "version": "-", "label": "simulator (not Lean)"},
        "verifierService": {"host": "127.0.0.1", "port": 1, "token": "main-node"},
        "verifierBudget": {"slots": 2, "checkTimeoutMs": 60_000, "checkBoundMs": 360_000},
    }
    trainer = make_trainer(params, None)
    assert isinstance(trainer.verifier, ServiceClient) and trainer.verifier.token == "main-node"
    monkeypatch.setenv("FIM_RLVR_VERIFIER_SERVICE", "10.0.0.7:8470")
    monkeypatch.setenv("FIM_RLVR_VERIFIER_TOKEN", "node-token")
    trainer = make_trainer(params, None)
    assert isinstance(trainer.verifier, ServiceClient)
    assert trainer.verifier.token == "node-token"
    assert trainer.verifier._services[0].address == Address("10.0.0.7", 8470)
    monkeypatch.setenv("FIM_RLVR_VERIFIER_SERVICE", "10.0.0.7:8470,10.0.0.8:8470")
    trainer = make_trainer(params, None)
    assert [s.address.host for s in trainer.verifier._services] == ["10.0.0.7", "10.0.0.8"]
    monkeypatch.setenv("FIM_RLVR_VERIFIER_SERVICE", "nowhere")
    with pytest.raises(Exception, match="FIM_RLVR_VERIFIER_SERVICE"):
        make_trainer(params, None)
    monkeypatch.delenv("FIM_RLVR_VERIFIER_SERVICE")
    with pytest.raises(Exception, match="only through the run's verifier service"):
        make_trainer({k: v for k, v in params.items() if k != "verifierService"}, None)
    with pytest.raises(Exception, match="verifierBudget"):
        make_trainer({k: v for k, v in params.items() if k != "verifierBudget"}, None)


def test_sharded_launches_are_refused_with_what_to_use_instead() -> None:
    from types import SimpleNamespace

    from accelerate.utils import DistributedType

    from fim_rlvr.run.distributed import Ranks

    def ranks(kind: DistributedType, zero_stage: int | None = None) -> Ranks:
        plugin = SimpleNamespace(zero_stage=zero_stage) if zero_stage is not None else None
        accelerator = SimpleNamespace(distributed_type=kind, state=SimpleNamespace(deepspeed_plugin=plugin))
        return Ranks(0, 2, accelerator)

    assert Ranks().unsupported() is None
    assert ranks(DistributedType.MULTI_GPU).unsupported() is None
    assert ranks(DistributedType.MULTI_CPU).unsupported() is None
    assert ranks(DistributedType.DEEPSPEED, zero_stage=2).unsupported() is None
    for refused in (ranks(DistributedType.FSDP), ranks(DistributedType.DEEPSPEED, zero_stage=3)):
        message = refused.unsupported()
        assert message is not None and "ZeRO-2" in message and "SCALING.md" in message
