"""What a run says about its measurements: held-out pass@1 at the stages of the run as `train/eval` params, the
validation curve's log line and schedule, and the run's last line.

The compute-matched SFT baseline (`baseline: sft`) is the same run up to the SFT warm start and its evaluation (same
seed, same weights), after which it continues SFT, with the warm start's recipe, for as many sequences through the
model's forward and backward passes as the RL steps would train on (steps x batch_size x group_size x num_iterations:
TrainConfig.baseline_sequences; RL also spends generation and verification, which the baseline does not get). Its
`after` evaluation is then the figure to compare with an RL run's `after` (run/trainer.py `_sft_baseline`).
"""

from __future__ import annotations

from typing import Any

from ..core.config import TrainConfig
from ..core.protocol import TrainEvalParams
from .evaluate import EvalResult
from .validation import ValidationResult


def eval_params(stage: str, result: EvalResult) -> TrainEvalParams:
    """The `train/eval` notification of one held-out evaluation."""
    params: dict[str, Any] = {
        "stage": stage,
        "split": "test",
        "passAt1": result.pass_at_1,
        "byKind": result.by_kind,
        "tasks": result.tasks,
    }
    if result.by_novelty:
        params["byNovelty"] = {
            group: {"passAt1": scores["pass_at_1"], "tasks": int(scores["tasks"])}
            for group, scores in result.by_novelty.items()
        }
    return params  # type: ignore[return-value]


def validation_due(step: int, total: int, every: int) -> bool:
    """Whether the validation curve gets a point after RL step `step` (0: before the first step)."""
    return every > 0 and (step % every == 0 or step == total)


def validation_line(result: ValidationResult) -> str:
    """The log line of one point of the validation curve."""
    n = result.samples
    return (
        f"validation at step {result.step} ({result.tasks} holes): greedy pass@1 {result.greedy_pass_at_1:.1%}, "
        f"pass@1 {result.pass_at_k['1']:.1%} and pass@{n} {result.pass_at_k[str(n)]:.1%} "
        f"from {n} samples at temperature {result.temperature:g}"
    )


def baseline_line(config: TrainConfig) -> str:
    """What the compute-matched SFT baseline will do instead of RL."""
    return (
        f"compute-matched SFT baseline instead of RL: {config.baseline_sft_steps()} more SFT steps of "
        f"{config.sft_batch_size} ({config.baseline_sequences()} sequences through forward and backward passes, as "
        f"{config.steps} RL steps of {config.batch_size} x {config.group_size}, {config.num_iterations} pass(es) "
        "each, would train on)"
    )


def no_reference_line(tasks: int, sft_steps: int) -> str:
    """Why the SFT warm start is skipped when no training task has a proof to imitate."""
    return (
        f"SFT warm start skipped ({sft_steps} steps asked for): none of the {tasks} training tasks has a proof to "
        "imitate (every task is `reference: false`, as statements from `fim-rlvr import` are); RL starts from the "
        "model as it is"
    )


def held_out_summary(evals: dict[str, Any], holes: int) -> str:
    """The run's last line: held-out pass@1 before, after SFT and after RL, with novel and memorised holes apart."""
    parts = [f"{stage} {evals[stage]['pass_at_1']:.1%}" for stage in ("before", "sft", "after") if stage in evals]
    novelty = (evals.get("after") or {}).get("by_novelty") or {}
    groups = [f"{name} {v['pass_at_1']:.1%} of {int(v['tasks'])}" for name, v in novelty.items()]
    after = f" (after: {', '.join(groups)})" if groups else ""
    return f"held-out pass@1 ({holes} holes): " + ", ".join(parts) + after
