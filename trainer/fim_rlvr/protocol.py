"""Everything that crosses the language line, mirrored from lean-bridge/protocol/trainer.schema.json (the source of
truth): the host <-> trainer protocol and the verifier service's.

JSON-RPC 2.0 with LSP framing, over the trainer's stdin/stdout (the host's requests, the trainer's notifications)
or over TCP to a verifier service (`verify/batch`, `stats`): the only road from a trainer process to the verifier.
Every wire message is a TypedDict named like the schema's `$defs` entry (tests/test_protocol_schema.py checks names,
fields, required-ness and enums against the schema). Wire fields are camelCase, except `InitializeParams.config`,
which is the trainer's snake_case TrainConfig.
Parsed verdicts become the frozen dataclass `Verdict`, the trainer's own view of a `BatchVerdict`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from .outcomes import VerdictCause, cause_of, is_masked, outside_candidate_control

PROTOCOL_VERSION = 2
"""The protocol version this trainer speaks (InitializeParams.protocolVersion)."""

TRAINER_ERROR = -32001
"""JSON-RPC error code for a failure the user can fix (bad model path, no tasks of the requested kinds ...)."""

# Method names: host <-> trainer.
INITIALIZE = "initialize"
TRAIN_STOP = "train/stop"
SHUTDOWN = "shutdown"
TRAIN_PROGRESS = "train/progress"
TRAIN_SAMPLE = "train/sample"
TRAIN_CHECKPOINT = "train/checkpoint"
TRAIN_LOG = "train/log"
TRAIN_EVAL = "train/eval"
TRAIN_DONE = "train/done"

# The verifier service (over TCP).
VERIFY_BATCH = "verify/batch"
STATS = "stats"
VERIFY_PROGRESS = "verify/progress"
"""Service -> client notification: a check of the service finished while the batch it names waits."""
SERVICE_UNAUTHORIZED = -32010
"""Service error code: the token is missing or wrong."""
SERVICE_BUSY = -32011
"""Service error code: the service's queue is full; the client retries."""
SERVICE_INVALID_PARAMS = -32602
"""Service error code: malformed params."""

VerdictKind = Literal["proved", "failed", "incomplete", "rejected", "timeout", "crashed", "environment"]
HoleKind = Literal["tactic", "block", "steps", "proof"]
AlgorithmName = Literal["grpo", "drgrpo", "dapo", "gspo", "dgpo"]
LogLevel = Literal["debug", "info", "warning", "error"]
EvalStage = Literal["before", "sft", "after"]
DoneStatus = Literal["completed", "stopped", "failed"]
ReportTarget = Literal["none", "tensorboard", "wandb", "trackio"]
ConfirmedBy = Literal["server", "kernel-replay"]
"""What confirmed a proof: the check's own Lean server, or also the kernel gate (kernel replay of the checked
declaration and what it depends on, in a fresh Lean process)."""

VERDICT_KINDS: tuple[str, ...] = ("proved", "failed", "incomplete", "rejected", "timeout", "crashed", "environment")
HOLE_KINDS: tuple[str, ...] = ("tactic", "block", "steps", "proof")


class Position(TypedDict):
    """A position in a document: 0-based line, character in UTF-16 code units (LSP)."""

    line: int
    """0-based line."""
    character: int
    """0-based column in UTF-16 code units."""


class Range(TypedDict):
    """A half-open LSP range [start, end)."""

    start: Position
    """First position inside the range."""
    end: Position
    """First position after the range."""


class VerifierIdentity(TypedDict):
    """Which verifier produced a verdict, so a simulator reward can never pass for a Lean reward."""

    kind: Literal["lean", "simulator", "kimina"]
    """Real Lean or the protocol simulator (a test double)."""
    version: str
    """The Lean toolchain or the simulator's version."""
    label: str
    """What to show the user, e.g. "simulator (not Lean)"."""


class CandidateDiagnostic(TypedDict):
    """One message the verifier reported about a candidate."""

    severity: int
    """LSP severity: 1 error, 2 warning, 3 information, 4 hint."""
    message: str
    """The verifier's message text."""
    candidateRange: Range | None
    """The range relative to the candidate text, or null when the message lies outside it."""


