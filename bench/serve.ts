/**
 * npm run bench:serve — checks/s through the TCP verifier service against the pool called in-process, with 1
 * and 4 concurrent clients, at the simulator's 100 ms per check (4 slots). Figures come from the Lean server
 * SIMULATOR (simulated costs, not Lean's). Target: the service costs at most 10% of in-process throughput.
 */
import { cpus } from "node:os";
import { simulatorCommand } from "../lean-bridge/server/launch";
import { VerifierClient } from "../lean-bridge/serve/client";
import type { ServiceItem } from "../lean-bridge/protocol/trainer";
import { VerifierService } from "../lean-bridge/serve/service";
import { VerifierPool } from "../lean-bridge/verify/pool";
import { EXAMPLE } from "../test/helpers";
import { holes, type Hole } from "./workload";

const PER_CHECK_MS = 100;
const SLOTS = 4;
const GROUP = 8;
const ROUNDS = 10;

async function startPool(): Promise<VerifierPool> {
  const started = await VerifierPool.start({
    projectRoot: EXAMPLE,
    launch: { command: [...simulatorCommand(), "--decl-ms", String(PER_CHECK_MS)], cwd: EXAMPLE },
    slots: SLOTS,
    timeoutMs: 120_000,
    memoryPerWorkerMb: 1,
    memoryBudgetMb: 1024,
  });
  if (started.kind !== "ok") throw new Error(started.message);
  return started.pool;
}

/** One GRPO group for a hole: distinct wrong candidates (never cached), `salt` keeps rounds distinct. */
function group(h: Hole, salt: string): HoleItems[] {
  return Array.from({ length: GROUP }, (_, k) => ({
    file: h.task.file,
    hole: h.task.hole,
    candidate: `exact h_${salt}_${k}`,
  }));
}

type HoleItems = Extract<ServiceItem, { file: string }>;
type Verify = (items: HoleItems[]) => Promise<void>;

const asPoolItem = (i: HoleItems) => ({ task: { file: i.file, hole: i.hole }, candidate: i.candidate });

/** `clients` loops, each sending ROUNDS groups (one per batch) for its own holes; checks/s over all of them. */
async function measure(
  clients: number,
  verifyFor: (client: number) => Verify,
  hs: Hole[],
  tag: string,
): Promise<number> {
  const t0 = performance.now();
  let checks = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const verify = verifyFor(c);
      for (let round = 0; round < ROUNDS; round++) {
        // With one client, rounds cycle over all the holes; with four, each client keeps its own hole.
        const h = hs[(clients === 1 ? round : c) % hs.length]!;
        const items = group(h, `${tag}${c}_${round}`);
        await verify(items);
        checks += items.length;
      }
    }),
  );
  return checks / ((performance.now() - t0) / 1000);
}

async function warm(pool: VerifierPool, hs: Hole[]): Promise<void> {
  // One check per hole first, so each hole has a slot holding its declaration (steady state of a run).
  await pool.verifyMany(hs.map((h) => ({ task: h.task, candidate: "exact warm" })));
}

async function inProcess(clients: number, hs: Hole[]): Promise<number> {
  const pool = await startPool();
  await warm(pool, hs);
  const rate = await measure(
    clients,
    () => async (items) => {
      await pool.verifyMany(items.map(asPoolItem));
    },
    hs,
    "p",
  );
  await pool.stop();
  return rate;
}

async function throughService(clients: number, hs: Hole[]): Promise<number> {
  const pool = await startPool();
  await warm(pool, hs);
  const started = await VerifierService.start(pool, {
    host: "127.0.0.1",
    port: 0,
    policy: { kind: "open" },
    queueLimit: 4096,
    reward: "binary",
    tasks: new Map(),
  });
  if (started.kind !== "ok") throw new Error(started.message);
  const service = started.service;
  const connections = Array.from({ length: clients }, () => new VerifierClient([service.address]));
  const rate = await measure(
    clients,
    (c) => async (items) => {
      const result = await connections[c]!.verifyBatch(items);
      if (result.kind !== "ok") throw new Error(result.message);
      if (result.verdicts.some((v) => v.kind !== "failed"))
        throw new Error("expected every candidate to fail");
    },
    hs,
    "s",
  );
  for (const c of connections) c.close();
  await service.stop();
  await pool.stop();
  return rate;
}

function line(label: string, value: string): void {
  process.stdout.write(`${label.padEnd(46)} ${value}\n`);
}

async function main(): Promise<void> {
  process.stdout.write(
    `bench:serve — against the Lean server SIMULATOR (${PER_CHECK_MS} ms per check, simulated), ${SLOTS} slots, ` +
      `GRPO groups of ${GROUP}; ${cpus().length} CPU cores\n`,
  );
  const hs = holes().slice(0, 4);
  for (const clients of [1, 4]) {
    const direct = await inProcess(clients, hs);
    const tcp = await throughService(clients, hs);
    const overhead = 1 - tcp / direct;
    process.stdout.write(
      `\n${clients} concurrent client${clients > 1 ? "s" : ""} (${clients * ROUNDS * GROUP} checks each way)\n`,
    );
    line("   in-process (pool.verifyMany)", `${direct.toFixed(2)} checks/s`);
    line("   through the TCP service (client library)", `${tcp.toFixed(2)} checks/s`);
    line(
      "   service / in-process",
      `${(tcp / direct).toFixed(3)} (overhead ${(overhead * 100).toFixed(1)}%, target <= 10%: ${overhead <= 0.1 ? "met" : "NOT met"})`,
    );
  }
}

void main();
