# Generated from lean-bridge/protocol/trainer.schema.json by datamodel-code-generator (scripts/generate_wire.py):
# do not edit; change the schema and run `npm run protocol:generate`. The hand-written rest of the protocol
# (method names, error codes, the Verdict view) is fim_rlvr/core/protocol.py.

from typing import Any, Literal, TypeAlias

from typing_extensions import NotRequired, TypedDict


class Position(TypedDict, closed=True):
    """
    A position in a document: 0-based line, character in UTF-16 code units (LSP).
    """

    line: int
    """0-based line."""

    character: int
    """0-based column in UTF-16 code units."""


class Range(TypedDict, closed=True):
    """
    A half-open LSP range [start, end).
    """

    start: Position
    """First position inside the range."""

    end: Position
    """First position after the range."""


class VerifierIdentity(TypedDict, closed=True):
    """
    Which verifier produced a verdict, so a simulator reward can never pass for a Lean reward.
    """

    kind: Literal["lean", "simulator", "kimina"]
    """Real Lean, the protocol simulator (a test double), or a Kimina Lean Server (Lean through its REPL, over HTTP)."""

    version: str
    """The Lean toolchain (e.g. leanprover/lean4:v4.24.0) or the simulator's version."""

    label: str
    """What users see, e.g. "Lean (leanprover/lean4:v4.24.0)" or "simulator 0.1.0 (not Lean)"."""


VerdictKind: TypeAlias = Literal["proved", "failed", "incomplete", "rejected", "timeout", "crashed", "environment"]


VerdictCause: TypeAlias = Literal["candidate", "infrastructure"]


ConfirmedBy: TypeAlias = Literal["server", "kernel-replay"]


HoleKind: TypeAlias = Literal["tactic", "block", "steps", "proof"]


AlgorithmName: TypeAlias = Literal["grpo", "drgrpo", "dapo", "gspo", "dgpo"]


ReportTarget: TypeAlias = Literal["none", "tensorboard", "wandb", "trackio"]


class CandidateDiagnostic(TypedDict, closed=True):
    """
    One message the verifier reported about a candidate.
    """

    severity: int
    """LSP severity: 1 error, 2 warning, 3 information, 4 hint."""

    message: str
    """The verifier's message text."""

    candidateRange: Range | None
    """The range relative to the candidate text (line 0 = its first line), or null when the message lies outside it."""


class VerifierServiceAddress(TypedDict, closed=True):
    """
    Where the run's verifier service listens, and the token every request to it must carry.
    """

    host: str
    """The address to connect to (the host binds 127.0.0.1)."""

    port: int
    """The TCP port."""

    token: str
    """The service's token, sent in the `auth` request that opens each connection."""


class VerifierBudget(TypedDict, closed=True):
    """
    What the trainer needs of the verifier's limits to tell a slow verifier from one that stopped answering: a batch counts as unanswered once the verifier made no progress on it (`verify/progress`) for the longest one check can take plus the run's `verify_timeout_s`.
    """

    slots: int
    """Checks the verifier runs at once (its slots)."""

    checkTimeoutMs: float
    """The verifier's time limit of one check, ms (`--timeout-ms`)."""

    checkBoundMs: float
    """The longest one verification can take on a verifier that works, ms: its time limit on every attempt (a crash is retried once on a fresh worker) and a server restart before each, twice for a proved candidate (the hole is checked once more with `skip` in it)."""


class InitializeResult(TypedDict, closed=True):
    """
    Trainer -> host, answer to `initialize`.
    """

    trainer: str
    """Name and version, e.g. "fim_rlvr 0.1.0"."""

    device: str
    """Where the model runs, e.g. "cpu" or "cuda:0 (NVIDIA H100)"."""

    resumedFromStep: int | None
    """The checkpoint step the run continues from, or null for a fresh run."""

    totalSteps: int
    """RL steps the run will reach."""


class StopParams(TypedDict, closed=True):
    """
    Host -> trainer, request `train/stop`: finish or abandon the current step, checkpoint, answer, then send train/done {status: stopped}.
    """


class StopResult(TypedDict, closed=True):
    """
    Trainer -> host, answer to `train/stop`.
    """

    checkpoint: str | None
    """Path of the checkpoint written, or null when there was nothing to save."""

    step: int
    """The last completed step."""