class TrainConfig(TypedDict, total=False):
    """The trainer's TrainConfig on the wire (snake_case; see fim_rlvr.config.TrainConfig for every field's meaning)."""

    algorithm: AlgorithmName
    algo_config: dict[str, Any]
    model: str | None
    steps: int
    group_size: int
    batch_size: int
    seed: int
    kinds: list[HoleKind]
    max_new_tokens: int
    learning_rate: float
    sft_steps: int | None
    curriculum: bool
    checkpoint_every: int
    eval_limit: int | None
    device: str
    goal_in_prompt: bool | None
    temperature: float
    top_p: float
    sft_learning_rate: float
    sft_batch_size: int
    verify_timeout_s: float
    max_prompt_tokens: int
    lora_r: int | None
    lora_alpha: int | None
    lora_targets: list[str] | None
    lora_dropout: float
    load_in_4bit: bool
    gradient_checkpointing: bool
    bf16: bool | None
    unsloth: bool | None
    rollout_backend: Literal["auto", "transformers", "vllm"]
    vllm_mode: Literal["colocate", "server"]
    vllm_server_url: str | None
    vllm_gpu_memory_utilization: float
    timeout_reward: Literal["failure", "mask"]
    validation_every: int
    validation_samples: int
    repair_turns: int
    repair_discount: float
    baseline: Literal["sft"] | None
    prompt_style: Literal["auto", "fim", "chat", "instruction"]
    prompt_template: str | None
    prompt_thinking: bool
    micro_batch_size: int | None
    num_iterations: int
    steps_per_generation: int
    lr_scheduler: Literal["constant", "linear", "cosine"]
    warmup_ratio: float
    weight_decay: float
    report_to: ReportTarget | list[ReportTarget]


class VerifierServiceAddress(TypedDict):
    """Where the run's verifier service listens, and the token every request to it must carry."""

    host: str
    """The address to connect to (the host binds 127.0.0.1)."""
    port: int
    """The TCP port."""
    token: str
    """The service's token, sent as the `token` field of each request's params."""


class VerifierBudget(TypedDict):
    """What the trainer needs of the verifier's limits to tell a slow verifier from one that stopped answering: a
    batch counts as unanswered once the verifier made no progress on it (`verify/progress`) for the longest one
    check can take plus the run's `verify_timeout_s` (fim_rlvr.verify.silence_bound_s)."""

    slots: int
    """Checks the verifier runs at once (its slots)."""
    checkTimeoutMs: float
    """The verifier's time limit of one check, ms (`--timeout-ms`)."""
    checkBoundMs: float
    """The longest one verification can take on a verifier that works, ms: its time limit on every attempt (a
    crash is retried once on a fresh worker) and a server restart before each, twice for a proved candidate (the
    hole is checked once more with `skip` in it)."""


class InitializeParams(TypedDict):
    """Host -> trainer, request `initialize`: the run to do. The trainer starts it right after answering."""

    protocolVersion: Literal[2]
    """This protocol's version (2)."""
    config: TrainConfig
    """The run's TrainConfig (snake_case keys)."""
    datasetDir: str
    """A folder holding tasks.jsonl (and files.jsonl)."""
    runDir: str
    """Where metrics, samples, checkpoints and evals go."""
    resume: bool
    """Continue from runDir's latest checkpoint."""
    verifier: VerifierIdentity
    """The verifier behind the run's verifier service."""
    verifierService: VerifierServiceAddress
    """The run's verifier service (the `fim-rlvr serve` protocol): every trainer process checks its candidates
    there, and only there."""
    verifierBudget: VerifierBudget
    """The limits of the verifier behind that service, from which the trainer derives how long a batch may wait
    without progress."""


class InitializeResult(TypedDict):
    """Trainer -> host, answer to `initialize`."""

    trainer: str
    """Name and version, e.g. "fim_rlvr 0.1.0"."""
    device: str
    """Where the model runs, e.g. "cpu" or "cuda:0 (NVIDIA H100)"."""
    resumedFromStep: int | None
    """The checkpoint step the run continues from, or null for a fresh run."""
    totalSteps: int
    """Steps the run will reach."""


class StopParams(TypedDict):
    """Host -> trainer, request `train/stop` (no fields)."""


