/**
 * The verifier service's messages (`fim-rlvr serve`): JSON-RPC 2.0 with LSP framing over TCP. `verify/batch`
 * is the trainer protocol's method with the same verdicts (BatchVerdict); an item names a task of the served
 * dataset by `taskId`, or gives `file` and `hole` as verify-batch lines do. Every request carries the
 * service's token (when it has one) as a `token` field of its params. trainer/fim_rlvr/service_client.py
 * mirrors this file.
 */
import { RequestType } from "vscode-jsonrpc";
import type { BatchVerdict, Range, VerifierIdentity, VerifyBatchResult } from "../protocol/trainer";

export type { BatchVerdict, VerifyBatchResult };

/** A candidate for a task of the served dataset, by id (the trainer protocol's VerifyItem). */
export interface TaskItem {
  /** The task's `id` in the served dataset's tasks.jsonl. */
  taskId: string;
  /** The cleaned completion to put in the hole. */
  candidate: string;
}

/** A candidate for any hole of the served project, as a verify-batch line gives it. */
export interface HoleItem {
  /** Path of the Lean file, relative to the served project's root. */
  file: string;
  /** LSP range of the hole (0-based lines, UTF-16 characters). */
  hole: Range;
  /** The completion to put in the hole. */
  candidate: string;
  /** Echoed in the verdict's taskId (default: `file@L:C-L:C`). */
  taskId?: string;
}

export type ServiceItem = TaskItem | HoleItem;

/** Params of `verify/batch` on the service. */
export interface ServiceVerifyParams {
  /** The service's token; required when it has one (always when bound off loopback). */
  token?: string;
  /** Candidates to check; verdicts come back in the same order. */
  items: ServiceItem[];
}

/** Params of `stats`. */
export interface ServiceStatsParams {
  token?: string;
}

/** What `stats` answers: the service's counters since it started. */
export interface ServiceStats {
  /** Seconds since the service started. */
  uptimeSeconds: number;
  /** Items answered (cache hits and rejections included). */
  checks: number;
  /** Items answered per second over the last 10 seconds. */
  checksPerSecond: number;
  /** Items answered from the verifier's cache. */
  cacheHits: number;
  /** Items accepted and not yet answered. */
  queue: number;
  /** The most items the service holds at once; a batch beyond it gets the busy error. */
  queueLimit: number;
  /** Times the verifier (Lean server) was restarted. */
  restarts: number;
  /** Requests refused for a missing or wrong token. */
  refused: number;
  /** Batches refused because the queue was full. */
  busy: number;
  /** Clients connected now. */
  connections: number;
  /** Tasks the service knows by id. */
  tasks: number;
  /** Slots (documents checked in parallel). */
  slots: number;
  /** The verifier behind the service. */
  verifier: VerifierIdentity;
}

/** JSON-RPC error code: the token is missing or wrong (the request was refused and counted). */
export const SERVICE_UNAUTHORIZED = -32010;
/** JSON-RPC error code: the queue is full; retry the batch later or start more services. */
export const SERVICE_BUSY = -32011;
/** JSON-RPC error code: malformed params (the message says which field). */
export const SERVICE_INVALID_PARAMS = -32602;

export const ServiceVerifyBatch = new RequestType<ServiceVerifyParams, VerifyBatchResult, void>(
  "verify/batch",
);
export const ServiceStatsRequest = new RequestType<ServiceStatsParams, ServiceStats, void>("stats");

/** The key that keeps a hole's GRPO group on one service (its snapshots live there). */
export function holeKey(item: ServiceItem): string {
  if ("file" in item) {
    const { start, end } = item.hole;
    return `${item.file}@${start.line}:${start.character}-${end.line}:${end.character}`;
  }
  return `task:${item.taskId}`;
}
