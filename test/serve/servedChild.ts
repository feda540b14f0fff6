/**
 * A verifier service with the fake verifier in a process of its own, so that a test measures the service's memory
 * and nothing of its clients. Run with --expose-gc: argv[2] is the JSON of its connection limits, argv[3] of its
 * frame bounds (over DEFAULT_FRAME_BOUNDS). It prints `port N`, then answers each `memory` line on stdin with the
 * JSON of process.memoryUsage() after a full collection (with `maxRss`, the peak), and each `stats` line with the service's stats.
 */
import { createInterface } from "node:readline";
import { DEFAULT_FRAME_BOUNDS } from "../../lean-bridge/serve/frameBounds";
import { VerifierService } from "../../lean-bridge/serve/service";
import { GatedVerifier } from "./fakes";

async function main(): Promise<void> {
  const started = await VerifierService.start(new GatedVerifier(), {
    host: "127.0.0.1",
    port: 0,
    policy: { kind: "open" },
    queueLimit: 100,
    reward: "binary",
    tasks: new Map(),
    connectionLimits: JSON.parse(process.argv[2]!),
    frameBounds: { ...DEFAULT_FRAME_BOUNDS, ...JSON.parse(process.argv[3] ?? "{}") },
  });
  if (started.kind !== "ok") throw new Error(started.message);
  const service = started.service;
  process.stdout.write(`port ${service.address.port}\n`);
  const gc = (globalThis as { gc?: () => void }).gc;
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "memory") {
      gc?.();
      // maxRss: the peak resident set so far (resourceUsage gives KiB).
      const maxRss = process.resourceUsage().maxRSS * 1024;
      process.stdout.write(`${JSON.stringify({ ...process.memoryUsage(), maxRss })}\n`);
    } else if (line === "stats")
      process.stdout.write(`${JSON.stringify({ ...service.stats(), ...service.admission })}\n`);
  }
  await service.stop();
}

void main();