class StopResult(TypedDict):
    """Trainer -> host, answer to `train/stop`."""

    checkpoint: str | None
    """Path of the checkpoint written, or null when there was nothing to save."""
    step: int
    """The last completed step."""


class VerifyItem(TypedDict):
    """A candidate for a task of the served dataset, by id (what the trainer sends)."""

    taskId: str
    """The task's `id` in the dataset's tasks.jsonl."""
    candidate: str
    """The cleaned completion."""


class _HoleItemRequired(TypedDict):
    file: str
    """Path of the Lean file, relative to the served project's root."""
    hole: Range
    """LSP range of the hole (0-based lines, UTF-16 characters)."""
    candidate: str
    """The completion to put in the hole."""


class HoleItem(_HoleItemRequired, total=False):
    """A candidate for any hole of the served project, as a verify-batch line gives it (the fields above, and:)."""

    taskId: str
    """Echoed in the verdict's taskId (default: `file@L:C-L:C`)."""


ServiceItem = VerifyItem | HoleItem
"""One item of a service's `verify/batch`: a task by id, or a hole given in full."""


class _VerifyBatchRequired(TypedDict):
    items: list[ServiceItem]
    """Candidates to check; verdicts come back in the same order. A malformed item gets its own `rejected`
    verdict."""


class VerifyBatchParams(_VerifyBatchRequired, total=False):
    """Client -> service, request `verify/batch` (the items, and:)."""

    token: str
    """The service's token; required when it has one (always when bound off loopback, and for a run's own)."""
    batchId: str
    """Chosen by the client, unique among its batches in flight: when given, the service sends `verify/progress`
    naming it while the batch is checked."""


class _BatchVerdictRequired(TypedDict):
    taskId: str
    """The item's taskId."""
    kind: VerdictKind
    """The verdict's kind."""
    reward: float
    """The reward under the service's reward mode (binary or partial): lean-bridge/verify/rewards.ts, the only place
    rewards are computed."""
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


class BatchVerdict(_BatchVerdictRequired, total=False):
    """The verdict and reward for one verify/batch item (the fields above, and the optional ones below)."""

    confirmedBy: ConfirmedBy
    """For proved only: what confirmed the proof (absent in verdicts of older verifiers: read as "server")."""
    rule: str
    """For rejected only: the rule that refused the candidate, e.g. "kernel-replay-failed"."""
    hack: bool
    """True only when the kernel gate caught a candidate that Lean's server had proved: reward 0, never masked;
    counted and logged as a hack."""

    cause: VerdictCause
    """Whose fault a timeout or crash was: "candidate" (a check that ran past its own limit, a crash the candidate
    caused: a failure) or "infrastructure" (not the candidate's doing: masked). Absent means "candidate" (fail
    closed). See fim_rlvr.outcomes."""


class VerifyBatchResult(TypedDict):
    """Service -> client, answer to `verify/batch`."""

    verdicts: list[BatchVerdict]
    """One verdict per item, in the items' order."""


class VerifyProgressParams(TypedDict):
    """Service -> client, notification `verify/progress`, for a batch sent with a `batchId`, while it is checked: sent
    when any check of the service finished (at once after a quiet second, else at most once a second), so a client
    can tell a verifier that works, on this batch or on the ones queued before it, from one that stopped."""

    batchId: str
    """The batch's `batchId`."""
    done: int
    """The batch's items answered so far."""
    total: int
    """The batch's items."""
    serviceDone: int
    """Checks the service finished since it started, for every client: a queued batch's progress is theirs."""


class StatsParams(TypedDict, total=False):
    """Client -> service, request `stats`."""

    token: str
    """The service's token, when it has one."""


class ServiceStats(TypedDict):
    """Service -> client, answer to `stats`: the service's counters since it started."""

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


class TrainProgressParams(TypedDict):
    """Trainer -> host, notification `train/progress`, once per optimiser step."""

    step: int
    """The step just completed (1-based)."""
    totalSteps: int
    """Steps the run will reach."""
    metrics: dict[str, float]
    """Numeric metrics of the step (the metrics.jsonl line's numbers)."""


