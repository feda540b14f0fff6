/**
 * The run's own verifier service: the pool behind a TCP port on loopback, with a fresh token, serving the run's
 * dataset by task id. It is the only road from a trainer process to the verifier: every process (one, or each
 * rank of an `accelerate launch`) checks its candidates through it, so single-process and multi-process runs take
 * the same path. Every batch it answers is shown to `observe` (the verdicts it sent, rewards included), which
 * keeps the host's figures (checks/s, cache hits) and its stop on a broken Lean environment working.
 */
import type { BatchVerdict, VerifierServiceAddress } from "../protocol/trainer";
import { generateToken } from "../serve/auth";
import { DEFAULT_QUEUE_LIMIT, VerifierService, type ServiceVerifier } from "../serve/service";
import type { TaskTable } from "../serve/items";
import type { RewardMode } from "../verify/rewards";

export interface RunService {
  /** What the trainer is told in `initialize`. */
  readonly address: VerifierServiceAddress;
  /** Stops listening and drops every connection (checks still running are abandoned). */
  stop(): Promise<void>;
}

export type RunServiceStart =
  { kind: "ok"; service: RunService } | { kind: "error"; message: string; hint: string };

export async function startRunService(
  verifier: ServiceVerifier,
  tasks: TaskTable,
  reward: RewardMode,
  observe: (verdicts: readonly BatchVerdict[]) => void,
): Promise<RunServiceStart> {
  const token = generateToken();
  const started = await VerifierService.start(verifier, {
    host: "127.0.0.1",
    port: 0,
    policy: { kind: "token", token, generated: true },
    // Every rank may have a whole step's candidates in flight, plus the next step's (the pipelined loop).
    queueLimit: DEFAULT_QUEUE_LIMIT * 4,
    reward,
    tasks,
    observe,
  });
  if (started.kind === "error")
    return {
      kind: "error",
      message: `could not start the run's verifier service: ${started.message}`,
      hint: "The trainer reaches the verifier over a loopback TCP port; check that this machine allows listening on 127.0.0.1.",
    };
  const service = started.service;
  const { host, port } = service.address;
  return { kind: "ok", service: { address: { host, port, token }, stop: () => service.stop() } };
}
