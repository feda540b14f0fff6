"""A TRL reward function backed by the verifier service.

    from fim_rlvr.datasets_view import load_view
    from fim_rlvr.integrations.trl import lean_reward

    train = load_view("out/dataset", split="train", tokenizer=tokenizer)
    trainer = GRPOTrainer(model=model, reward_funcs=lean_reward("127.0.0.1:8470"), train_dataset=train, ...)

The function has TRL's signature `(prompts, completions, completion_ids, **columns) -> list[float | None]` and
reads the columns of `fim_rlvr.datasets_view` (`task_id`, `indent`, `fim`, `stops`). A verdict that says nothing
about the model (timeout, crashed, environment: the verifier's problem, not the completion's) is None, which TRL
turns into NaN and leaves out. `lean_reward(..., asynchronous=True)` gives an async function, which TRL awaits on
its event loop beside other async rewards.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..protocol import NOT_THE_MODELS_FAULT, BatchVerdict
from ..service_client import Address, ServiceClient
from ._scoring import candidate, completion_text, reward_or_none


class LeanReward:
    """The synchronous reward function (an object, so its client and last verdicts stay inspectable)."""

    __name__ = "lean_verifier"

    def __init__(self, client: ServiceClient) -> None:
        self.client = client
        self.last_verdicts: list[BatchVerdict] = []
        """The verdicts of the last call, in order (for inspection and tests)."""

    def items(self, completions: Sequence[Any], columns: dict[str, Any]) -> list[dict[str, Any]]:
        """verify/batch items for the completions, from the view's columns."""
        if "task_id" not in columns:
            raise ValueError(
                "the train dataset has no task_id column: build it with fim_rlvr.datasets_view.load_view(DATASET_DIR)"
            )
        n = len(completions)
        indents = columns.get("indent") or [0] * n
        fims = columns.get("fim") or [True] * n
        stops = columns.get("stops") or [None] * n
        return [
            {
                "taskId": str(columns["task_id"][k]),
                "candidate": candidate(
                    completion_text(completions[k]), indent=int(indents[k]), fim=bool(fims[k]), stops=stops[k]
                ),
            }
            for k in range(n)
        ]

    def score(self, verdicts: list[BatchVerdict], columns: dict[str, Any]) -> list[float | None]:
        self.last_verdicts = verdicts
        log_metric = columns.get("log_metric")
        if callable(log_metric) and verdicts:
            counts: Counter[str] = Counter(str(v["kind"]) for v in verdicts)
            log_metric("lean/proved_rate", counts["proved"] / len(verdicts))
            masked = sum(counts[k] for k in NOT_THE_MODELS_FAULT)
            log_metric("lean/masked_rate", masked / len(verdicts))
        return [reward_or_none(v) for v in verdicts]

    def __call__(
        self, prompts: Sequence[Any], completions: Sequence[Any], completion_ids: Any = None, **columns: Any
    ) -> list[float | None]:
        return self.score(self.client.verify(self.items(completions, columns)), columns)


class AsyncLeanReward(LeanReward):
    """The same reward as a coroutine, for TRL's async reward path."""

    async def __call__(  # type: ignore[override]
        self, prompts: Sequence[Any], completions: Sequence[Any], completion_ids: Any = None, **columns: Any
    ) -> list[float | None]:
        return self.score(await self.client.verify_async(self.items(completions, columns)), columns)


def lean_reward(
    services: str | Address | Sequence[str | Address] | ServiceClient,
    *,
    token: str | None = None,
    asynchronous: bool = False,
    **client_options: Any,
) -> LeanReward:
    """A TRL reward function verifying through the given service(s) (`HOST:PORT`, several to balance over)."""
    client = services if isinstance(services, ServiceClient) else ServiceClient(services, token=token, **client_options)
    return AsyncLeanReward(client) if asynchronous else LeanReward(client)
