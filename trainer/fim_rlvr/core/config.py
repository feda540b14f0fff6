"""TrainConfig: every option of a training run, with its default and why.

The same snake_case keys travel in `initialize.config` and in a user's `--config FILE` (YAML or JSON).
An unknown key is an error that lists the valid ones. Some defaults depend on what is trained (PRESETS): the embedded
tiny model, full fine-tuning of a model path, or LoRA on one; `from_dict` fills every key the user leaves out from the
preset of the run, and the run prints them at start (`defaults_line`).
"""

from __future__ import annotations

import dataclasses
import json
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UserError
from .outcomes import TIMEOUT_REWARDS
from .protocol import ALGORITHM_NAMES, HOLE_KINDS

TASK_SAMPLINGS = ("kind", "learnability")
WARM_START_DATA = ("reference", "portfolio")
"""TrainConfig.task_sampling's values (fim_rlvr.tasks.curriculum.TaskSampler)."""

EMBEDDED_GRPO_BETA = 0.0
"""GRPO's KL weight on the embedded tiny model (the paper's 0.04 stays the default for a model path): none, so no
reference model is kept. Chosen on lean-env's validation split against the compute-matched arms (3 seeds each;
docs/BENCHMARKS.md, "bench:seeds"): beta 0 beat the SFT arm by 11.4 points and tied expert iteration, where the
earlier 0.2 (chosen on the old declaration split for keeping RL near its warm start) beat SFT by 10.5; on the test
split, 6 seeds, beta 0 beat SFT on every seed (+13.2 points) where 0.2 won on 5 of 6 (+6.4)."""


@dataclass(frozen=True)
class Preset:
    """The defaults of the options that depend on what is trained."""

    what: str
    """What is trained, in words."""
    values: Mapping[str, Any]
    """TrainConfig keys and their defaults."""
    algo: Mapping[str, Mapping[str, Any]]
    """Per algorithm, AlgorithmConfig defaults that differ from the paper's."""
    source: str
    """Where the values come from."""


REAL_MODEL_SOURCE = (
    "DeepSeek-Prover-V1.5's RL (arXiv 2408.08152, section 2.3: proofs of up to 2,048 tokens, a 4,096-token context; "
    "its sampling: temperature 1), TRL's GRPOConfig (learning_rate 1e-6, per-device batch 8) and SFTConfig "
    "(learning_rate 2e-5)"
)
PRESETS: dict[str, Preset] = {
    "embedded": Preset(
        "the embedded tiny model",
        {
            "learning_rate": 1e-4,
            "sft_learning_rate": 3e-3,
            "max_new_tokens": 48,
            "temperature": 0.4,
            "max_prompt_tokens": 256,
            "micro_batch_size": None,
            "compare": ["sft"],
        },
        {"grpo": {"beta": EMBEDDED_GRPO_BETA}},
        'lean-env tuning of the ~1M-parameter model (trainer/README.md, "The embedded model")',
    ),
    "full": Preset(
        "full fine-tuning of a model path",
        {
            "learning_rate": 1e-6,
            "sft_learning_rate": 2e-5,
            "max_new_tokens": 2048,
            "temperature": 1.0,
            "max_prompt_tokens": 2048,
            "micro_batch_size": 8,
            "compare": [],
        },
        {},
        REAL_MODEL_SOURCE,
    ),
    "lora": Preset(
        "LoRA on a model path",
        {
            "learning_rate": 1e-5,
            "sft_learning_rate": 2e-4,
            "max_new_tokens": 2048,
            "temperature": 1.0,
            "max_prompt_tokens": 2048,
            "micro_batch_size": 8,
            "compare": [],
        },
        {},
        REAL_MODEL_SOURCE + "; LoRA's rates ten times the full ones (QLoRA, arXiv 2305.14314: 2e-4 for 7B models)",
    ),
}
"""Defaults by what is trained. The dataclass's own defaults are the embedded model's."""


def preset_of(model: str | None, lora_r: int | None) -> Preset:
    """The preset for a run: the embedded model (no model path, LoRA or not), LoRA on a model path, or full
    fine-tuning of one."""
    if model is None:
        return PRESETS["embedded"]
    return PRESETS["lora" if lora_r is not None else "full"]