ShutdownResult: TypeAlias = None


class VerifyItem(TypedDict, closed=True):
    """
    A candidate for a task of the served dataset, by id (what the trainer sends).
    """

    taskId: str
    """The task's `id` in the dataset's tasks.jsonl."""

    candidate: str
    """The cleaned completion (fences, stop tokens removed; re-indented)."""


class HoleItem(TypedDict, closed=True):
    """
    A candidate for any hole of the served project, as a verify-batch line gives it.
    """

    file: str
    """Path of the Lean file, relative to the served project's root."""

    hole: Range
    """LSP range of the hole (0-based lines, UTF-16 characters)."""

    candidate: str
    """The completion to put in the hole."""

    taskId: NotRequired[str]
    """Echoed in the verdict's taskId (default: `file@L:C-L:C`)."""


ServiceItem: TypeAlias = VerifyItem | HoleItem


class VerifyBatchParams(TypedDict, closed=True):
    """
    Client -> service, request `verify/batch`.
    """

    token: NotRequired[str]
    """The service's token. The connection's `auth` carries it, so it may be left out; when given it must be the right one."""

    items: list[ServiceItem]
    """Candidates to check; verdicts come back in the same order. A malformed item gets its own `rejected` verdict."""

    batchId: NotRequired[str]
    """Chosen by the client, unique among its batches in flight: when given, the service sends `verify/progress` naming it while the batch is checked."""


class BatchVerdict(TypedDict, closed=True):
    """
    The verdict and reward for one verify/batch item.
    """

    taskId: str
    """The item's taskId."""

    kind: VerdictKind
    """The verdict's kind."""

    reward: float
    """The reward under the service's reward mode (binary or partial): lean-bridge/verify/rewards.ts, the only place rewards are computed."""

    rewardMetrics: dict[str, float]
    """The reward's components, for logging."""

    diagnostics: list[CandidateDiagnostic]
    """What the verifier reported about the candidate."""

    elapsedMs: float
    """Wall time of the check (near 0 when cached)."""

    cached: bool
    """True when answered from the verifier's cache."""

    verifier: VerifierIdentity
    """The verifier that produced the verdict."""

    cause: NotRequired[VerdictCause]
    """For timeout and crashed only: who caused it (absent means candidate: fail closed)."""

    confirmedBy: NotRequired[ConfirmedBy]
    """For proved only: what confirmed the proof (absent in verdicts of verifiers older than the kernel gate: read as server)."""

    rule: NotRequired[str]
    """For rejected only: the rule that refused the candidate (docs/POLICY.md), e.g. kernel-replay-failed."""

    hack: NotRequired[bool]
    """True only when the kernel gate caught a candidate that Lean's server had proved (rule kernel-replay-failed): reward 0, never masked; the host and the trainer count and log it as a hack."""


class VerifyBatchResult(TypedDict, closed=True):
    """
    Service -> client, answer to `verify/batch`.
    """

    verdicts: list[BatchVerdict]
    """One verdict per item, in the items' order."""


class VerifyProgressParams(TypedDict, closed=True):
    """
    Service -> client, notification `verify/progress`, for a batch sent with a `batchId`, while it is checked: sent when any check of the service finished (at once after a quiet second, else at most once a second), so a client can tell a verifier that works, on this batch or on the ones queued before it, from one that stopped.
    """

    batchId: str
    """The batch's `batchId`."""

    done: int
    """The batch's items answered so far."""

    total: int
    """The batch's items."""

    serviceDone: int
    """Checks the service finished since it started, for every client: a queued batch's progress is theirs."""


class AuthParams(TypedDict, closed=True):
    """
    Client -> service, request `auth`: the first message of every connection, in a frame of at most 4 KiB; the service reads nothing else of a connection before it, and closes one whose first message is not an accepted `auth`.
    """

    token: NotRequired[str]
    """The service's token, when it has one (an open service accepts `auth` without it)."""


class AuthResult(TypedDict, closed=True):
    """
    Service -> client, answer to `auth`: the connection may send requests, within these bounds.
    """

    maxBodyBytes: int
    """The largest frame body the service reads on this connection."""

    idleTimeoutMs: int
    """The service closes the connection after this long with no request in flight and no byte from the client; the client connects again."""


