"""What a run measures about its model: held-out pass@1 at the stages of the run (per hole kind, and novel against
memorised holes), the validation curve every `validation_every` steps, and the compute-matched SFT baseline that
an RL run must beat for its RL to have added anything.

The baseline (`baseline: sft`) is the same run up to the SFT warm start and its evaluation (same seed, same
weights), after which it continues SFT, with the warm start's recipe, for as many sequences through the model's
forward and backward passes as the RL steps would train on (steps x batch_size x group_size x num_iterations:
TrainConfig.baseline_sequences; RL also spends generation and verification, which the baseline does not get).
Its `after` evaluation is then the figure to compare with an RL run's `after`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.protocol import TRAIN_EVAL
from .evaluate import EvalResult, pass_at_1
from .validation import validate

if TYPE_CHECKING:
    from .trainer import Trainer


def evaluate_stage(trainer: Trainer, stage: str) -> dict[str, Any]:
    """Held-out pass@1 (greedy, the test split) now; emitted as train/eval and returned for eval.json."""
    if not trainer.ranks.is_main:  # rank 0 measures; the others wait for it at the next collective
        return {"pass_at_1": 0.0, "by_kind": {}, "tasks": 0}
    config = trainer.config
    result: EvalResult = pass_at_1(
        trainer.policy,
        trainer.backend,
        trainer.verifier,
        trainer.test_tasks,
        max_new_tokens=config.max_new_tokens,
        show_goal=trainer.show_goal,
        budget=config.max_prompt_tokens,
        silence_s=trainer.verify_silence_s,
        stop=trainer.stop_event,
    )
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
    trainer.events.emit(TRAIN_EVAL, params)
    if result.masked:
        trainer.log("warning", f"eval {stage}: {result.masked} checks failed outside the model's control (not proved)")
    return result.to_json()


def validation_due(step: int, total: int, every: int) -> bool:
    """Whether the validation curve gets a point after RL step `step` (0: before the first step)."""
    return every > 0 and (step % every == 0 or step == total)


def validate_step(trainer: Trainer, step: int) -> None:
    """One point of the validation curve (validation.jsonl, and a log line), when the run has a validation split."""
    config = trainer.config
    if not trainer.ranks.is_main or not trainer.validation_tasks or config.validation_every == 0:
        return
    result = validate(
        trainer.policy,
        trainer.backend,
        trainer.verifier,
        trainer.validation_tasks,
        step=step,
        samples=config.validation_samples,
        temperature=config.temperature,
        top_p=config.top_p,
        seed=config.seed * 7_919 + step,
        max_new_tokens=config.max_new_tokens,
        show_goal=trainer.show_goal,
        budget=config.max_prompt_tokens,
        silence_s=trainer.verify_silence_s,
        stop=trainer.stop_event,
    )
    trainer.files.append_validation(result.to_json())
    n = result.samples
    trainer.log(
        "info",
        f"validation at step {step} ({result.tasks} holes): greedy pass@1 {result.greedy_pass_at_1:.1%}, "
        f"pass@1 {result.pass_at_k['1']:.1%} and pass@{n} {result.pass_at_k[str(n)]:.1%} "
        f"from {n} samples at temperature {result.temperature:g}",
    )


def sft_baseline(trainer: Trainer) -> bool:
    """Continue SFT for the compute of the RL steps instead of RL; the run then stands at its last step. Returns False
    when stopped on the way (no checkpoint: the baseline starts again)."""
    config = trainer.config
    extra = config.baseline_sft_steps()
    sequences = config.baseline_sequences()
    trainer.log(
        "info",
        f"compute-matched SFT baseline instead of RL: {extra} more SFT steps of {config.sft_batch_size} "
        f"({sequences} sequences through forward and backward passes, as {config.steps} RL steps of "
        f"{config.batch_size} x {config.group_size}, {config.num_iterations} pass(es) each, would train on)",
    )
    trainer.sft(extra, seed=config.seed + 1)
    if trainer.stop_event.is_set():
        return False
    trainer.step = config.steps
    return True


def held_out_summary(evals: dict[str, Any], holes: int) -> str:
    """The run's last line: held-out pass@1 before, after SFT and after RL, with novel and memorised holes apart."""
    parts = [f"{stage} {evals[stage]['pass_at_1']:.1%}" for stage in ("before", "sft", "after") if stage in evals]
    novelty = (evals.get("after") or {}).get("by_novelty") or {}
    groups = [f"{name} {v['pass_at_1']:.1%} of {int(v['tasks'])}" for name, v in novelty.items()]
    after = f" (after: {', '.join(groups)})" if groups else ""
    return f"held-out pass@1 ({holes} holes): " + ", ".join(parts) + after
