"""A TRL reward function backed by the verifier service.

    from fim_rlvr.integrations.datasets_view import load_view
    from fim_rlvr.integrations.trl import lean_reward

    train = load_view("out/dataset", split="train", tokenizer=tokenizer)
    trainer = GRPOTrainer(model=model, reward_funcs=lean_reward("127.0.0.1:8470"), train_dataset=train, ...)

The function has TRL's signature `(prompts, completions, completion_ids, **columns) -> list[float | None]` and
reads the columns of `fim_rlvr.integrations.datasets_view` (`task_id`, `indent`, `fim`, `stops`). Rewards follow our own
trainer's rule (fim_rlvr.core.outcomes): an outcome outside the completion's control (environment, a timeout or crash
whose cause is the infrastructure) is None, which TRL turns into NaN and leaves out of the group's baseline and the
loss; a timeout or crash the completion caused (`sleep`, a looping `simp`) is a failure, 0.0, so the policy cannot
escape its penalty by hanging (`timeout_reward="mask"` restores masking of the completion's own timeouts, for
comparison). `lean_reward(..., asynchronous=True)` gives an async function, which TRL awaits on its event loop
beside other async rewards.

The reward pickles: it holds the services' addresses, and each process builds its own client on first use (TRL's
`AsyncGRPOTrainer` spawns its rollout worker and pickles the reward functions into it; a client's sockets, threads
and locks stay in the process that made them). A batch larger than a service's queue (`fim-rlvr serve --max-queue`)
is split to fit by the client.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..core.outcomes import TIMEOUT_REWARDS
from ..core.protocol import BatchVerdict
from ..verifier.client import Address, ServiceClient
from ._scoring import candidate, completion_text, reward_or_none


class LeanReward:
    """The synchronous reward function (an object, so its client and last verdicts stay inspectable)."""

    __name__ = "lean_verifier"

    def __init__(
        self,
        services: str | Address | Sequence[str | Address] | ServiceClient,
        timeout_reward: str = "failure",
        *,
        token: str | None = None,
        **client_options: Any,
    ) -> None:
        if timeout_reward not in TIMEOUT_REWARDS:
            raise ValueError(f"timeout_reward must be failure or mask (got {timeout_reward!r})")
        self._client: ServiceClient | None = services if isinstance(services, ServiceClient) else None
        self._services = None if isinstance(services, ServiceClient) else services
        """What a process builds its client from (None: a client object was given, which cannot travel)."""
        self._token = token
        self._client_options = client_options
        self.timeout_reward = timeout_reward
        """How a timeout the completion caused is scored (fim_rlvr.core.outcomes)."""
        self.last_verdicts: list[BatchVerdict] = []
        """The verdicts of the last call, in order (for inspection and tests)."""

    @property
    def client(self) -> ServiceClient:
        """This process's client of the services, built on first use."""
        if self._client is None:
            assert self._services is not None
            self._client = ServiceClient(self._services, token=self._token, **self._client_options)
        return self._client

    def close(self) -> None:
        """Closes this process's client, if it made one (a later call makes another)."""
        if self._client is not None and self._services is not None:
            self._client.close()
            self._client = None

    def __getstate__(self) -> dict[str, Any]:
        if self._services is None:
            raise TypeError(
                "this reward was built on a ServiceClient object, which cannot be pickled (it holds sockets and "
                "threads): build it from addresses, lean_reward('HOST:PORT'), so each process makes its own client"
            )
        return {**self.__dict__, "_client": None, "last_verdicts": []}

    def items(self, completions: Sequence[Any], columns: dict[str, Any]) -> list[dict[str, Any]]:
        """verify/batch items for the completions, from the view's columns."""
        if "task_id" not in columns:
            raise ValueError(
                "the train dataset has no task_id column: build it with "
                "fim_rlvr.integrations.datasets_view.load_view(DATASET_DIR)"
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
            log_metric("lean/timeout_rate", counts["timeout"] / len(verdicts))
        rewards = [reward_or_none(v, self.timeout_reward) for v in verdicts]
        if callable(log_metric) and verdicts:
            log_metric("lean/masked_rate", sum(r is None for r in rewards) / len(verdicts))
        return rewards

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
    timeout_reward: str = "failure",
    **client_options: Any,
) -> LeanReward:
    """A TRL reward function verifying through the given service(s) (`HOST:PORT`, several to balance over)."""
    kind = AsyncLeanReward if asynchronous else LeanReward
    return kind(services, timeout_reward, token=token, **client_options)
