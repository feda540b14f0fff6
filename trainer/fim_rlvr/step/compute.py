"""What a compute-matched arm spent, counted the same way for every arm (eval.json's per-stage `compute`).

- `generated`: completions the model sampled and their tokens: the arm's training draws (RL's dynamic-sampling
  refills and repair turns included) and its held-out evaluation's (the greedy pass and the pass@k samples).
- `trained`: sequences and target tokens through the model's forward and backward passes (RL: every sequence of the
  groups a step trains on, once per optimiser pass over them; SFT and expert iteration: the targets of each step).
- `optimizer_steps` and `verifier_calls` (candidates sent to the verifier: the data-matched arm's portfolio checks,
  RL's and expert iteration's samples, and the evaluation's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Count:
    """Sequences and their tokens."""

    sequences: int = 0
    tokens: int = 0

    def add(self, sequences: int, tokens: int) -> None:
        self.sequences += sequences
        self.tokens += tokens

    def to_json(self) -> dict[str, int]:
        return {"sequences": self.sequences, "tokens": self.tokens}


@dataclass
class ArmCompute:
    """What an arm spent: the quantities compute matching is about."""

    optimizer_steps: int = 0
    """Optimiser steps taken (an expert-iteration step with an empty buffer takes none)."""
    verifier_calls: int = 0
    """Candidates sent to the verifier."""
    generated: Count = field(default_factory=Count)
    """Completions sampled, and their tokens."""
    trained: Count = field(default_factory=Count)
    """Sequences put through the model's forward and backward passes, and their target tokens."""
    evaluation: Count | None = None
    """The part of `generated` (and of `verifier_calls`) the arm's held-out evaluation spent, once added."""

    def with_evaluation(self, sequences: int, tokens: int) -> ArmCompute:
        """This arm's spending with its held-out evaluation's completions (each also one verifier call) added."""
        return ArmCompute(
            self.optimizer_steps,
            self.verifier_calls + sequences,
            Count(self.generated.sequences + sequences, self.generated.tokens + tokens),
            Count(self.trained.sequences, self.trained.tokens),
            Count(sequences, tokens),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "optimizer_steps": self.optimizer_steps,
            "verifier_calls": self.verifier_calls,
            "generated": self.generated.to_json(),
            "trained": self.trained.to_json(),
            **({"evaluation": self.evaluation.to_json()} if self.evaluation is not None else {}),
        }
