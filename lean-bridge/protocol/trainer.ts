/**
 * The host <-> trainer protocol, the verifier service's and the model process's: what a generator cannot write. The
 * message types are generated from `trainer.schema.json` beside this file (`trainerWire.ts`, by
 * `npm run protocol:generate`; trainer/fim_rlvr/core/wire.py is the Python side) and re-exported here; this file adds
 * the method names as typed JSON-RPC declarations, the message lists the schema's `x-messages` give, the error codes,
 * the lists of enum values, and `isMaskedVerdict`. test/train/protocol.test.ts checks them against the schema.
 *
 * Transport: JSON-RPC 2.0 with LSP framing, over the trainer's stdin/stdout (TRAINER_MESSAGES) or over TCP to a
 * verifier service (SERVICE_MESSAGES); JSON lines with a `type` field between the `hf:PATH` model backend and its
 * Python process, `python -m fim_rlvr.model.generate_stdio` (MODEL_MESSAGES). Candidates reach the verifier only
 * through a service: the host names the run's in `initialize`. Wire fields are camelCase, except `TrainConfig`, which
 * uses the trainer's snake_case option names (the keys of `--config FILE`).
 */
import { NotificationType, RequestType, RequestType0 } from "vscode-jsonrpc";
import type {
  AlgorithmName,
  AuthParams,
  AuthResult,
  HoleKind,
  InitializeParams,
  InitializeResult,
  ServiceStats,
  ShutdownResult,
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
  VerifyBatchParams,
  VerifyBatchResult,
  VerifyProgressParams,
} from "./trainerWire";

export type * from "./trainerWire";

/** The protocol version both sides must speak; sent in `initialize`. */
export const TRAINER_PROTOCOL_VERSION = 2 as const;

/** JSON-RPC error code of a trainer error whose message says what to do (bad model path, no tasks, no torch). */
export const TRAINER_ERROR_CODE = -32001;

/**
 * The one definition of a masked verdict (a sample the trainer leaves out of the loss): environment, and
 * timeout or crashed caused by the infrastructure. A candidate can never choose a masked outcome: a timeout
 * or crash it causes is its failure.
 */
export function isMaskedVerdict(verdict: { kind: VerdictKind; cause?: VerdictCause }): boolean {
  if (verdict.kind === "environment") return true;
  if (verdict.kind === "timeout" || verdict.kind === "crashed") return verdict.cause === "infrastructure";
  return false;
}

/** The algorithms, the one list in TypeScript (checked against the schema, as the trainer's list is). */
export const ALGORITHM_NAMES = [
  "grpo",
  "drgrpo",
  "dapo",
  "gspo",
  "dgpo",
] as const satisfies readonly AlgorithmName[];
export const HOLE_KINDS: readonly HoleKind[] = ["tactic", "block", "steps", "proof"];

/** The TrainConfig as the host sends it in `initialize` (every key optional). */
export type TrainConfigWire = TrainConfig;

/** Host -> trainer requests. */
export const Initialize = new RequestType<InitializeParams, InitializeResult, void>("initialize");
export const TrainStop = new RequestType<StopParams, StopResult, void>("train/stop");
export const Shutdown = new RequestType0<ShutdownResult, void>("shutdown");

/** Service requests (over TCP); `auth` is the first message of every connection. */
export const Auth = new RequestType<AuthParams, AuthResult, void>("auth");
export const VerifyBatch = new RequestType<VerifyBatchParams, VerifyBatchResult, void>("verify/batch");
export const Stats = new RequestType<StatsParams, ServiceStats, void>("stats");
/** Service -> client notification (over TCP). */
export const VerifyProgress = new NotificationType<VerifyProgressParams>("verify/progress");

/** Service error code: the token is missing or wrong, or the connection did not begin with `auth` (refused and counted). */
export const SERVICE_UNAUTHORIZED = -32010;
/** Service error code: the queue is full; retry the batch later or start more services. */
export const SERVICE_BUSY = -32011;
/** Service error code: malformed params (the message says which field). */
export const SERVICE_INVALID_PARAMS = -32602;

/** Trainer -> host notifications. */
export const TrainProgress = new NotificationType<TrainProgressParams>("train/progress");
export const TrainSample = new NotificationType<TrainSampleParams>("train/sample");
export const TrainCheckpoint = new NotificationType<TrainCheckpointParams>("train/checkpoint");
export const TrainLog = new NotificationType<TrainLogParams>("train/log");
export const TrainEval = new NotificationType<TrainEvalParams>("train/eval");
export const TrainDone = new NotificationType<TrainDoneParams>("train/done");

/**
 * Every method with its direction and the names of its params/result types, as the schema's `x-messages`
 * lists them (the protocol test compares the two).
 */
export const TRAINER_MESSAGES = [
  {
    method: Initialize.method,
    type: "request",
    direction: "host-to-trainer",
    params: "InitializeParams",
    result: "InitializeResult",
  },
  {
    method: TrainStop.method,
    type: "request",
    direction: "host-to-trainer",
    params: "StopParams",
    result: "StopResult",
  },
  {
    method: Shutdown.method,
    type: "request",
    direction: "host-to-trainer",
    params: null,
    result: "ShutdownResult",
  },
  {
    method: TrainProgress.method,
    type: "notification",
    direction: "trainer-to-host",
    params: "TrainProgressParams",
  },
  {
    method: TrainSample.method,
    type: "notification",
    direction: "trainer-to-host",
    params: "TrainSampleParams",
  },
  {
    method: TrainCheckpoint.method,
    type: "notification",
    direction: "trainer-to-host",
    params: "TrainCheckpointParams",
  },
  { method: TrainLog.method, type: "notification", direction: "trainer-to-host", params: "TrainLogParams" },
  { method: TrainEval.method, type: "notification", direction: "trainer-to-host", params: "TrainEvalParams" },
  { method: TrainDone.method, type: "notification", direction: "trainer-to-host", params: "TrainDoneParams" },
] as const;

/** The verifier service's methods, as the schema's `x-serviceMessages` lists them. */
export const SERVICE_MESSAGES = [
  {
    method: Auth.method,
    type: "request",
    direction: "client-to-service",
    params: "AuthParams",
    result: "AuthResult",
  },
  {
    method: VerifyBatch.method,
    type: "request",
    direction: "client-to-service",
    params: "VerifyBatchParams",
    result: "VerifyBatchResult",
  },
  {
    method: Stats.method,
    type: "request",
    direction: "client-to-service",
    params: "StatsParams",
    result: "ServiceStats",
  },
  {
    method: VerifyProgress.method,
    type: "notification",
    direction: "service-to-client",
    params: "VerifyProgressParams",
  },
] as const;

/** The model process's requests with their answers, as the schema's `x-modelMessages` lists them. */
export const MODEL_MESSAGES = [
  {
    type: "load",
    direction: "host-to-model",
    request: "ModelLoadRequest",
    answers: ["ModelLoaded", "ModelLoadFailed"],
  },
  {
    type: "generate",
    direction: "host-to-model",
    request: "ModelGenerateRequest",
    answers: ["ModelGenerateResult", "ModelGenerateFailed"],
  },
] as const;
