"""What a run says about its measurements: held-out pass@1 at the stages of the run as `train/eval` params, the
validation curve's log line and schedule, what each arm spent, and the run's last line.

The compute-matched baselines start from the RL run's SFT warm start (same seed, same weights: the step-0
checkpoint), either after RL in the same run (`compare`, eval.json `baseline-sft` / `baseline-rft`) or instead of
it (`baseline`, whose `after` evaluation is then the baseline's):
- SFT (`sft`) continues SFT, with the warm start's recipe, for as many sequences through the model's forward and
  backward passes as the RL steps train on (steps x batch_size x group_size x num_iterations:
  TrainConfig.baseline_sequences), on the reference proofs only; it spends no generation or verification, and takes
  more optimiser steps of fewer sequences (sft_batch_size each).
- Data-matched SFT (`sft_data`, step/portfolio.py) does the same on the reference proofs plus the fixed portfolio's
  proofs of the training open goals, checked by the run's verifier (its only verifier calls).
- Expert iteration (`rft`, step/rft.py) spends RL's generation and verification on RL's first draws and takes RL's
  optimiser steps on as many sequences, with the supervised loss on its own verified proofs.
Every stage after training records what it spent (`compute`, step/compute.py: optimiser steps, verifier calls,
sequences and tokens generated, its own evaluation's included, and sequences and tokens trained), so the match is
read off the run, not assumed.
"""

from __future__ import annotations

from typing import Any

from ..core.config import BASELINE_ARMS, TrainConfig
from ..core.protocol import TrainEvalParams
from ..step.compute import ArmCompute, Count
from .evaluate import EvalResult
from .validation import ValidationResult

BASELINE_STAGES = tuple(f"baseline-{arm}" for arm in BASELINE_ARMS)
"""eval.json's keys of the baseline arms run after RL."""


def eval_params(stage: str, result: EvalResult, arm: str | None = None, split: str = "test") -> TrainEvalParams:
    """The `train/eval` notification of one held-out evaluation (`arm`: the baseline a "baseline" stage measures)."""
    params: dict[str, Any] = {
        "stage": stage,
        "split": split,
        "passAt1": result.pass_at_1,
        "byKind": result.by_kind,
        "tasks": result.tasks,
    }
    if arm is not None:
        params["arm"] = arm
    if result.by_novelty:
        params["byNovelty"] = {
            group: {"passAt1": scores["pass_at_1"], "tasks": int(scores["tasks"])}
            for group, scores in result.by_novelty.items()
        }
    if result.by_held_out:
        params["byHeldOut"] = {
            group: {"passAt1": scores["pass_at_1"], "tasks": int(scores["tasks"])}
            for group, scores in result.by_held_out.items()
        }
    return params  # type: ignore[return-value]


def rl_compute(metrics: list[dict[str, Any]], config: TrainConfig) -> ArmCompute:
    """What the RL steps spent, from their metrics.jsonl lines: optimiser steps; completions generated and their
    tokens, and verifier calls (every checked sample, dynamic sampling's refills and repair turns included);
    sequences and tokens trained (the training groups' samples, once per optimiser pass: x num_iterations)."""
    checked = sum(sum(int(n) for n in line.get("verdicts", {}).values()) for line in metrics)
    return ArmCompute(
        optimizer_steps=sum(int(line.get("optimizer_steps", 0)) for line in metrics),
        verifier_calls=checked,
        generated=Count(checked, sum(int(line.get("tokens", 0)) for line in metrics)),
        trained=Count(
            sum(int(line.get("groups_trained", 0)) for line in metrics) * config.group_size * config.num_iterations,
            sum(int(line.get("tokens_trained", 0)) for line in metrics) * config.num_iterations,
        ),
    )


def rl_sequences_per_step(metrics: list[dict[str, Any]]) -> list[int]:
    """The completions each RL step generated and checked (its metrics.jsonl line's verdicts: refills and repair
    turns included), in step order: what expert iteration's steps generate to match (step/rft.py)."""
    by_step = {int(line["step"]): sum(int(n) for n in line.get("verdicts", {}).values()) for line in metrics}
    return [by_step.get(step, 0) for step in range(1, max(by_step, default=0) + 1)]


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
        f"compute-matched SFT baseline: {config.baseline_sft_steps()} more SFT steps of "
        f"{config.sft_batch_size} ({config.baseline_sequences()} sequences through forward and backward passes, as "
        f"{config.steps} RL steps of {config.batch_size} x {config.group_size}, {config.num_iterations} pass(es) "
        "each, would train on)"
    )


def rft_line(config: TrainConfig) -> str:
    """What the compute-matched expert-iteration baseline will do."""
    sequences = config.steps * config.batch_size * config.group_size
    return (
        f"compute-matched expert iteration (RFT): {config.steps} steps of {config.batch_size} x {config.group_size} "
        f"samples ({sequences} generated and checked, as RL's first rounds; more where an RL step generated more, "
        "as DAPO's refills do), each followed by "
        f"{config.num_iterations * config.steps_per_generation} optimiser step(s) of the SFT loss on the run's own "
        f"verified proofs, at RL's learning rate {config.learning_rate:g}"
    )


def arm_line(arm: str, config: TrainConfig) -> str:
    """Said before a baseline arm that runs after RL."""
    names = {"sft": "the SFT baseline", "sft_data": "data-matched SFT (with the portfolio's proofs of the open goals)"}
    name = names.get(arm, "expert iteration (RFT)")
    return f"compute-matched baseline: {name}, from the SFT warm start's weights (checkpoint step-0)"


def no_reference_line(tasks: int, sft_steps: int) -> str:
    """Why the SFT warm start is skipped when no training task has a proof to imitate."""
    return (
        f"SFT warm start skipped ({sft_steps} steps asked for): none of the {tasks} training tasks has a proof to "
        "imitate (every task is `reference: false`, as statements from `fim-rlvr import` are); RL starts from the "
        "model as it is"
    )


def held_out_summary(evals: dict[str, Any], holes: int) -> str:
    """The run's last line: held-out pass@1 before, after SFT and after RL, with novel and memorised holes apart,
    then per held-out set (instances, families) at each stage when the dataset says which task is in which."""
    stages = [stage for stage in ("before", "sft", "after", *BASELINE_STAGES) if stage in evals]
    parts = [f"{stage} {evals[stage]['pass_at_1']:.1%}" for stage in stages]
    novelty = (evals.get("after") or {}).get("by_novelty") or {}
    groups = [f"{name} {v['pass_at_1']:.1%} of {int(v['tasks'])}" for name, v in novelty.items()]
    after = f" (after: {', '.join(groups)})" if groups else ""
    line = f"held-out pass@1 ({holes} holes): " + ", ".join(parts) + after
    sets = [
        s for s in ("instance", "family") if any(s in ((evals[st] or {}).get("by_held_out") or {}) for st in stages)
    ]
    for name in sets:
        scores = [((evals[st] or {}).get("by_held_out") or {}).get(name) for st in stages]
        tasks = next((int(v["tasks"]) for v in scores if v), 0)
        shown = [f"{st} {v['pass_at_1']:.1%}" if v else f"{st} –" for st, v in zip(stages, scores, strict=True)]
        line += f"; held-out {'instances' if name == 'instance' else 'families'} ({tasks} holes): " + ", ".join(shown)
    return line
