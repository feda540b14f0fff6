/** An in-process simulator wired to a LeanServer client through in-memory streams. */
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
  const verifier = VerifierPool.fromServer(started.server, {
    projectRoot: EXAMPLE,
    launch: { command: ["(in-memory)"], cwd: EXAMPLE },
    slots: 2,
    timeoutMs: 5_000,
    memoryPerWorkerMb: 1,
    ...pool,
  });
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