BASELINE_ARMS = ("sft", "rft", "sft_data")
"""The compute-matched baseline arms (`baseline`, `compare`): SFT on the reference proofs, expert iteration, and
data-matched SFT (the reference proofs plus the fixed portfolio's verified proofs of the training open goals)."""

PORTFOLIO = (
    "rfl",
    "decide",
    "simp",
    "assumption",
    "trivial",
    "contradiction",
    "(constructor <;> assumption)",
    "(intros; assumption)",
    "(intros; simp [*])",
    "simp [*]",
)
"""The fixed portfolio's tactics, in order: the schema's `portfolio` default (a test keeps them equal), which
bench/portfolio.ts reads for its `first | ...` baseline."""

MAX_REPAIR_TURNS = 8
"""The most repair turns a run may ask for: each turn waits for the previous one's check, so turns serialise."""


class ConfigError(UserError, ValueError):
    """A configuration the user must fix; the message says what and how."""


@dataclass(frozen=True)
class TrainConfig:
    """Options of one run. Defaults are chosen so the embedded model's whole job (SFT, RL, three evals) takes
    well under 5 minutes on 2 CPU cores."""

    algorithm: str = "grpo"
    """Objective: grpo, drgrpo, dapo, gspo or dgpo (fim_rlvr.algorithms)."""
    algo_config: dict[str, Any] = field(default_factory=dict)
    """AlgorithmConfig overrides with TRL names (epsilon, epsilon_high, beta, max_completion_length, ...). Each
    algorithm keeps its paper's defaults, except that GRPO on the embedded model keeps no KL anchor to the SFT
    policy (beta EMBEDDED_GRPO_BETA unless `beta` is given here): see `resolved_algo_config`."""
    model: str | None = None
    """A Hugging Face causal LM directory; None builds the embedded tiny model from the dataset's Lean text."""
    steps: int = 30
    """RL optimiser steps."""
    group_size: int = 8
    """Completions sampled per prompt (one GRPO group)."""
    batch_size: int = 8
    """Groups (prompts) per optimiser step."""
    seed: int = 0
    """Seed for data order, model initialisation and sampling."""
    kinds: list[str] = field(default_factory=lambda: list(HOLE_KINDS))
    """Hole kinds to train and evaluate on."""
    max_new_tokens: int = 48
    """Longest completion generated (tokens). Default by what is trained (PRESETS): 48 for the embedded model, 2,048
    for a model path (DeepSeek-Prover-V1.5's proof length)."""
    learning_rate: float = 1e-4
    """AdamW learning rate for RL (SFT uses sft_learning_rate). Default by what is trained: 1e-4 for the embedded model
    (Adam moves every weight by about this much per step whatever the gradient's size: 3e-4 makes it drift), 1e-6 for
    full fine-tuning of a model path (TRL's GRPO default), 1e-5 for LoRA."""
    sft_steps: int | None = None
    """Supervised warm-start steps on the train split's middles; None: 60 for the embedded model (about half of
    lean-env's test holes, exact and greedy), 0 for a model path."""
    curriculum: bool = True
    """Unlock hole kinds tactic -> block -> steps -> proof as the measured pass rate allows. After an SFT warm start
    every kind starts unlocked (the warm start has taught them all; on lean-env, RL on tactic holes alone first made
    the policy drift on the block and proof holes it already solved); prompts are drawn in proportion to each kind's
    tasks, tilted toward the kinds with the lower measured pass rate (fim_rlvr.tasks.curriculum)."""
    warm_start_data: str = "reference"
    """What the SFT warm start imitates: "reference", the train split's reference proofs; "portfolio", those and the
    fixed portfolio's proofs of the training open goals, each checked by the run's verifier (the data-matched arm's
    set, step/portfolio.py). Every compared arm starts from the same warm start."""
    task_sampling: str = "kind"
    """How a training task is drawn within its kind: "kind" walks the kind's tasks in shuffled epochs; "learnability"
    draws them in proportion to p(1 - p) of their Lean file's measured pass rate p, toward the groups whose rewards
    differ (fim_rlvr.tasks.curriculum). Expert iteration draws the same way."""
    embedded_width: int = 128
    """Hidden size of the embedded model (None `model` only): 128 is ~1M parameters. Attention heads are width / 32,
    the MLP 2.75 x width (the default's 352)."""
    embedded_layers: int = 4
    """Transformer layers of the embedded model."""
    checkpoint_every: int = 10
    """Write a checkpoint every N RL steps (and always at the end and on stop)."""
    eval_limit: int | None = None
    """Held-out tasks evaluated per pass@1 measurement (None: the whole test split)."""
    device: str = "auto"
    """auto (CUDA when present and a model path is given, else CPU), cpu, cuda or cuda:N."""
    goal_in_prompt: bool | None = None
    """Show the goal state at the hole in the prompt; None: when the tasks carry a `goal`."""
    temperature: float = 0.4
    """Sampling temperature for rollouts (evaluation is greedy); log-probs use the same temperature. Default by what is
    trained: 0.4 for the embedded model (its samples at 0.7-1.0 are mostly noise for multi-line holes and RL then
    drifts), 1.0 for a model path (DeepSeek-Prover-V1.5, TRL)."""
    top_p: float = 1.0
    """Nucleus sampling threshold for rollouts."""
    sft_learning_rate: float = 3e-3
    """AdamW learning rate of the SFT warm start. Default by what is trained: 3e-3 for the embedded model (its warm
    start is its pretraining), 2e-5 for full fine-tuning of a model path (TRL's SFT default), 2e-4 for LoRA."""
    sft_batch_size: int = 32
    """Examples per SFT step."""
    verify_timeout_s: float = 120.0
    """Slack on the wait for a batch: it counts as unanswered once the verifier made no progress on it for this long
    plus the longest one check can take (fim_rlvr.verifier.check.silence_bound_s); it is then sent again once, and a
    second silence counts its items as the candidates' timeouts. Also how long a lost service connection is
    retried."""
    max_prompt_tokens: int = 256
    """Prompt budget: the prefix is cut from the left and the suffix from the right to fit. Default by what is trained:
    256 for the embedded model, 2,048 for a model path."""
    lora_r: int | None = None
    """LoRA rank (peft); None trains every weight. With LoRA the reference model is the policy with its adapters
    disabled, so no second copy of the model is kept."""
    lora_alpha: int | None = None
    """LoRA alpha; None: twice lora_r."""
    lora_targets: list[str] | None = None
    """Module names LoRA adapts; None: every linear layer but the output head (peft's "all-linear")."""
    lora_dropout: float = 0.0
    """Dropout on the LoRA branch, in the SFT warm start (RL's forward passes run with every dropout rate at 0, so
    old and new log-probs stay comparable)."""
    load_in_4bit: bool = False
    """QLoRA: the base model in 4-bit NF4 through bitsandbytes (CUDA only; needs lora_r)."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass: less memory for about a third more compute."""
    bf16: bool | None = None
    """Train in bfloat16; None: on CUDA GPUs that support it (CPU runs stay float32)."""
    unsloth: bool | None = None
    """Load through Unsloth's FastLanguageModel; None: when Unsloth is importable, on CUDA, with LoRA."""
    rollout_backend: str = "auto"
    """What generates rollouts: "vllm", "transformers", or "auto" (vLLM when importable, on CUDA, with a model
    path; the transformers path is the fallback)."""
    vllm_mode: str = "colocate"
    """"colocate": a vLLM engine inside the trainer process, put to sleep while the trainer optimises (as TRL
    does); "server": a `trl vllm-serve` process at vllm_server_url."""
    vllm_server_url: str | None = None
    """Base URL of the vLLM server for vllm_mode "server", e.g. http://localhost:8000."""
    vllm_gpu_memory_utilization: float = 0.3
    """Share of the GPU's memory the colocated vLLM engine may take."""

    # ------------------------------------------------------------------ what the run scores and measures (issue 16)
    timeout_reward: str = "failure"
    """How a timeout the candidate caused is scored: "failure" (reward 0, kept in the group statistics) or "mask"
    (left out of training, as an infrastructure fault is). "mask" lets the policy drift toward hanging: a masked
    sample escapes the push-down its failing siblings get (fim_rlvr.core.outcomes; tests/test_masking_bandit.py)."""
    validation_every: int = 10
    """Evaluate the validation split every N RL steps (and after the last): greedy pass@1 and, from
    validation_samples completions per task at the training temperature, the unbiased pass@k. 0: never."""
    validation_samples: int = 4
    """Completions sampled per validation task for pass@k (n in the unbiased estimator; k = 1, 2, 4, ... <= n)."""
    repair_turns: int = 0
    """Repair turns in RL rollouts (issue 17; `fim-rlvr eval --repair R` at evaluation): a sample whose check failed
    (not proved, not masked) gets up to this many more turns, each prompted with its last attempt and the verifier's
    diagnostics (fim_rlvr.tasks.repair, the prompt `eval --repair` builds). Every turn is a sample of its own in its
    task's group, trained on its own tokens (fim_rlvr.step.repair_turns); a masked verdict ends the chain. 0: no
    repair."""
    repair_discount: float = 0.5
    """A repair turn's reward is the verifier's reward x repair_discount ** turn (turn 1 is the first repair): a
    proof found on a later turn earns less than one found at once, so first attempts stay the thing to get right.
    In (0, 1]; 0.5 halves the reward per extra turn."""
    baseline: str | None = None
    """Instead of RL, one compute-matched baseline arm from the same warm start (fim_rlvr.run.arms): "sft" continues
    the SFT warm start for as many sequences through the model's forward and backward passes as the RL steps would
    train on (`baseline_sequences`); "sft_data" does the same on the reference proofs plus the fixed portfolio's
    verified proofs of the training open goals (data-matched SFT, step/portfolio.py); "rft" is expert iteration
    (rejection-sampling fine-tuning): RL's draws, samples and checks, trained on the model's own verified proofs
    (fim_rlvr.step.rft). The run's `after` evaluation is then the baseline's. None: the RL run."""
    compare: list[str] = field(default_factory=lambda: ["sft"])
    """Compute-matched baseline arms ("sft", "rft", "sft_data", as `baseline` describes them) run after RL, each from
    the SFT warm start's weights (the run's step-0 checkpoint), and evaluated like RL (eval.json `baseline-sft`,
    `baseline-rft`): the held-out figures RL must beat, from one run. Default by what is trained: ["sft"] for the
    embedded model, none for a model path (each arm costs about as much as the RL steps). Ignored with `baseline`."""
    eval_samples: int = 0
    """Held-out pass@k besides greedy pass@1: this many completions per test task at the training temperature, at
    every evaluation, with the unbiased estimator (eval.json `pass_at_k`, and per held-out set). 0: greedy only."""
    portfolio: list[str] = field(default_factory=lambda: list(PORTFOLIO))
    """The fixed portfolio's tactics, in order. The data-matched SFT arm ("sft_data") checks them one at a time on
    the training split's open goals with the run's verifier; the first that proves a goal by itself becomes that
    goal's proof to imitate (step/portfolio.py)."""
    eval_split: str = "test"
    """The held-out split the run's evaluations measure: "test", or "validation" to choose settings without looking
    at the test split (bench:seeds --split validation)."""

    def baseline_sequences(self) -> int:
        """Sequences RL would put through forward and backward passes: steps x batch_size x group_size, each
        num_iterations times (every optimiser pass over a generated batch is another forward and backward pass;
        steps_per_generation only splits a batch, it adds none)."""
        return self.steps * self.batch_size * self.group_size * self.num_iterations

    def baseline_sft_steps(self) -> int:
        """Extra SFT steps of the compute-matched baseline: RL's sequences per run over SFT's per step, rounded up."""
        return -(-self.baseline_sequences() // self.sft_batch_size)

    def arms(self) -> list[str]:
        """The compute-matched baseline arms this run measures after RL (none when the run is itself a baseline)."""
        return [] if self.baseline is not None or self.steps == 0 else list(dict.fromkeys(self.compare))

    # ---- Real models: prompts, the optimiser's batch mechanics and schedule, reporting (real_models.py) ----
    prompt_style: str = "auto"
    """auto, fim, chat or instruction (prompts.py). auto: FIM when the tokenizer has FIM tokens of a known family and
    the model is not a chat model, chat when it has a chat template, else an instruction."""
    prompt_template: str | None = None
    """The prompt's text with fields {prefix} {suffix} {goal} {hole} {kind}: the whole prompt for fim and instruction,
    the user's message for chat. None: the built-in layout of the style."""
    prompt_thinking: bool = False
    """The model reasons before answering (prover models): no ```lean fence is pre-filled and the candidate is the
    answer's last ```lean block (none: an empty candidate, which fails). Needs chat or instruction prompts and a
    max_new_tokens long enough for the reasoning."""
    micro_batch_size: int | None = None
    """Completions per forward/backward pass; an optimiser step accumulates the gradients of its micro-batches, with
    each algorithm's normaliser taken over the whole batch on every rank, so the step equals one pass over it.
    None: one pass (dgpo rounds micro-batches up to whole groups: its pairs live within a group). Default by what is
    trained: None for the embedded model, 8 for a model path (TRL's per-device batch)."""
    num_iterations: int = 1
    """Optimiser passes over each generated batch (TRL's num_iterations, GRPO's μ): the old log-probs stay those of
    generation time, so later passes are clipped as the policy moves."""
    steps_per_generation: int = 1
    """Optimiser steps each generated batch is split into (TRL's name), by groups. One RL step (one metrics line)
    makes num_iterations × steps_per_generation optimiser steps."""
    lr_scheduler: str = "constant"
    """Learning-rate schedule over the run's optimiser steps: constant, linear (to 0) or cosine (to 0), after the
    warm-up (TRL's lr_scheduler_type values)."""
    warmup_ratio: float = 0.0
    """Share of the optimiser steps over which the learning rate rises linearly from 0."""
    weight_decay: float = 0.01
    """AdamW's decoupled weight decay for RL (0.01 is torch's AdamW default, which runs before this option used)."""
    max_grad_norm: float = 1.0
    """The gradient is clipped to this global norm before every optimiser step, of RL and of the SFT warm start (TRL's
    default 1.0). 0 or less: no clipping."""
    logprob_memory_mb: float = 4096
    """The memory bound of one pass that recomputes old log-probs after sampling (both rollout backends), MiB: each
    pass takes as many completions as keep their logits, (longest + 1) positions x vocabulary x 16 bytes each (the
    output, its float32 copy, the temperature-scaled copy and the log-softmax), within it; one completion at least.
    With a 152k vocabulary a 2,048-token completion alone is 5 GB."""
    report_to: str | list[str] = "none"
    """Where each metrics.jsonl line also goes: none, tensorboard, wandb or trackio, or a list of them (runs/NAME
    under the run folder for TensorBoard; the package must be installed)."""

    def resolved_sft_steps(self) -> int:
        """SFT steps to run: the explicit value, or the default for the embedded model."""
        if self.sft_steps is not None:
            return self.sft_steps
        return 60 if self.model is None else 0

    def staged_curriculum(self) -> bool:
        """Whether kinds unlock one by one: the curriculum is on and no SFT warm start precedes RL."""
        return self.curriculum and self.resolved_sft_steps() == 0

    def resolved_algo_config(self) -> dict[str, Any]:
        """algo_config with the run's own defaults: completion length and group size from this config, and for GRPO
        on the embedded model beta EMBEDDED_GRPO_BETA unless `beta` is set explicitly."""
        defaults: dict[str, Any] = {"max_completion_length": self.max_new_tokens, "num_generations": self.group_size}
        defaults |= preset_of(self.model, self.lora_r).algo.get(self.algorithm, {})
        return defaults | dict(self.algo_config)

    def to_json(self) -> dict[str, Any]:
        """The resolved config as plain JSON (config.json in the run folder)."""
        return dataclasses.asdict(self)


def valid_keys() -> list[str]:
    """Every TrainConfig key, in declaration order."""
    return [f.name for f in dataclasses.fields(TrainConfig)]


def from_dict(raw: dict[str, Any]) -> TrainConfig:
    """Build a TrainConfig from snake_case keys; unknown keys and bad values raise ConfigError saying what to fix."""
    unknown = sorted(set(raw) - set(valid_keys()))
    if unknown:
        raise ConfigError(f"unknown TrainConfig key(s) {', '.join(unknown)}; valid keys: {', '.join(valid_keys())}")
    preset = preset_of(raw.get("model"), raw.get("lora_r"))
    given = {k: v for k, v in raw.items() if v is not None or k in _NULLABLE}
    config = TrainConfig(**{**{k: v for k, v in preset.values.items() if k not in given}, **given})
    _validate(config)
    return config


def defaults_line(config: TrainConfig) -> str:
    """The run's start line about its defaults by what is trained: the preset's values, and those the run sets."""
    preset = preset_of(config.model, config.lora_r)
    kept, changed = [], []
    for key, default in preset.values.items():
        value = getattr(config, key)
        if value == default:
            kept.append(f"{key} {_shown(default, key)}")
        else:
            changed.append(f"{key} {_shown(value, key)} (default {_shown(default, key)})")
    algo = preset.algo.get(config.algorithm, {})
    kept += [f"{config.algorithm}'s {k} {_shown(v)}" for k, v in algo.items() if k not in config.algo_config]
    line = f"defaults for {preset.what}: {', '.join(kept) or 'none kept'}; from {preset.source}"
    return line + (f"; set for this run: {', '.join(changed)}" if changed else "")


UNSET_MEANINGS = {"micro_batch_size": "one pass over the whole batch"}
"""What a preset's None means, in words, for the start line and report.html (never a bare null)."""


def _shown(value: Any, key: str = "") -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "none"
    if value is None:
        return f"none ({UNSET_MEANINGS[key]})" if key in UNSET_MEANINGS else "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def from_file(path: str | Path) -> TrainConfig:
    """Load a --config FILE (YAML or JSON)."""
    import yaml

    text = Path(path).read_text(encoding="utf-8")
    data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of TrainConfig keys, got {type(data).__name__}")
    return from_dict(data)


_NULLABLE = {
    "model",
    "sft_steps",
    "eval_limit",
    "goal_in_prompt",
    "lora_r",
    "lora_alpha",
    "lora_targets",
    "bf16",
    "unsloth",
    "vllm_server_url",
    "baseline",
    "prompt_template",
    "micro_batch_size",
}


def _validate(config: TrainConfig) -> None:
    if config.algorithm not in ALGORITHM_NAMES:
        raise ConfigError(f"unknown algorithm {config.algorithm!r}; choose one of {', '.join(ALGORITHM_NAMES)}")
    bad_kinds = [k for k in config.kinds if k not in HOLE_KINDS]
    if bad_kinds or not config.kinds:
        raise ConfigError(f"kinds must be a non-empty subset of {', '.join(HOLE_KINDS)} (got {config.kinds})")
    positive = {
        "group_size": config.group_size,
        "batch_size": config.batch_size,
        "max_new_tokens": config.max_new_tokens,
        "checkpoint_every": config.checkpoint_every,
        "sft_batch_size": config.sft_batch_size,
        "max_prompt_tokens": config.max_prompt_tokens,
    }
    for name, value in positive.items():
        if not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name} must be a positive integer (got {value!r})")
    if config.warm_start_data not in WARM_START_DATA:
        raise ConfigError(f"warm_start_data must be {' or '.join(WARM_START_DATA)} (got {config.warm_start_data!r})")
    if config.task_sampling not in TASK_SAMPLINGS:
        raise ConfigError(f"task_sampling must be {' or '.join(TASK_SAMPLINGS)} (got {config.task_sampling!r})")
    if not isinstance(config.embedded_width, int) or config.embedded_width < 32 or config.embedded_width % 32:
        raise ConfigError(
            "embedded_width must be a multiple of 32 (one attention head per 32), at least 32 "
            f"(got {config.embedded_width!r})"
        )
    if not isinstance(config.embedded_layers, int) or config.embedded_layers < 1:
        raise ConfigError(f"embedded_layers must be a positive integer (got {config.embedded_layers!r})")
    if config.group_size < 2:
        raise ConfigError(
            f"group_size must be at least 2 (got {config.group_size}): GRPO-family advantages compare the "
            "completions of one prompt with each other, so a group of one teaches nothing"
        )
    if not isinstance(config.steps, int) or config.steps < 0:
        raise ConfigError(f"steps must be a non-negative integer (got {config.steps!r})")
    if config.eval_limit is not None and config.eval_limit < 1:
        raise ConfigError(f"eval_limit must be at least 1 or null (got {config.eval_limit})")
    if config.learning_rate <= 0 or config.sft_learning_rate <= 0:
        raise ConfigError("learning rates must be positive")
    if config.temperature < 0 or not 0 < config.top_p <= 1:
        raise ConfigError("temperature must be >= 0 and top_p in (0, 1]")
    if not isinstance(config.algo_config, dict):
        raise ConfigError("algo_config must be a mapping of AlgorithmConfig keys")
    _validate_scale(config)
    _validate_measurement(config)