class _TrainSampleRequired(TypedDict):
    taskId: str
    """The task's id."""
    file: str
    """The task's Lean file, relative to the workspace root."""
    hole: Range
    """LSP range of the hole in that file."""
    kind: HoleKind
    """The hole's kind."""
    candidate: str
    """The cleaned completion that was checked."""
    verdict: VerdictKind
    """The verdict's kind."""
    reward: float
    """The reward it earned."""
    step: int
    """The optimiser step it belongs to."""
    algorithm: AlgorithmName
    """The run's algorithm."""


class TrainSampleParams(_TrainSampleRequired, total=False):
    """Trainer -> host, notification `train/sample`: one verified sample (the fields above, and optionally:)."""

    diagnostics: list[CandidateDiagnostic]
    """What the verifier reported, when anything."""
    cause: VerdictCause
    """For timeout and crashed only: who caused it (fim_rlvr.outcomes; absent means candidate)."""
    turn: int
    """For a repair turn only (TrainConfig repair_turns): which one, 1 for the first repair; absent for a first
    attempt."""


class TrainCheckpointParams(TypedDict):
    """Trainer -> host, notification `train/checkpoint`: a complete checkpoint was written."""

    path: str
    """The checkpoint's folder (runDir/checkpoints/step-N)."""
    step: int
    """The step it holds."""


class TrainLogParams(TypedDict):
    """Trainer -> host, notification `train/log`: a message for the user."""

    level: LogLevel
    """Severity."""
    message: str
    """The text, one line or a few."""


class GroupScore(TypedDict):
    """pass@1 on one group of held-out tasks."""

    passAt1: float
    """Share of the group's tasks proved by the greedy completion."""
    tasks: int
    """Tasks in the group."""


class NoveltyScores(TypedDict, total=False):
    """Held-out pass@1 split by whether each test task's middle occurs in the training split: only the novel tasks
    measure learning. Groups without tasks are absent; unknown holds the tasks the dataset does not mark."""

    novel: GroupScore
    """Test tasks whose middle occurs nowhere in the training split."""
    memorised: GroupScore
    """Test tasks whose middle occurs in the training split."""
    unknown: GroupScore
    """Test tasks the dataset does not mark (beside marked ones)."""


class _TrainEvalRequired(TypedDict):
    stage: EvalStage
    """Before training, after the SFT warm start, or after RL."""
    split: str
    """The split evaluated ("test")."""
    passAt1: float
    """Share of the evaluated holes proved by the greedy completion."""
    byKind: dict[str, float]
    """pass@1 per hole kind."""
    tasks: int
    """Holes evaluated."""


class TrainEvalParams(_TrainEvalRequired, total=False):
    """Trainer -> host, notification `train/eval`: held-out pass@1 (greedy) at one stage of the run (the fields
    above, and optionally:)."""

    byNovelty: NoveltyScores
    """pass@1 on novel and on memorised test tasks, when the dataset marks its test tasks `novel`."""


class TrainDoneParams(TypedDict):
    """Trainer -> host, notification `train/done`: the run ended (the trainer then waits for shutdown)."""

    status: DoneStatus
    """How the run ended."""
    step: int
    """The last completed step."""
    message: str
    """A summary, or for failed runs what happened and what to do."""


# The model process of the host's `hf:PATH` backend (fim_rlvr.generate_stdio): JSON lines with a `type` field.
MODEL_LOAD = "load"
MODEL_GENERATE = "generate"


class ModelLoadRequest(TypedDict):
    """Host -> model process, JSON line `load` (the first request)."""

    type: Literal["load"]
    """The request's kind."""
    path: str
    """A run folder (its latest checkpoint), a checkpoint folder (full or LoRA) or a transformers model folder."""
    threads: int
    """CPU threads the model may use (torch.set_num_threads), so Lean keeps its cores."""


class ModelLoaded(TypedDict):
    """Model process -> host, JSON line `loaded`: the model is ready for generate requests."""

    type: Literal["loaded"]
    """The answer's kind."""
    engine: Literal["vllm", "transformers"]
    """What samples: vLLM (installed, beside a CUDA GPU, a whole model) or transformers `generate`."""
    device: str
    """Where the model runs, e.g. cpu or cuda."""
    tokenizerDir: str
    """The folder of the model's tokenizer, from which the host builds the prompts (as the trainer does)."""


class ModelLoadFailed(TypedDict):
    """Model process -> host, JSON line `load-failed`: the folder holds no model the trainer can load."""

    type: Literal["load-failed"]
    """The answer's kind."""
    message: str
    """What went wrong, naming the folder."""
    hint: str
    """What to do about it."""


