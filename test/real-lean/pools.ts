/** A verifier pool on the real Lean server of a built Lake project, for the real-Lean tests. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { buildLaunch, readToolchain } from "../../lean-bridge/server/launch";
import type { CandidatePolicy } from "../../lean-bridge/verify/policy";
import { VerifierPool, type PoolOptions } from "../../lean-bridge/verify/pool";
import { EXAMPLE } from "../helpers";

export interface LeanPoolOptions {
  /** The Lake project (lean-env by default). It is built first (`lake build`) unless `build` is false. */
  root?: string;
  slots?: number;
  policy?: CandidatePolicy;
  build?: boolean;
  /** The kernel gate for proofs (lean-bridge/verify/gateStage.ts); none by default. */
  kernelGate?: PoolOptions["kernelGate"];
  /** Run the server in the sandbox (lean-bridge/server/sandbox.ts); off by default. */
  sandbox?: boolean;
}

export async function leanPool(options: LeanPoolOptions = {}): Promise<VerifierPool> {
  const root = options.root ?? EXAMPLE;
  if (options.build !== false) {
    const built = spawnSync("lake", ["build"], { cwd: root, encoding: "utf8" });
    assert.equal(built.status, 0, `lake build failed in ${root}:\n${built.stdout}\n${built.stderr}`);
  }
  const launch = buildLaunch({ kind: "lake" }, root, {
    memoryMb: 4096,
    cpuSeconds: 0,
    sandbox: options.sandbox ?? false,
  });
  assert.equal(launch.kind, "ok");
  if (launch.kind !== "ok") throw new Error("unreachable");
  const started = await VerifierPool.start({
    projectRoot: root,
    launch: launch.spec,
    slots: options.slots ?? 1,
    timeoutMs: 120_000,
    memoryPerWorkerMb: 4096,
    toolchain: readToolchain(root),
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.kernelGate ? { kernelGate: options.kernelGate } : {}),
  });
  if (started.kind !== "ok") throw new Error(`${started.message}\n${started.stderr}`);
  return started.pool;
}