def _validate_measurement(config: TrainConfig) -> None:
    """The scoring and measuring options (timeouts, validation, the baseline)."""
    if config.timeout_reward not in TIMEOUT_REWARDS:
        raise ConfigError(f"timeout_reward must be failure or mask (got {config.timeout_reward!r})")
    if not isinstance(config.validation_every, int) or config.validation_every < 0:
        raise ConfigError(f"validation_every must be a whole number of steps or 0 (got {config.validation_every!r})")
    if not isinstance(config.validation_samples, int) or config.validation_samples < 1:
        raise ConfigError(f"validation_samples must be a positive integer (got {config.validation_samples!r})")
    if not isinstance(config.repair_turns, int) or isinstance(config.repair_turns, bool) or config.repair_turns < 0:
        raise ConfigError(f"repair_turns must be a whole number of turns, 0 for none (got {config.repair_turns!r})")
    if config.repair_turns > MAX_REPAIR_TURNS:
        raise ConfigError(f"repair_turns is at most {MAX_REPAIR_TURNS} (got {config.repair_turns})")
    if not isinstance(config.repair_discount, (int, float)) or not 0 < config.repair_discount <= 1:
        raise ConfigError(f"repair_discount must be in (0, 1] (got {config.repair_discount!r})")
    if config.baseline not in (None, *BASELINE_ARMS):
        raise ConfigError(f"baseline must be {' or '.join(BASELINE_ARMS)} or null (got {config.baseline!r})")
    if not isinstance(config.compare, list) or any(arm not in BASELINE_ARMS for arm in config.compare):
        raise ConfigError(
            f"compare must list baseline arms among {', '.join(BASELINE_ARMS)}, or be [] (got {config.compare!r})"
        )
    if not isinstance(config.eval_samples, int) or isinstance(config.eval_samples, bool) or config.eval_samples < 0:
        raise ConfigError(
            f"eval_samples must be a whole number of completions, 0 for greedy only (got {config.eval_samples!r})"
        )
    if (
        not isinstance(config.portfolio, list)
        or not config.portfolio
        or any(not isinstance(t, str) or not t.strip() for t in config.portfolio)
    ):
        raise ConfigError(f"portfolio must list one tactic at least, each non-empty (got {config.portfolio!r})")
    if config.eval_split not in ("test", "validation"):
        raise ConfigError(f"eval_split must be test or validation (got {config.eval_split!r})")
    _validate_real_models(config)