class ModelGenerateRequest(TypedDict):
    """Host -> model process, JSON line `generate`: sample n completions of a prompt the host built; answered in
    order, one request at a time, by ModelGenerateResult or ModelGenerateFailed with its id."""

    type: Literal["generate"]
    """The request's kind."""
    id: str
    """Echoed in the answer."""
    prompt: str
    """The prompt text, special tokens as text (tokenized with add_special_tokens=False, as the trainer does)."""
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
    """Text that ends a completion: vLLM stops there; the host's cleaning cuts there whatever the engine did."""


class ModelSample(TypedDict):
    """One sampled completion, decoded with special tokens kept (the host cleans it as the trainer does)."""

    text: str
    """The completion's text."""
    completionTokens: int
    """Its length in tokens."""
    finish: Literal["stop", "length"]
    """stop: the model ended it (end of sequence or a stop); length: maxNewTokens did."""


class ModelGenerateResult(TypedDict):
    """Model process -> host, JSON line `result`: the samples of one generate request."""

    type: Literal["result"]
    """The answer's kind."""
    id: str
    """The request's id."""
    promptTokens: int
    """The prompt's length in tokens."""
    samples: list[ModelSample]
    """n samples, in order."""


class ModelGenerateFailed(TypedDict):
    """Model process -> host, JSON line `failed`: a request it could not answer, or a line that is not a request."""

    type: Literal["failed"]
    """The answer's kind."""
    id: str
    """The request's id ("" when the line had none)."""
    message: str
    """What went wrong, one line."""


ModelAnswer = ModelLoaded | ModelLoadFailed | ModelGenerateResult | ModelGenerateFailed
"""Every JSON line the model process writes."""


@dataclass(frozen=True)
class Verdict:
    """The trainer's view of one BatchVerdict."""

    task_id: str
    """The task's id."""
    kind: str
    """One of VERDICT_KINDS."""
    reward: float
    """The reward the host computed."""
    reward_metrics: dict[str, float] = field(default_factory=dict)
    """The reward's components."""
    diagnostics: tuple[CandidateDiagnostic, ...] = ()
    """The verifier's messages."""
    elapsed_ms: float = 0.0
    """Wall time of the check."""
    cached: bool = False
    """Answered from the verifier's cache."""
    cause: str | None = None
    """For timeout and crashed: "candidate" or "infrastructure" (fim_rlvr.outcomes.cause_of); else None."""

    @property
    def outside_candidate_control(self) -> bool:
        """True when the sample says nothing about the candidate (environment, or an infrastructure fault)."""
        return outside_candidate_control(self.kind, self.cause)

    def masked(self, timeout_reward: str = "failure") -> bool:
        """True when the sample leaves training under the run's `timeout_reward` (fim_rlvr.outcomes.is_masked)."""
        return is_masked(self.kind, self.cause, timeout_reward)

    @staticmethod
    def from_wire(wire: BatchVerdict) -> Verdict:
        """Parse one BatchVerdict; an unknown kind becomes `environment` (masked) rather than a crash of the run."""
        kind = wire.get("kind", "environment")
        kind = kind if kind in VERDICT_KINDS else "environment"
        return Verdict(
            task_id=str(wire.get("taskId", "")),
            kind=kind,
            reward=float(wire.get("reward", 0.0)),
            reward_metrics={str(k): float(v) for k, v in (wire.get("rewardMetrics") or {}).items()},
            diagnostics=tuple(wire.get("diagnostics") or ()),
            elapsed_ms=float(wire.get("elapsedMs", 0.0)),
            cached=bool(wire.get("cached", False)),
            cause=cause_of(kind, wire.get("cause")),
        )

    @staticmethod
    def not_checked(task_id: str, kind: str, why: str) -> Verdict:
        """A verdict the trainer makes up when the host gave none (its deadline passed, or the batch failed): never
        the candidate's doing, so its cause is infrastructure (masked)."""
        message: CandidateDiagnostic = {"severity": 1, "message": why, "candidateRange": None}
        return Verdict(task_id=task_id, kind=kind, reward=0.0, diagnostics=(message,), cause="infrastructure")
