"""verl's custom reward function, backed by the verifier service.

verl calls `compute_score(data_source, solution_str, ground_truth, extra_info)` per sample (NaiveRewardManager) and
`compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos)` per batch (BatchRewardManager;
one verify/batch for the whole batch is far faster). Rows come from `fim_rlvr.integrations.datasets_view` (layout
"verl"): `ground_truth` is the task id, `extra_info` holds `indent`, `fim` and `stops` for cleaning. The service's
address comes from the environment, since verl passes no options: FIM_RLVR_SERVICE (`HOST:PORT`, several separated by
commas) and FIM_RLVR_TOKEN. Rewards follow our own trainer's rule (fim_rlvr.core.outcomes): a timeout or crash the
completion caused is a failure, 0.0. An outcome outside its control (environment, a timeout or crash whose cause is
the infrastructure) also scores 0.0, because verl's reward managers have no way to leave a sample out; `masked` in
the batch form's dicts says which, so a user can drop those rows. verl loads this file by path, so `trainer/` must
be on PYTHONPATH (docs/SERVICE.md has the config).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from fim_rlvr.integrations._scoring import candidate, reward_or_none

# Absolute imports: verl loads this file by path (custom_reward_function.path), outside its package.
from fim_rlvr.integrations.datasets_view import DATA_SOURCE
from fim_rlvr.verifier.client import ServiceClient

_client: ServiceClient | None = None
_client_lock = threading.Lock()


def client() -> ServiceClient:
    """This process's client of the services named by FIM_RLVR_SERVICE (made once)."""
    global _client
    with _client_lock:
        if _client is None:
            services = [s for s in os.environ.get("FIM_RLVR_SERVICE", "127.0.0.1:8470").split(",") if s.strip()]
            _client = ServiceClient(services, token=os.environ.get("FIM_RLVR_TOKEN"))
        return _client


def _item(solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None) -> dict[str, Any]:
    info = extra_info or {}
    task_id = str(info.get("task_id", ground_truth))
    text = candidate(
        solution_str, indent=int(info.get("indent", 0)), fim=bool(info.get("fim", True)), stops=info.get("stops")
    )
    return {"taskId": task_id, "candidate": text}


def compute_score(
    data_source: str, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None
) -> float:
    """The reward of one completion (0.0 for a failure, a timeout the completion caused, or an outcome outside its
    control)."""
    if data_source != DATA_SOURCE:
        raise ValueError(f"fim_rlvr's compute_score scores {DATA_SOURCE} rows, got data_source={data_source!r}")
    [verdict] = client().verify([_item(solution_str, ground_truth, extra_info)])
    return reward_or_none(verdict) or 0.0


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None],
    **_: Any,
) -> list[dict[str, Any]]:
    """Rewards of a batch in one verify/batch: `{"score", "proved", "masked"}` per completion."""
    items = [_item(s, g, e) for s, g, e in zip(solution_strs, ground_truths, extra_infos, strict=True)]
    for source in set(data_sources):
        if source != DATA_SOURCE:
            raise ValueError(f"fim_rlvr's compute_score scores {DATA_SOURCE} rows, got data_source={source!r}")
    out = []
    for verdict in client().verify(items):
        reward = reward_or_none(verdict)
        out.append(
            {
                "score": reward or 0.0,
                "proved": 1.0 if verdict["kind"] == "proved" else 0.0,
                "masked": 1.0 if reward is None else 0.0,
            }
        )
    return out
