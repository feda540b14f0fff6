"""What the TRL and verl adapters share: cleaning a completion as our own trainer does, and reading verdicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.outcomes import wire_reward
from ..core.protocol import BatchVerdict
from ..tasks.clean import clean_completion
from ..tasks.prompts import FIM_CONVENTIONS

_QWEN_STOPS = FIM_CONVENTIONS[0].stops


def completion_text(completion: Any) -> str:
    """The text of a completion: a string, or the last message's content in conversational form."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        return str(completion[-1].get("content", ""))
    return str(completion)


def candidate(raw: str, *, indent: int = 0, fim: bool = True, stops: Sequence[str] | None = None) -> str:
    """The cleaned candidate (stops cut, fences stripped, re-indented to the hole's column)."""
    return clean_completion(raw, indent=indent, stops=tuple(stops) if stops is not None else _QWEN_STOPS, fim=fim)


def reward_or_none(verdict: BatchVerdict, timeout_reward: str = "failure") -> float | None:
    """The reward our own trainer would train on (fim_rlvr.core.outcomes): None when the outcome was outside the
    candidate's control (environment, an infrastructure timeout or crash; with timeout_reward "mask" also the
    candidate's own timeouts), else the verifier's reward (0 for a timeout or crash the candidate caused)."""
    return wire_reward(verdict, timeout_reward)
