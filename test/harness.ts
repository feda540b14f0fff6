/**
 * An in-process simulator wired to a LeanServer client through in-memory streams, and the verifier pool over a
 * server already connected in this process (the simulator here, or test/hacks/leanLike.ts's scripted server).
 */
import { PassThrough } from "node:stream";
import { LeanServer } from "../lean-bridge/server/leanServer";
import { runSimulator, type Simulator, type SimulatorOptions } from "../lean-bridge/simulator/server";
import { VerifierPool, type PoolOptions } from "../lean-bridge/verify/pool";
import { EXAMPLE } from "./helpers";

export interface Harness {
  server: LeanServer;
  simulator: Simulator;
  pool: VerifierPool;
  exitCodes: number[];
  close(): Promise<void>;
}

/** A pool over `server` for EXAMPLE's project: one slot, 5 s checks, unless `options` say otherwise. */
export function poolOver(server: LeanServer, options: Partial<PoolOptions> = {}): VerifierPool {
  return VerifierPool.fromServer(server, {
    projectRoot: EXAMPLE,
    // Never started: a pool over a given server does not restart it.
    launch: { command: ["(in-process)"], cwd: EXAMPLE },
    slots: 1,
    timeoutMs: 5_000,
    memoryPerWorkerMb: 1,
    ...options,
  });
}

export async function inMemory(
  sim: Partial<SimulatorOptions> = {},
  pool: Partial<PoolOptions> = {},
): Promise<Harness> {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const exitCodes: number[] = [];
  const simulator = runSimulator(toServer, toClient, {
    cwd: pool.projectRoot ?? EXAMPLE,
    onExit: (code) => {
      exitCodes.push(code);
      toClient.end();
    },
    ...sim,
  });
  const started = await LeanServer.connect(toClient, toServer);
  if (started.kind !== "started") throw new Error(started.message);
  const verifier = poolOver(started.server, { slots: 2, ...pool });
  return {
    server: started.server,
    simulator,
    pool: verifier,
    exitCodes,
    async close() {
      await started.server.stop(200);
      toServer.end();
    },
  };
}
