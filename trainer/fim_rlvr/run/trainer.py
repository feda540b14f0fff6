"""The training run, top to bottom: evaluate, SFT warm start, evaluate, GRPO-family RL, evaluate.

RL steps are pipelined: while the verifier checks step k's completions, the trainer already samples step k+1's (with
the weights before step k's update; the old log-probs recorded at generation time keep the importance ratio right).
A check that the infrastructure lost costs its sample (masked out), never the run. Checkpoints hold everything needed
to continue exactly, including the already-sampled next batch, so a stopped-and-resumed run writes the same metrics as
an uninterrupted one.

One RL step (`_rl`), each piece a function of explicit inputs in step/:
    sample_groups (step/sample.py)         prompts -> G completions per task -> cleaned candidates
    send / StepRecord.collect              the candidates checked through the run's verifier service
    with_repairs (step/repair_turns.py)    failed samples prompted again with Lean's messages (repair_turns)
    optimise (step/optimise.py)            score -> loss per micro-batch -> backward -> clip -> AdamW step
    metrics_line (step/metrics.py)         the metrics.jsonl line; then train/sample and train/progress
"""

from __future__ import annotations

import threading
import time
import traceback
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Protocol

import torch

from .. import __version__
from ..algorithms import make
from ..algorithms.sampling import refill
from ..core.config import UNSET_MEANINGS, TrainConfig, defaults_line, report_targets
from ..core.errors import TrainerError, UserError
from ..core.protocol import (
    TRAIN_CHECKPOINT,
    TRAIN_DONE,
    TRAIN_EVAL,
    TRAIN_LOG,
    TRAIN_PROGRESS,
    TRAIN_SAMPLE,
    InitializeResult,
    StopResult,
    VerifierIdentity,
)
from ..model import adapters, checkpoint, describe
from ..model.policy import load_reference, pick_device
from ..model.runtime import configure_threads, quiet_libraries
from ..model.vllm_backend import make_backend
from ..step.batch import Batch, StepRecord
from ..step.compute import ArmCompute, Count
from ..step.loss import LossModels
from ..step.metrics import ClipWarning, metrics_line
from ..step.optimise import make_optimizer, optimise
from ..step.portfolio import PortfolioProofs, data_matched_tasks, portfolio_line, portfolio_proofs
from ..step.repair_turns import with_repairs
from ..step.rft import run_rft
from ..step.sample import Sampling, sample_groups
from ..step.sft import SftFit, warm_start
from ..tasks.curriculum import Curriculum, TaskSampler
from ..tasks.data import Task, by_kind, load_tasks, require_tasks, select
from ..tasks.prompts import style_for
from ..verifier.check import Budget, PendingCheck, Stopped, Verifier, send, silence_bound_s
from . import distributed
from .evaluate import SampledPassAtK, eval_subset, pass_at_1
from .files import RankRunFiles, RunFiles
from .measure import (
    arm_line,
    baseline_line,
    eval_params,
    held_out_summary,
    no_reference_line,
    rft_line,
    rl_compute,
    rl_sequences_per_step,
    validation_due,
    validation_line,
)
from .reporting import Reports, open_reports
from .validation import validate

__all__ = ["Events", "Trainer", "TrainerError"]


PROGRESS_EVERY_S = 10.0
"""A long phase (the SFT warm start) says where it is at least this often, so a run is never silent for minutes."""


def progress_due(step: int, steps: int, since_last_s: float, every_s: float = PROGRESS_EVERY_S) -> bool:
    """Whether step `step` of `steps` gets a progress line: the first and the last, and any step `every_s` or more
    after the previous line."""
    return step == 1 or step == steps or since_last_s >= every_s


class Events(Protocol):
    """Where the trainer's notifications go (the host connection, or a test's recorder)."""

    def emit(self, method: str, params: Any) -> None: ...