def _validate_scale(config: TrainConfig) -> None:
    """The options for bigger models: LoRA, quantisation, precision, the rollout engine."""
    for name in ("lora_r", "lora_alpha"):
        value = getattr(config, name)
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ConfigError(f"{name} must be a positive integer or null (got {value!r})")
    if config.lora_targets is not None and (
        not isinstance(config.lora_targets, list)
        or not config.lora_targets
        or not all(isinstance(t, str) and t for t in config.lora_targets)
    ):
        raise ConfigError(f"lora_targets must list module names such as [q_proj, v_proj] (got {config.lora_targets!r})")
    if not 0 <= config.lora_dropout < 1:
        raise ConfigError(f"lora_dropout must be in [0, 1) (got {config.lora_dropout})")
    if config.lora_r is None and (config.lora_alpha is not None or config.lora_targets is not None):
        raise ConfigError("lora_alpha and lora_targets need lora_r: give --lora-r R to train a LoRA adapter")
    if config.load_in_4bit and config.lora_r is None:
        raise ConfigError("load_in_4bit (QLoRA) trains a LoRA adapter on the 4-bit model: give --lora-r R as well")
    if config.rollout_backend not in ("auto", "transformers", "vllm"):
        raise ConfigError(f"rollout_backend must be auto, transformers or vllm (got {config.rollout_backend!r})")
    if config.vllm_mode not in ("colocate", "server"):
        raise ConfigError(f"vllm_mode must be colocate or server (got {config.vllm_mode!r})")
    if config.vllm_mode == "server" and not config.vllm_server_url:
        raise ConfigError("vllm_mode server needs vllm_server_url, e.g. http://localhost:8000 (from `trl vllm-serve`)")
    if not 0 < config.vllm_gpu_memory_utilization <= 1:
        raise ConfigError(f"vllm_gpu_memory_utilization must be in (0, 1] (got {config.vllm_gpu_memory_utilization})")


