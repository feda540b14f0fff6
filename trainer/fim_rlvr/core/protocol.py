"""The host <-> trainer protocol and the verifier service's, as far as a generator cannot write it: method names, error
codes, the lists of enum values, and `Verdict`, the trainer's view of a BatchVerdict. The message types themselves
(every `$defs` entry of lean-bridge/protocol/trainer.schema.json, the source of truth) are generated into wire.py
(`npm run protocol:generate`; tests/test_protocol_generated.py checks that regenerating changes nothing) and re-exported
here, so the rest of the trainer imports the protocol from one place.

JSON-RPC 2.0 with LSP framing, over the trainer's stdin/stdout (the host's requests, the trainer's notifications) or
over TCP to a verifier service (`verify/batch`, `stats`): the only road from a trainer process to the verifier. Wire
fields are camelCase, except `InitializeParams.config`, which is the trainer's snake_case TrainConfig.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import get_args

from .outcomes import cause_of, is_masked, outside_candidate_control
from .wire import (
    AlgorithmName,
    AuthParams,
    AuthResult,
    BatchVerdict,
    CandidateDiagnostic,
    GroupScore,
    HeldOutScores,
    HoleItem,
    HoleKind,
    InitializeParams,
    InitializeResult,
    ModelAnswer,
    ModelGenerateFailed,
    ModelGenerateRequest,
    ModelGenerateResult,
    ModelLoaded,
    ModelLoadFailed,
    ModelLoadRequest,
    ModelSample,
    NoveltyScores,
    Position,
    Range,
    ReportTarget,
    ServiceItem,
    ServiceStats,
    StatsParams,
    StopParams,
    StopResult,
    TrainCheckpointParams,
    TrainConfig,
    TrainDoneParams,
    TrainEvalParams,
    TrainLogParams,
    TrainProgressParams,
    TrainSampleParams,
    VerdictCause,
    VerdictKind,
    VerifierBudget,
    VerifierIdentity,
    VerifierServiceAddress,
    VerifyBatchParams,
    VerifyBatchResult,
    VerifyItem,
    VerifyProgressParams,
)

__all__ = [
    "ALGORITHM_NAMES",
    "AUTH",
    "HOLE_KINDS",
    "INITIALIZE",
    "MODEL_GENERATE",
    "MODEL_LOAD",
    "PROTOCOL_VERSION",
    "SERVICE_BUSY",
    "SERVICE_INVALID_PARAMS",
    "SERVICE_UNAUTHORIZED",
    "SHUTDOWN",
    "STATS",
    "TRAINER_ERROR",
    "TRAIN_CHECKPOINT",
    "TRAIN_DONE",
    "TRAIN_EVAL",
    "TRAIN_LOG",
    "TRAIN_PROGRESS",
    "TRAIN_SAMPLE",
    "TRAIN_STOP",
    "VERDICT_KINDS",
    "VERIFY_BATCH",
    "VERIFY_PROGRESS",
    "AlgorithmName",
    "AuthParams",
    "AuthResult",
    "BatchVerdict",
    "CandidateDiagnostic",
    "GroupScore",
    "HeldOutScores",
    "HoleItem",
    "HoleKind",
    "InitializeParams",
    "InitializeResult",
    "ModelAnswer",
    "ModelGenerateFailed",
    "ModelGenerateRequest",
    "ModelGenerateResult",
    "ModelLoadFailed",
    "ModelLoadRequest",
    "ModelLoaded",
    "ModelSample",
    "NoveltyScores",
    "Position",
    "Range",
    "ReportTarget",
    "ServiceItem",
    "ServiceStats",
    "StatsParams",
    "StopParams",
    "StopResult",
    "TrainCheckpointParams",
    "TrainConfig",
    "TrainDoneParams",
    "TrainEvalParams",
    "TrainLogParams",
    "TrainProgressParams",
    "TrainSampleParams",
    "Verdict",
    "VerdictCause",
    "VerdictKind",
    "VerifierBudget",
    "VerifierIdentity",
    "VerifierServiceAddress",
    "VerifyBatchParams",
    "VerifyBatchResult",
    "VerifyItem",
    "VerifyProgressParams",
]

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
AUTH = "auth"
"""The first request of every connection to a service (params AuthParams: the token); nothing else is read before it."""
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

# The model process of the host's `hf:PATH` backend (fim_rlvr.model.generate_stdio): JSON lines with a `type` field.
MODEL_LOAD = "load"
MODEL_GENERATE = "generate"

ALGORITHM_NAMES: tuple[str, ...] = get_args(AlgorithmName)
"""The algorithms under their published names: the one list in Python (the registry, the catalog and TrainConfig
take it from here)."""
VERDICT_KINDS: tuple[str, ...] = get_args(VerdictKind)
HOLE_KINDS: tuple[str, ...] = get_args(HoleKind)


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
    """For timeout and crashed: "candidate" or "infrastructure" (fim_rlvr.core.outcomes.cause_of); else None."""

    @property
    def outside_candidate_control(self) -> bool:
        """True when the sample says nothing about the candidate (environment, or an infrastructure fault)."""
        return outside_candidate_control(self.kind, self.cause)

    def masked(self, timeout_reward: str = "failure") -> bool:
        """True when the sample leaves training under the run's `timeout_reward` (fim_rlvr.core.outcomes.is_masked)."""
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
    def not_checked(task_id: str, kind: str, why: str, cause: str = "infrastructure") -> Verdict:
        """A verdict the trainer makes up when the host gave none: a batch answered with an error (cause
        infrastructure, masked), or one the verifier made no progress on twice (cause candidate, counted:
        fim_rlvr.verifier.check)."""
        message: CandidateDiagnostic = {"severity": 1, "message": why, "candidateRange": None}
        return Verdict(task_id=task_id, kind=kind, reward=0.0, diagnostics=(message,), cause=cause_of(kind, cause))