class StatsParams(TypedDict, closed=True):
    """
    Client -> service, request `stats`.
    """

    token: NotRequired[str]
    """The service's token. The connection's `auth` carries it, so it may be left out; when given it must be the right one."""


class ServiceStats(TypedDict, closed=True):
    """
    Service -> client, answer to `stats`: the service's counters since it started.
    """

    uptimeSeconds: float
    """Seconds since the service started."""

    checks: int
    """Items answered (cache hits and rejections included)."""

    checksPerSecond: float
    """Items answered per second over the last 10 seconds."""

    cacheHits: int
    """Items answered from the verifier's cache."""

    queue: int
    """Items accepted and not yet answered."""

    queueLimit: int
    """The most items the service holds at once; a batch beyond it gets the busy error."""

    restarts: int
    """Times the verifier (Lean server) was restarted."""

    refused: int
    """Requests refused for a missing or wrong token."""

    busy: int
    """Batches refused because the queue was full."""

    connections: int
    """Clients connected now."""

    tasks: int
    """Tasks the service knows by id."""

    slots: int
    """Slots (documents checked in parallel)."""

    verifier: VerifierIdentity
    """The verifier behind the service."""


class TrainProgressParams(TypedDict, closed=True):
    """
    Trainer -> host, notification `train/progress`, once per optimiser step.
    """

    step: int
    """The step just completed (1-based)."""

    totalSteps: int
    """Steps the run will reach."""

    metrics: dict[str, float]
    """The numeric fields of this step's metrics.jsonl line, snake_case (reward_mean, pass_rate, loss, kl, clip_fraction, tokens_per_second, checks_per_second ...)."""


class TrainSampleParams(TypedDict, closed=True):
    """
    Trainer -> host, notification `train/sample`: one verified sample.
    """

    taskId: str
    """The task's id."""

    file: str
    """The task's Lean file, relative to the workspace root."""

    hole: Range
    """LSP range of the hole in that file."""

    kind: HoleKind
    """The hole's kind."""

    candidate: str
    """The cleaned candidate that was checked."""

    verdict: VerdictKind
    """The verdict's kind."""

    reward: float
    """The reward it earned."""

    step: int
    """The step whose rollouts produced it."""

    algorithm: AlgorithmName
    """The run's algorithm."""

    diagnostics: NotRequired[list[CandidateDiagnostic]]
    """The verifier's messages, when any."""

    cause: NotRequired[VerdictCause]
    """For timeout and crashed only: who caused it (isMaskedVerdict reads it; absent means candidate)."""

    turn: NotRequired[int]
    """For a repair turn only (TrainConfig repair_turns): which one, 1 for the first repair; absent for a first attempt."""


class TrainCheckpointParams(TypedDict, closed=True):
    """
    Trainer -> host, notification `train/checkpoint`: a complete checkpoint was written.
    """

    path: str
    """The checkpoint's folder (runDir/checkpoints/step-N)."""

    step: int
    """The step it holds."""


class TrainLogParams(TypedDict, closed=True):
    """
    Trainer -> host, notification `train/log`: a message for the user.
    """

    level: Literal["debug", "info", "warning", "error"]
    """Severity."""

    message: str
    """The text, one line or a few."""


BaselineArm: TypeAlias = Literal["sft", "rft", "sft_data"]


class GroupScore(TypedDict, closed=True):
    """
    pass@1 on one group of held-out tasks.
    """

    passAt1: float
    """Share of the group's tasks proved by the greedy completion."""

    tasks: int
    """Tasks in the group."""


class TrainDoneParams(TypedDict, closed=True):
    """
    Trainer -> host, notification `train/done`: the run ended (the trainer then waits for shutdown).
    """

    status: Literal["completed", "stopped", "failed"]
    """How the run ended."""

    step: int
    """The last completed step."""

    message: str
    """A summary, or for failed runs what happened and what to do."""