PROMPT_STYLES = ("auto", "fim", "chat", "instruction")
TEMPLATE_FIELDS = ("prefix", "suffix", "goal", "hole", "kind")
"""The fields a prompt_template may use (fim_rlvr.tasks.prompts fills them)."""


def template_problem(template: str) -> str | None:
    """Why `template` is not a prompt_template (fields other than TEMPLATE_FIELDS, by name; {{ and }} for braces), or
    None when it is one."""
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(template) if field is not None]
    except ValueError as error:
        return f"prompt_template is not a valid template ({error}); write {{{{ and }}}} for literal braces"
    bad = sorted({f for f in fields if f not in TEMPLATE_FIELDS})
    if bad:
        return (
            f"prompt_template uses unknown field(s) {', '.join('{' + b + '}' for b in bad)}; "
            f"the fields are {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)} (write {{{{ and }}}} for braces)"
        )
    return None


LR_SCHEDULERS = ("constant", "linear", "cosine")
REPORT_TARGETS = ("none", "tensorboard", "wandb", "trackio")


def report_targets(config: TrainConfig) -> list[str]:
    """report_to as a list without "none"."""
    raw = [config.report_to] if isinstance(config.report_to, str) else list(config.report_to)
    return [target for target in raw if target != "none"]


def _validate_real_models(config: TrainConfig) -> None:
    """Prompt options, the optimiser's batch mechanics and schedule, reporting; algo_config's group size and budget
    must agree with the run's (they are TRL's names for group_size and max_new_tokens)."""
    if config.prompt_style not in PROMPT_STYLES:
        raise ConfigError(f"prompt_style must be one of {', '.join(PROMPT_STYLES)} (got {config.prompt_style!r})")
    if config.prompt_template is not None:
        if not isinstance(config.prompt_template, str) or not config.prompt_template:
            raise ConfigError("prompt_template must be a non-empty string with {prefix} {suffix} ... fields, or null")
        problem = template_problem(config.prompt_template)
        if problem is not None:
            raise ConfigError(problem)
    if config.prompt_thinking and config.prompt_style == "fim":
        raise ConfigError("prompt_thinking needs prompt_style chat, instruction or auto: a FIM answer is the middle")
    for name in ("num_iterations", "steps_per_generation"):
        value = getattr(config, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{name} must be a positive integer (got {value!r})")
    if config.micro_batch_size is not None and (
        not isinstance(config.micro_batch_size, int) or config.micro_batch_size < 1
    ):
        raise ConfigError(f"micro_batch_size must be a positive integer or null (got {config.micro_batch_size!r})")
    if config.steps_per_generation > config.batch_size:
        raise ConfigError(
            f"steps_per_generation ({config.steps_per_generation}) splits a step's batch_size ({config.batch_size}) "
            "groups into optimiser steps: it cannot exceed batch_size"
        )
    if config.lr_scheduler not in LR_SCHEDULERS:
        raise ConfigError(f"lr_scheduler must be one of {', '.join(LR_SCHEDULERS)} (got {config.lr_scheduler!r})")
    if not 0 <= config.warmup_ratio < 1:
        raise ConfigError(f"warmup_ratio must be in [0, 1) (got {config.warmup_ratio})")
    if config.weight_decay < 0:
        raise ConfigError(f"weight_decay must be >= 0 (got {config.weight_decay})")
    if not isinstance(config.logprob_memory_mb, (int, float)) or config.logprob_memory_mb <= 0:
        raise ConfigError(f"logprob_memory_mb must be a positive number of MiB (got {config.logprob_memory_mb!r})")
    if not isinstance(config.max_grad_norm, (int, float)) or isinstance(config.max_grad_norm, bool):
        raise ConfigError(f"max_grad_norm must be a number, 0 for no clipping (got {config.max_grad_norm!r})")
    targets = [config.report_to] if isinstance(config.report_to, str) else config.report_to
    if not isinstance(targets, list) or not all(t in REPORT_TARGETS for t in targets):
        raise ConfigError(f"report_to must be one of {', '.join(REPORT_TARGETS)} or a list of them (got {targets!r})")
    algo = config.algo_config if isinstance(config.algo_config, dict) else {}
    for key, own, flag in (
        ("num_generations", config.group_size, "group_size"),
        ("max_completion_length", config.max_new_tokens, "max_new_tokens"),
    ):
        if algo.get(key) is not None and algo[key] != own:
            raise ConfigError(
                f"algo_config {key} ({algo[key]}) differs from {flag} ({own}); they are the same setting (TRL's name "
                f"and ours): set {flag} to {algo[key]} and leave {key} out of algo_config"
            )