class Trainer:
    """One training run in one run folder."""

    def __init__(
        self,
        config: TrainConfig,
        dataset_dir: str | Path,
        run_dir: str | Path,
        *,
        resume: bool,
        verifier: Verifier,
        events: Events,
        verifier_identity: VerifierIdentity | None = None,
        verifier_budget: Budget | None = None,
    ) -> None:
        self.config = config
        self.dataset_dir = Path(dataset_dir)
        self.run_dir = Path(run_dir)
        self.resume = resume
        self.verifier = verifier
        self.events = events
        self.verifier_identity = verifier_identity
        self.verifier_budget = verifier_budget
        self.verify_silence_s = silence_bound_s(verifier_budget, config.verify_timeout_s)
        """How long any batch may wait without progress of the verifier before it counts as unanswered."""
        self.ranks = distributed.current()
        self.files: RunFiles = RunFiles(run_dir)
        if not self.ranks.is_main:  # only rank 0 reports and writes the run's files; the others' go nowhere
            self.events = distributed.NullEvents(self.ranks.rank)
            # Held in memory, not in a scratch folder: a rank ends by os._exit or by its launcher's SIGKILL,
            # where no exit hook runs, and a folder would be left in the temp folder every time.
            self.files = RankRunFiles()
        self.stop_event = threading.Event()
        self._collect_stop = self.stop_event if not self.ranks.distributed else threading.Event()
        self._portfolio_found: PortfolioProofs | None = None
        """What a wait for verdicts watches: ranks stop together at a step boundary, never one alone mid-step."""
        self._stop_answers: list[Future[StopResult]] = []
        self._finished = threading.Event()
        self._stop_lock = threading.Lock()
        self.step = 0
        self.last_checkpoint: str | None = None
        self.resumed_from: int | None = None
        self.reports = Reports()
        self.arm_compute: dict[str, ArmCompute] = {}

    # ----------------------------------------------------------------------------------------------- set-up

    def prepare(self) -> InitializeResult:
        """Load the dataset and the model, restore a checkpoint when resuming. Raises TrainerError."""
        config = self.config
        torch.use_deterministic_algorithms(True, warn_only=True)
        configure_threads()
        quiet_libraries()
        try:
            tasks = load_tasks(self.dataset_dir)
            require_tasks(tasks, config.kinds, self.dataset_dir)
            self.algorithm = make(config.algorithm, config.resolved_algo_config())
            device = self.ranks.device(pick_device(config.device, config.model is not None))
            latest = checkpoint.latest(self.run_dir) if self.resume else None
            if self.resume and latest is None:
                self.log("info", f"--resume: no checkpoint in {self.run_dir / 'checkpoints'}; starting a fresh run")
            self.plan = adapters.resolve(config, device)
            self.policy = adapters.load_policy(config, self.plan, device, self.dataset_dir, tasks, latest)
            self.policy.style = style_for(config, self.policy.tokenizer)
            if self.ranks.is_main:
                self.reports = open_reports(report_targets(config), self.run_dir, config.to_json())
        except UserError as error:  # a bad dataset, model, prompt option, algorithm option or report target
            raise TrainerError(str(error)) from error
        self.train_tasks = select(tasks, "train", config.kinds)
        self.test_tasks = eval_subset(select(tasks, config.eval_split, config.kinds), config.eval_limit, config.seed)
        self.validation_tasks = eval_subset(select(tasks, "validation", config.kinds), config.eval_limit, config.seed)
        self.tasks_by_id = {t.id: t for t in tasks}
        self.show_goal = config.goal_in_prompt if config.goal_in_prompt is not None else any(t.goal for t in tasks)
        self.curriculum = Curriculum(list(by_kind(self.train_tasks)), enabled=config.staged_curriculum())
        self.sampler = TaskSampler(
            by_kind(self.train_tasks),
            self.ranks.seed(config.seed),
            by_learnability=config.task_sampling == "learnability",
        )
        try:
            self.backend = make_backend(config, self.policy, self.log)
        except UserError as error:
            raise TrainerError(str(error)) from error
        self.optimizer: torch.optim.Optimizer | None = None
        self.train_model: Any = self.policy.model  # what the loss runs through: DDP's wrapper under accelerate
        self.ref_model: Any = None
        self.pending_restored: Batch | None = None
        self.boundary: dict[str, Any] = {}
        self.clip_warning = ClipWarning()
        if latest is not None:
            self._restore(latest)
        return {
            "trainer": f"fim_rlvr {__version__}",
            "device": self.policy.device_label,
            "resumedFromStep": self.resumed_from,
            "totalSteps": config.steps,
        }

    def _restore(self, folder: Path) -> None:
        state = checkpoint.load_state(folder)
        self.step = self.resumed_from = int(state["step"])
        self.files.truncate_to(state)
        own = self.ranks.own_state(state, self.log)
        self.sampler.load_state(own["sampler"] if own else state["sampler"])
        self.curriculum.load_state(state["curriculum"])
        self._make_optimizer()
        optimizer_state = checkpoint.load_tensors(folder, "optimizer.pt")
        if optimizer_state is not None and self.optimizer is not None:
            self.optimizer.load_state_dict(optimizer_state)
        if (folder / "ref_model").is_dir():
            self.ref_model = load_reference(folder / "ref_model", self.policy)
        elif self.algorithm.needs_reference:
            self._make_reference()
        rng = checkpoint.load_tensors(folder, "rng.pt")
        if rng is not None:
            checkpoint.restore_rng(rng)
        pending = checkpoint.load_tensors(folder, "pending.pt") if self.ranks.is_main else own and own["pending"]
        self.pending_restored = Batch.from_json(pending, self.tasks_by_id) if pending else None
        self.last_checkpoint = str(folder)
        self.log("info", f"resumed from {folder} (step {self.step})")

    def _make_optimizer(self) -> None:
        self.optimizer = make_optimizer(adapters.trainable_parameters(self.policy.model), self.config)
        self.train_model, self.optimizer = self.ranks.prepare(self.policy.model, self.optimizer)

    def _make_reference(self) -> None:
        self.ref_model = adapters.frozen_reference(self.policy.model, self.policy.compute_dtype)

    # ----------------------------------------------------------------------------------------------- the run

    def run(self) -> None:
        """The whole job. Never raises: failures end in train/done {status: failed}."""
        try:
            status, message = self._run()
        except Exception as error:
            self.log("error", "".join(traceback.format_exception(error)))
            status, message = "failed", f"the trainer failed: {error}. The run can continue with --resume."
        self._finish(status, message)

    def _run(self) -> tuple[str, str]:
        config = self.config
        evals = self.files.read_evals() if self.resumed_from is not None else {}
        evals.pop("after", None)
        parameters = sum(p.numel() for p in self.policy.model.parameters())
        self.log(
            "info",
            f"{'embedded tiny model' if self.policy.embedded else self.config.model}: {parameters:,} parameters, "
            f"{len(self.policy.tokenizer):,}-token vocabulary, {self.policy.style.name} prompts, "
            f"{self.policy.device_label}; {len(self.train_tasks)} train / {len(self.test_tasks)} held-out holes",
        )
        self.log("info", f"training: {describe.training(self.policy.model, self.plan)}")
        self.log("info", defaults_line(config))
        try:
            if self.resumed_from is None:
                self.files.reset()
                self.files.write_config(
                    {
                        **config.to_json(),
                        "algo_config_resolved": self.algorithm.config.to_dict(),
                        "verifier": self.verifier_identity,
                        "prompt_style_resolved": self.policy.style.name,
                        "resolved": self._resolved_defaults(),
                    }
                )
                evals["before"] = self._evaluate("before")
                self.files.write_evals(evals)
                sft_steps = config.resolved_sft_steps()
                if sft_steps > 0 and self.train_tasks and not any(t.reference for t in self.train_tasks):
                    self.log("warning", no_reference_line(len(self.train_tasks), sft_steps))
                elif sft_steps > 0 and self.train_tasks:
                    self.sft(sft_steps, tasks=self._warm_start_tasks())
                    if self.stop_event.is_set():
                        return "stopped", "stopped during the SFT warm start (no checkpoint yet)"
                    evals["sft"] = self._evaluate("sft")
                    self.files.write_evals(evals)
                self._make_optimizer()
                if self.algorithm.needs_reference:
                    self._make_reference()
                self._snapshot_boundary()
                self._validate(0)
                if config.baseline is not None:
                    compute = self._arm(config.baseline)
                    if compute is None:
                        return (
                            "stopped",
                            f"stopped during the {config.baseline} baseline (no checkpoint after the warm start)",
                        )
                    self.arm_compute[config.baseline] = compute
                    self.step = config.steps  # the baseline stands in for the RL steps
                    self._validate(self.step)
                self._checkpoint(self.step, pending=None)
            stopped = self._rl()
            if stopped:
                return "stopped", f"stopped at step {self.step}; continue with --resume"
            evals["after"] = self._evaluate("after", spent=self._after_compute())
            self.files.write_evals(evals)
            for arm in self._arms_to_run(evals):
                self.log("info", arm_line(arm, config))
                self._restore_warm_start()
                compute = self._arm(arm)
                if compute is None:
                    return "stopped", f"stopped during the {arm} baseline; continue with --resume (it starts again)"
                evals[f"baseline-{arm}"] = self._evaluate("baseline", arm, spent=compute)
                self.files.write_evals(evals)
        except Stopped:
            return "stopped", f"stopped at step {self.step}; continue with --resume"
        return "completed", held_out_summary(evals, len(self.test_tasks))

    def _resolved_defaults(self) -> dict[str, Any]:
        """What each option left at None ("the trainer decides") became in this run, for report.html's configuration
        table: the value, or what None means here in words."""
        config, plan = self.config, self.plan
        lora = plan.lora_r is not None
        return {
            "model": config.model or "the embedded tiny model",
            "sft_steps": config.resolved_sft_steps(),
            "eval_limit": f"all {len(self.test_tasks)} {config.eval_split} tasks"
            if config.eval_limit is None
            else config.eval_limit,
            "goal_in_prompt": self.show_goal,
            "lora_r": plan.lora_r if lora else "none: full fine-tuning",
            "lora_alpha": plan.lora_alpha if lora else "none: full fine-tuning",
            "lora_targets": plan.lora_targets if lora else "none: full fine-tuning",
            "bf16": plan.compute_dtype == torch.bfloat16 or plan.dtype == torch.bfloat16,
            "unsloth": plan.unsloth,
            "vllm_server_url": config.vllm_server_url or "none",
            "baseline": config.baseline or "none: RL",
            "prompt_template": config.prompt_template or f"the built-in {self.policy.style.name} layout",
            "micro_batch_size": config.micro_batch_size or UNSET_MEANINGS["micro_batch_size"],
            "algo_config_resolved": self.algorithm.config.unset_meanings(),
        }

    def sft(self, steps: int, seed: int | None = None, tasks: list[Task] | None = None) -> SftFit:
        """SFT on the train split's middles (the warm start; the baseline's continuation with another seed), or on
        `tasks` (the data-matched arm's); returns what it trained on."""
        started = time.perf_counter()
        last_said = [started]
        what = "the training proofs" if tasks is None else f"the data-matched set ({len(tasks)} proofs)"
        self.log("info", f"SFT: {steps} steps on {what} (batch {self.config.sft_batch_size})")

        def progress(step: int, loss: float) -> None:
            now = time.perf_counter()
            if progress_due(step, steps, now - last_said[0]):
                last_said[0] = now
                self.log("info", f"SFT step {step}/{steps}: loss {loss:.3f} ({now - started:.0f} s)")

        fitted = warm_start(
            self.policy,
            self.train_tasks if tasks is None else tasks,
            steps=steps,
            batch_size=self.config.sft_batch_size,
            learning_rate=self.config.sft_learning_rate,
            seed=self.config.seed if seed is None else seed,
            show_goal=self.show_goal,
            budget=self.config.max_prompt_tokens,
            stop=self.stop_event,
            max_grad_norm=self.config.max_grad_norm,
            on_progress=progress,
        )
        self.log("info", f"SFT: {steps} steps in {time.perf_counter() - started:.1f} s")
        self.backend.sync_weights(self.policy.model)  # a vLLM engine samples from the warm-started weights
        return fitted

    def _warm_start_tasks(self) -> list[Task] | None:
        """The warm start's SFT data: None for the train split's reference proofs; with `warm_start_data: portfolio`,
        those and the fixed portfolio's verified proofs of the training open goals (the data-matched arm's set, so
        that RL and every compared arm start from what a fixed prover knows)."""
        if self.config.warm_start_data != "portfolio":
            return None
        found = self._portfolio_proofs()
        self.log("info", portfolio_line(found, sum(t.reference for t in self.train_tasks), "warm start"))
        return data_matched_tasks(self.train_tasks, found)

    def _portfolio_proofs(self) -> PortfolioProofs:
        """The fixed portfolio's verified proofs of the training open goals, checked once per process: a portfolio
        warm start and the data-matched arm train on the same set (the arm still counts the checks as its own)."""
        if self._portfolio_found is None:
            self._portfolio_found = portfolio_proofs(
                self.train_tasks,
                self.config.portfolio,
                self.verifier,
                silence_s=self.verify_silence_s,
                stop=self._collect_stop,
            )
        return self._portfolio_found

    def _rl(self) -> bool:
        """RL steps from self.step to config.steps; returns True when stopped."""
        config, total = self.config, self.config.steps
        if self.step >= total:
            return False
        pending = self.pending_restored or self._sample(self.step + 1)
        self.pending_restored = None
        self._snapshot_boundary()  # the sampler now stands after the first batch's draw
        check = send(self.verifier, pending.items())
        while self.step < total:
            step = self.step + 1
            current, current_check = pending, check
            if step < total:  # sample the next step while the verifier checks this one (the overlap)
                pending = self._sample(step + 1)
                check = send(self.verifier, pending.items())
            try:
                record = self._checked(current, current_check, step, round_=0)
                if self.algorithm.config.dynamic_sampling:
                    record = self._refill(record, step)
            except Stopped:
                self._checkpoint(self.step, pending=current)
                return True
            if self.ranks.distributed:  # every rank's checked groups for reports and curriculum; its own to train on
                record = record.with_training_groups(record.groups, self.ranks.gather_flat(record.all_groups))
            assert self.optimizer is not None
            result = optimise(
                record.groups,
                step=step,
                algorithm=self.algorithm,
                models=self._loss_models(),
                optimizer=self.optimizer,
                config=config,
                ranks=self.ranks,
                device=self.policy.device,
            )
            self.backend.sync_weights(self.policy.model)  # vLLM samples step + 2 with the weights just updated
            self.step = step
            line = metrics_line(record, step, result, config.timeout_reward)
            warning = self.clip_warning.check(self.algorithm, line["clip_fraction"], step)
            if warning is not None:
                self.log("warning", warning)
            self._record(record, line)
            self._snapshot_boundary()
            if validation_due(step, total, config.validation_every):
                self._validate(step)
            last = step == total
            stop = self.ranks.broadcast(self.stop_event.is_set())  # rank 0's stop request reaches every rank here
            if step % config.checkpoint_every == 0 or last or stop:
                self._checkpoint(step, pending=None if last else pending)
            if stop and not last:
                return True
        return False

    def _sampling(self) -> Sampling:
        """How this rank turns tasks into candidates now (the policy, the backend and the run's sampling settings)."""
        seed = self.ranks.seed(self.config.seed)
        return Sampling.of(self.config, self.policy, self.backend, show_goal=self.show_goal, seed=seed)

    def _sample(self, step: int, groups: int | None = None, round_: int = 0) -> Batch:
        tasks = self.sampler.draw(groups or self.config.batch_size, self.curriculum.weights())
        return sample_groups(self._sampling(), tasks, self.config.group_size, step, round_)

    def _checked(self, batch: Batch, check: PendingCheck, step: int, round_: int) -> StepRecord:
        """The batch with its verdicts, and its failed samples' repair turns (repair_turns). Raises Stopped."""
        stop, silence = self._collect_stop, self.verify_silence_s
        record = StepRecord.collect(batch, check, self.verifier, silence, stop)
        return with_repairs(
            record,
            self._sampling(),
            self.verifier,
            turns=self.config.repair_turns,
            timeout_reward=self.config.timeout_reward,
            step=step,
            round_=round_,
            silence_s=silence,
            stop=stop,
        )

    def _refill(self, record: StepRecord, step: int) -> StepRecord:
        """DAPO's dynamic sampling: drop groups whose rewards are all equal and sample more, a bounded number of
        rounds; the step then trains on the informative groups it has."""
        target = self.config.batch_size
        rewards_of = lambda g: g.rewards(self.config.timeout_reward, self.config.repair_discount)  # noqa: E731
        outcome = refill([], record.groups, rewards_of, target)
        rounds = 1
        all_groups = list(record.groups)
        while not outcome.full and rounds < self.algorithm.config.max_sampling_rounds:
            extra = self._sample(step, groups=outcome.missing, round_=rounds)
            extra_record = self._checked(extra, send(self.verifier, extra.items()), step, round_=rounds)
            all_groups.extend(extra_record.groups)
            record = record.merged(extra_record)
            outcome = refill(outcome.batch, extra_record.groups, rewards_of, target)
            rounds += 1
        return record.with_training_groups(list(outcome.batch), all_groups)

    def _loss_models(self) -> LossModels:
        """What the loss runs through now (the DDP wrapper, the policy's model, the KL reference)."""
        temperature = self.config.temperature if self.config.temperature > 0 else 1.0
        models = (self.train_model, self.policy.model, self.ref_model)
        return LossModels(*models, self.backend.pad_id, temperature, self.policy.compute_dtype)

    # ----------------------------------------------------------------------------------------------- measurements

    def _evaluate(self, stage: str, arm: str | None = None, spent: ArmCompute | None = None) -> dict[str, Any]:
        """Held-out pass@1 (greedy, the test split; pass@k too with eval_samples) now; emitted as train/eval and
        returned for eval.json. `arm`: which baseline a "baseline" stage measures; `spent`: what the arm's training
        spent, recorded as the stage's `compute` with this evaluation's generation added."""
        if not self.ranks.is_main:  # rank 0 measures; the others wait for it at the next collective
            return {"pass_at_1": 0.0, "by_kind": {}, "tasks": 0}
        config = self.config
        sampled = (
            SampledPassAtK(config.eval_samples, config.temperature, config.top_p, config.seed * 7_919 + 1)
            if config.eval_samples > 0
            else None
        )
        result = pass_at_1(
            self.policy,
            self.backend,
            self.verifier,
            self.test_tasks,
            max_new_tokens=self.config.max_new_tokens,
            show_goal=self.show_goal,
            budget=self.config.max_prompt_tokens,
            silence_s=self.verify_silence_s,
            stop=self.stop_event,
            sampled=sampled,
        )
        self.events.emit(TRAIN_EVAL, eval_params(stage, result, arm, config.eval_split))
        if result.masked:
            self.log("warning", f"eval {stage}: {result.masked} checks failed outside the model's control (not proved)")
        out = result.to_json()
        if spent is not None:
            out["compute"] = spent.with_evaluation(result.generated_sequences, result.generated_tokens).to_json()
        return out

    def _validate(self, step: int) -> None:
        """One point of the validation curve (validation.jsonl, and a log line), when the run has a validation split."""
        config = self.config
        if not self.ranks.is_main or not self.validation_tasks or config.validation_every == 0:
            return
        result = validate(
            self.policy,
            self.backend,
            self.verifier,
            self.validation_tasks,
            step=step,
            samples=config.validation_samples,
            temperature=config.temperature,
            top_p=config.top_p,
            seed=config.seed * 7_919 + step,
            max_new_tokens=config.max_new_tokens,
            show_goal=self.show_goal,
            budget=config.max_prompt_tokens,
            silence_s=self.verify_silence_s,
            stop=self.stop_event,
        )
        self.files.append_validation(result.to_json())
        self.log("info", validation_line(result))

    def _arm(self, arm: str) -> ArmCompute | None:
        """One compute-matched baseline arm from the policy as it stands (the warm start): "sft" continues SFT for the
        sequences RL trains on (measure.py), "sft_data" does the same on the reference proofs and the portfolio's
        verified proofs of the open goals (step/portfolio.py), "rft" is expert iteration with RL's generation and
        verification (step/rft.py). Returns what it spent, or None when stopped on the way (an arm is never
        checkpointed: it starts again from the warm start)."""
        config = self.config
        if arm in ("sft", "sft_data"):
            tasks, checks = None, 0
            if arm == "sft_data":
                found = self._portfolio_proofs()
                tasks, checks = data_matched_tasks(self.train_tasks, found), found.checks
                self.log("info", portfolio_line(found, sum(t.reference for t in self.train_tasks), "data-matched SFT"))
            self.log("info", baseline_line(config))
            fitted = self.sft(config.baseline_sft_steps(), seed=config.seed + 1, tasks=tasks)
            if self.stop_event.is_set():
                return None
            return ArmCompute(
                optimizer_steps=len(fitted.losses),
                verifier_calls=checks,
                trained=Count(fitted.sequences, fitted.tokens),
            )
        self.log("info", rft_line(config))
        result = run_rft(
            self._sampling(),
            self.train_tasks,
            self.verifier,
            config,
            seed=self.ranks.seed(config.seed),
            silence_s=self.verify_silence_s,
            stop=self._collect_stop,
            log=lambda message: self.log("info", message),
            sequences_per_step=rl_sequences_per_step(self.files.read_metrics()),
        )
        return result.compute if result.completed else None

    def _arms_to_run(self, evals: dict[str, Any]) -> list[str]:
        """The baseline arms still to run after RL (a resumed run skips those already evaluated); none with several
        ranks (an arm runs in one process; say so)."""
        arms = [arm for arm in self.config.arms() if f"baseline-{arm}" not in evals]
        if arms and self.ranks.distributed:
            self.log("warning", f"the compute-matched baseline(s) {', '.join(arms)} run in one process only: skipped")
            return []
        return arms

    def _restore_warm_start(self) -> None:
        """The policy's weights back to the SFT warm start's (the step-0 checkpoint), for a baseline arm after RL."""
        folder = checkpoint.checkpoints_dir(self.run_dir) / "step-0"
        if not (folder / "state.json").is_file():
            raise TrainerError(
                f"the baseline arms start from the warm start's checkpoint, and {folder} is missing; run again in a "
                "fresh run folder"
            )
        warm = adapters.load_policy(self.config, self.plan, self.policy.device, self.dataset_dir, [], folder)
        self.policy.model.load_state_dict(warm.model.state_dict())
        self.backend.sync_weights(self.policy.model)

    def _after_compute(self) -> ArmCompute:
        """What the `after` stage's training spent: the RL steps' (from metrics.jsonl), or the baseline's."""
        if self.config.baseline is not None:
            return self.arm_compute.get(self.config.baseline, ArmCompute())
        return rl_compute(self.files.read_metrics(), self.config)

    def _record(self, record: StepRecord, metrics: dict[str, Any]) -> None:
        if self.ranks.is_main:  # the other ranks' records reached rank 0 in _rl (gather_flat)
            self.files.append_metrics(metrics)
            self.reports.log(metrics)
            self.files.append_samples(record.sample_lines(self.step))
        for group in record.all_groups:
            for candidate, verdict, turn in zip(group.candidates, group.verdicts, group.sample_turns(), strict=True):
                params: dict[str, Any] = {
                    "taskId": group.task.id,
                    "file": group.task.file,
                    "hole": group.task.hole,
                    "kind": group.task.kind,
                    "candidate": candidate,
                    "verdict": verdict.kind,
                    "reward": verdict.reward,
                    "step": self.step,
                    "algorithm": self.config.algorithm,
                }
                if verdict.diagnostics:
                    params["diagnostics"] = list(verdict.diagnostics)
                if verdict.cause is not None:
                    params["cause"] = verdict.cause
                if turn:
                    params["turn"] = turn
                self.events.emit(TRAIN_SAMPLE, params)
        self.sampler.observe(record.file_results(self.config.timeout_reward))
        unlocked = self.curriculum.update(record.kind_results(self.config.timeout_reward))
        if unlocked:
            self.log(
                "info",
                f"curriculum: step {self.step} unlocks {unlocked} holes "
                f"(pass rates {', '.join(f'{k} {v:.2f}' for k, v in self.curriculum.rates.items())})",
            )
        numbers: dict[str, float] = {
            k: float(v) for k, v in metrics.items() if isinstance(v, (int, float)) and k != "step"
        }
        numbers.update({f"pass_rate/{k}": float(v) for k, v in metrics["pass_rate_by_kind"].items()})
        self.events.emit(TRAIN_PROGRESS, {"step": self.step, "totalSteps": self.config.steps, "metrics": numbers})

    # ----------------------------------------------------------------------------------------------- checkpoints

    def _snapshot_boundary(self) -> None:
        """The sampler and curriculum as they stand between two steps (what a checkpoint of that step holds)."""
        self.boundary = {"sampler": self.sampler.state(), "curriculum": self.curriculum.state()}

    def _checkpoint(self, step: int, pending: Batch | None) -> None:
        # Every rank's own sampler and next batch, kept by rank 0 so that each rank resumes where it stood.
        ranks = self.ranks.all_gather(
            {"sampler": self.boundary.get("sampler"), "pending": pending.to_json() if pending is not None else None}
        )
        if not self.ranks.is_main:
            return
        self.files.sync()
        state = {
            **self.boundary,
            **({"ranks": [{**ranks[0], "pending": None}, *ranks[1:]]} if len(ranks) > 1 else {}),
            **self.files.line_counts(),
            "embedded": self.policy.embedded,
            "algorithm": self.config.algorithm,
            "lora": adapters.is_lora(self.policy.model),
            "base_model": self.policy.base_path,
        }
        folder = checkpoint.save(
            self.run_dir,
            step,
            model=self.policy.model,
            tokenizer=self.policy.tokenizer,
            optimizer=self.optimizer,
            state=state,
            pending=pending.to_json() if pending is not None else None,
            ref_model=self.ref_model,
            save_base_model=adapters.base_needs_saving(self.policy),
        )
        self.last_checkpoint = str(folder)
        self.events.emit(TRAIN_CHECKPOINT, {"path": str(folder), "step": step})

    # ----------------------------------------------------------------------------------------------- stop, end

    def request_stop(self) -> Future[StopResult]:
        """Ask the run to stop; the future resolves once the checkpoint is written."""
        answer: Future[StopResult] = Future()
        with self._stop_lock:
            if self._finished.is_set():
                answer.set_result({"checkpoint": self.last_checkpoint, "step": self.step})
                return answer
            self._stop_answers.append(answer)
            self.stop_event.set()
        return answer

    def _finish(self, status: str, message: str) -> None:
        with self._stop_lock:
            self._finished.set()
            answers, self._stop_answers = self._stop_answers, []
        self.reports.close()
        for answer in answers:
            if not answer.done():
                answer.set_result({"checkpoint": self.last_checkpoint, "step": self.step})
        self.events.emit(TRAIN_DONE, {"status": status, "step": self.step, "message": message})

    def log(self, level: str, message: str) -> None:
        self.events.emit(TRAIN_LOG, {"level": level, "message": message})