class ModelLoadRequest(TypedDict, closed=True):
    """
    Host -> model process, JSON line `load` (the first request): load a model and answer ModelLoaded or ModelLoadFailed.
    """

    type: Literal["load"]
    """The request's kind."""

    path: str
    """A run folder (its latest checkpoint), a checkpoint folder (RUN_DIR/checkpoints/step-N: full or LoRA) or a transformers model folder."""

    threads: int
    """CPU threads the model may use (torch.set_num_threads), so Lean keeps its cores."""


class ModelLoaded(TypedDict, closed=True):
    """
    Model process -> host, JSON line `loaded`: the model is ready for generate requests.
    """

    type: Literal["loaded"]
    """The answer's kind."""

    engine: Literal["vllm", "transformers"]
    """What samples: vLLM (installed, beside a CUDA GPU, a whole model) or transformers `generate`."""

    device: str
    """Where the model runs, e.g. cpu or cuda."""

    tokenizerDir: str
    """The folder of the model's tokenizer, from which the host builds the prompts (as the trainer does)."""


class ModelLoadFailed(TypedDict, closed=True):
    """
    Model process -> host, JSON line `load-failed`: the folder holds no model the trainer can load.
    """

    type: Literal["load-failed"]
    """The answer's kind."""

    message: str
    """What went wrong, naming the folder."""

    hint: str
    """What to do about it."""


class ModelGenerateRequest(TypedDict, closed=True):
    """
    Host -> model process, JSON line `generate`: sample n completions of a prompt the host built (the trainer's prompt); answered by ModelGenerateResult or ModelGenerateFailed with the same id. Requests are answered one at a time, in order.
    """

    type: Literal["generate"]
    """The request's kind."""

    id: str
    """Echoed in the answer."""

    prompt: str
    """The prompt text, special tokens included as text (tokenized with add_special_tokens=False, as the trainer tokenizes)."""

    n: int
    """Completions to sample."""

    temperature: float
    """Sampling temperature; 0 is greedy (every sample the same one)."""

    topP: float
    """Nucleus sampling threshold."""

    maxNewTokens: int
    """Longest completion, in tokens."""

    seed: int
    """Sampling seed."""

    stop: list[str]
    """Text that ends a completion (the prompt style's stops): vLLM stops there; the host's cleaning cuts there whatever the engine did."""


class ModelSample(TypedDict, closed=True):
    """
    One sampled completion, decoded with special tokens kept (the host cleans it as the trainer does).
    """

    text: str
    """The completion's text."""

    completionTokens: int
    """Its length in tokens."""

    finish: Literal["stop", "length"]
    """stop: the model ended it (end of sequence or a stop); length: maxNewTokens did."""


class ModelGenerateResult(TypedDict, closed=True):
    """
    Model process -> host, JSON line `result`: the samples of one generate request.
    """

    type: Literal["result"]
    """The answer's kind."""

    id: str
    """The request's id."""

    promptTokens: int
    """The prompt's length in tokens."""

    samples: list[ModelSample]
    """n samples, in order."""


class ModelGenerateFailed(TypedDict, closed=True):
    """
    Model process -> host, JSON line `failed`: a request it could not answer (no model loaded, out of memory, a prompt longer than the model takes, a line that is not a request).
    """

    type: Literal["failed"]
    """The answer's kind."""

    id: str
    """The request's id ("" when the line had none)."""

    message: str
    """What went wrong, one line."""


