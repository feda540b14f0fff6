"""Runs in a spawned process (as TRL's AsyncGRPOTrainer runs its rollout worker): a pickled reward is called there."""

from __future__ import annotations

import asyncio
from typing import Any


def score_in_worker(reward: Any, completions: list[Any], columns: dict[str, list[Any]]) -> list[float | None]:
    """The reward called as TRL's async worker calls it: keyword arguments, awaited when it is async."""
    try:
        result = reward(prompts=[], completions=completions, completion_ids=None, **columns)
        return asyncio.run(result) if asyncio.iscoroutine(result) else result
    finally:
        reward.close()