class TrainConfig(TypedDict, closed=True):
    """
    The trainer's TrainConfig (trainer/fim_rlvr/core/config.py), snake_case as a user writes it in --config FILE. Every key is optional on the wire: the trainer fills its defaults and answers an unknown key with an error listing the valid ones.
    """

    algorithm: NotRequired[AlgorithmName]
    """Objective to optimise (default grpo)."""

    algo_config: NotRequired[dict[str, Any]]
    """AlgorithmConfig overrides, TRL option names (epsilon, epsilon_high, beta, max_completion_length, num_generations, dpo_beta, dpo_coef, overlong_cache_len ...)."""

    model: NotRequired[str | None]
    """A Hugging Face causal LM directory, or null for the embedded tiny model built locally."""

    steps: NotRequired[int]
    """RL optimiser steps."""

    group_size: NotRequired[int]
    """Completions sampled per prompt (a GRPO group)."""

    batch_size: NotRequired[int]
    """Groups per optimiser step."""

    seed: NotRequired[int]
    """Seed for data order, sampling and initialisation."""

    kinds: NotRequired[list[HoleKind]]
    """Hole kinds to train on."""

    max_new_tokens: NotRequired[int]
    """Longest completion generated. Default: by what is trained (the embedded model, full fine-tuning or LoRA of a model path: trainer/README.md, TrainConfig)."""

    learning_rate: NotRequired[float]
    """Optimiser learning rate. Default: by what is trained (the embedded model, full fine-tuning or LoRA of a model path: trainer/README.md, TrainConfig)."""

    sft_steps: NotRequired[int | None]
    """Supervised warm-start steps on the train split's middles (null: the trainer's default, on for the embedded model)."""

    curriculum: NotRequired[bool]
    """Order hole kinds tactic -> block -> steps -> proof by measured pass rate."""

    warm_start_data: NotRequired[Literal["reference", "portfolio"]]
    """What the SFT warm start imitates: the reference proofs, or those and the fixed portfolio's verified proofs of the training open goals."""

    task_sampling: NotRequired[Literal["kind", "learnability"]]
    """How a training task is drawn within its kind: shuffled epochs (kind), or in proportion to p(1 - p) of its Lean file's measured pass rate (learnability)."""

    embedded_width: NotRequired[int]
    """Hidden size of the embedded model, a multiple of 32 (128: about 1M parameters); heads are width / 32."""

    embedded_layers: NotRequired[int]
    """Transformer layers of the embedded model."""

    checkpoint_every: NotRequired[int]
    """Write a checkpoint every N steps."""

    eval_limit: NotRequired[int | None]
    """Held-out tasks evaluated per pass@1 measurement (null: all)."""

    device: NotRequired[str]
    """auto, cpu, cuda, cuda:N."""

    goal_in_prompt: NotRequired[bool | None]
    """Put the goal state at the hole in the prompt (null: when the tasks carry a goal)."""

    temperature: NotRequired[float]
    """Sampling temperature for rollouts. Default: by what is trained (the embedded model, full fine-tuning or LoRA of a model path: trainer/README.md, TrainConfig)."""

    top_p: NotRequired[float]
    """Nucleus sampling threshold for rollouts."""

    sft_learning_rate: NotRequired[float]
    """AdamW learning rate of the SFT warm start. Default: by what is trained (the embedded model, full fine-tuning or LoRA of a model path: trainer/README.md, TrainConfig)."""

    sft_batch_size: NotRequired[int]
    """Examples per SFT step."""

    verify_timeout_s: NotRequired[float]
    """Slack on the wait for a batch, seconds: it counts as unanswered once the verifier made no progress on it for this long plus the longest one check can take (VerifierBudget); it is then sent again once, and a second silence counts its items as the candidates' timeouts (never masked). Also how long a lost service connection is retried."""

    max_prompt_tokens: NotRequired[int]
    """Prompt budget: the prefix is cut from the left and the suffix from the right to fit. Default: by what is trained (the embedded model, full fine-tuning or LoRA of a model path: trainer/README.md, TrainConfig)."""

    lora_r: NotRequired[int | None]
    """LoRA rank (peft); null: full fine-tuning."""

    lora_alpha: NotRequired[int | None]
    """LoRA alpha (null: twice lora_r)."""

    lora_targets: NotRequired[list[str] | None]
    """Module names LoRA adapts (null: every linear layer but the output head, peft's "all-linear")."""

    lora_dropout: NotRequired[float]
    """Dropout on the LoRA branch."""

    load_in_4bit: NotRequired[bool]
    """QLoRA: load the base model in 4-bit NF4 through bitsandbytes (CUDA only; needs lora_r)."""

    gradient_checkpointing: NotRequired[bool]
    """Recompute activations in the backward pass (less memory, about a third more compute)."""

    bf16: NotRequired[bool | None]
    """Train in bfloat16 (null: on CUDA GPUs that support it)."""

    unsloth: NotRequired[bool | None]
    """Load the model through Unsloth (null: when Unsloth is importable, on CUDA, with LoRA)."""

    rollout_backend: NotRequired[Literal["auto", "transformers", "vllm"]]
    """What generates rollouts: vllm, transformers, or auto (vLLM when importable, on CUDA, with a model path)."""

    vllm_mode: NotRequired[Literal["colocate", "server"]]
    """colocate: a vLLM engine in the trainer process, asleep while the trainer optimises; server: a `trl vllm-serve` at vllm_server_url."""

    vllm_server_url: NotRequired[str | None]
    """The vLLM server's base URL (vllm_mode server), e.g. http://localhost:8000."""

    vllm_gpu_memory_utilization: NotRequired[float]
    """Share of GPU memory the colocated vLLM engine may take."""

    timeout_reward: NotRequired[Literal["failure", "mask"]]
    """How a timeout the candidate caused is scored: failure (reward 0, kept in the group statistics; default) or mask (left out of training, which lets the policy drift toward hanging)."""

    validation_every: NotRequired[int]
    """Evaluate the validation split every N RL steps (greedy pass@1, sampled pass@k); 0: never."""

    validation_samples: NotRequired[int]
    """Completions sampled per validation task at the training temperature for the unbiased pass@k."""

    repair_turns: NotRequired[int]
    """Repair turns in RL rollouts: a sample whose check failed gets up to this many more turns, prompted with its last attempt and the verifier's diagnostics (the prompt of `fim-rlvr eval --repair`); each turn is a sample of its own in its task's group. 0 (default): none."""

    repair_discount: NotRequired[float]
    """A repair turn's reward is the verifier's reward times repair_discount ** turn (turn 1 is the first repair; default 0.5)."""

    baseline: NotRequired[BaselineArm | None]
    """Instead of RL, one compute-matched baseline arm from the same warm start: sft continues SFT for as many sequences through forward and backward passes as the RL steps would train on; sft_data does the same on the reference proofs plus the fixed portfolio's verified proofs of the training open goals; rft is expert iteration (RL's draws, samples and checks, trained on the run's own verified proofs); null: the RL run."""

    compare: NotRequired[list[BaselineArm]]
    """Compute-matched baseline arms run after RL, each from the SFT warm start's weights, evaluated like RL (default [sft] for the embedded model, [] for a model path; ignored with baseline)."""

    eval_samples: NotRequired[int]
    """Held-out pass@k besides greedy pass@1: completions sampled per test task at the training temperature (0: greedy only)."""

    eval_split: NotRequired[Literal["test", "validation"]]
    """The held-out split the run's evaluations measure (validation: to choose settings without looking at the test split)."""

    portfolio: NotRequired[list[str]]
    """The fixed portfolio of tactics, in order (bench/portfolio.ts tries `first | ...` of them): the data-matched SFT arm (sft_data) checks them one by one on the training split's open goals with the run's verifier, and the first that proves a goal by itself is that goal's proof to imitate. The default is the source of bench/portfolio.ts' PORTFOLIO."""

    prompt_style: NotRequired[Literal["auto", "fim", "chat", "instruction"]]
    """auto (FIM for a base model with FIM tokens, chat when the tokenizer has a chat template, else instruction), fim, chat or instruction."""

    prompt_template: NotRequired[str | None]
    """The prompt's text with {prefix} {suffix} {goal} {hole} {kind}: the whole prompt for fim and instruction, the user's message for chat (null: the style's own)."""

    prompt_thinking: NotRequired[bool]
    """The model reasons before answering: nothing pre-filled, the candidate is the answer's last ```lean block."""

    micro_batch_size: NotRequired[int | None]
    """Completions per forward/backward pass; gradients accumulate with batch-wide normalisers (null: one pass). Default: by what is trained (the embedded model, full fine-tuning or LoRA of a model path: trainer/README.md, TrainConfig)."""

    num_iterations: NotRequired[int]
    """Optimiser passes over each generated batch (TRL's num_iterations)."""

    steps_per_generation: NotRequired[int]
    """Optimiser steps each generated batch is split into, by groups (TRL's name)."""

    lr_scheduler: NotRequired[Literal["constant", "linear", "cosine"]]
    """Learning-rate schedule over the optimiser steps, after the warm-up."""

    warmup_ratio: NotRequired[float]
    """Share of the optimiser steps over which the learning rate rises linearly from 0."""

    weight_decay: NotRequired[float]
    """AdamW weight decay for RL (default 0.01)."""

    max_grad_norm: NotRequired[float]
    """The gradient is clipped to this global norm before every optimiser step, of RL and of the SFT warm start (default 1.0, TRL's); 0 or less: no clipping."""

    logprob_memory_mb: NotRequired[float]
    """The memory bound, in MiB, of one pass that recomputes old log-probs after sampling: each pass takes as many completions as keep their logits ((longest + 1) positions x vocabulary x 16 bytes each) within it, one at least (default 4096)."""

    report_to: NotRequired[ReportTarget | list[ReportTarget]]
    """Where each metrics line also goes: none, tensorboard (RUN/runs), wandb, trackio, or a list of them."""


class InitializeParams(TypedDict, closed=True):
    """
    Host -> trainer, request `initialize`: the run to do. The trainer starts it right after answering.
    """

    protocolVersion: Literal[2]
    """This protocol's version; a trainer that speaks another answers with an error."""

    config: TrainConfig
    """The run's TrainConfig (snake_case keys)."""

    datasetDir: str
    """Absolute path of the dataset folder (holds tasks.jsonl and files.jsonl)."""

    runDir: str
    """Absolute path of the run folder (metrics.jsonl, samples.jsonl, checkpoints/, eval.json, config.json)."""

    resume: bool
    """Continue from runDir/checkpoints/latest instead of starting afresh."""

    verifier: VerifierIdentity
    """The verifier behind the run's verifier service."""

    verifierService: VerifierServiceAddress
    """The run's verifier service (the `fim-rlvr serve` protocol, serving the run's dataset by task id): every trainer process checks its candidates there, and only there."""

    verifierBudget: VerifierBudget
    """The limits of the verifier behind that service, from which the trainer derives how long a batch may wait without progress."""


class NoveltyScores(TypedDict, closed=True):
    """
    Held-out pass@1 split by whether each test task's middle occurs in the training split: only the novel tasks measure learning. Groups without tasks are absent; unknown holds the tasks the dataset does not mark.
    """

    novel: NotRequired[GroupScore]
    """Test tasks whose middle occurs nowhere in the training split."""

    memorised: NotRequired[GroupScore]
    """Test tasks whose middle occurs in the training split."""

    unknown: NotRequired[GroupScore]
    """Test tasks the dataset does not mark (beside marked ones)."""


class HeldOutScores(TypedDict, closed=True):
    """
    Held-out pass@1 per held-out set: statements of families training has (instance) and families training never saw (family). Groups without tasks are absent; unknown holds the tasks the dataset does not mark.
    """

    instance: NotRequired[GroupScore]
    """Held-out instances: declarations never trained on, of families training has."""

    family: NotRequired[GroupScore]
    """Held-out families: declarations of families training never saw."""

    unknown: NotRequired[GroupScore]
    """Held-out tasks the dataset does not mark (beside marked ones)."""


ModelAnswer: TypeAlias = ModelLoaded | ModelLoadFailed | ModelGenerateResult | ModelGenerateFailed


class TrainEvalParams(TypedDict, closed=True):
    """
    Trainer -> host, notification `train/eval`: held-out pass@1 (greedy) at one stage of the run.
    """

    stage: Literal["before", "sft", "after", "baseline"]
    """Before training, after the SFT warm start, after RL (or after the baseline a baseline run trains instead), or after a compute-matched baseline arm run after RL (named by arm)."""

    arm: NotRequired[BaselineArm]
    """The baseline arm a baseline stage measures."""

    split: str
    """The split evaluated ("test", or "validation" when the run measures that)."""

    passAt1: float
    """Share of evaluated tasks proved."""

    byKind: dict[str, float]
    """pass@1 per hole kind."""

    tasks: int
    """Number of tasks evaluated."""

    byNovelty: NotRequired[NoveltyScores]
    """pass@1 on novel and on memorised test tasks, when the dataset marks its test tasks `novel`."""

    byHeldOut: NotRequired[HeldOutScores]
    """pass@1 on held-out instances and on held-out families, when the dataset says which task is which (`heldOut`)."""
