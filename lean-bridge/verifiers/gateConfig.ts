/**
 * Which kernel gate a verifier gets (gateStage.ts, kernelGate.ts), from its spec and from what its server said it
 * is: the simulator's model for the simulator, real Lean's for Lean (and for Kimina, where Lean is installed
 * here), with the gate's time limit and concurrency derived from the verifier's.
 */
import { resolve } from "node:path";
import type { Limits } from "../server/launch";
import { SimulatedKernelGate } from "../simulator/kernelReplay";
import { resolveOracle } from "../simulator/reference";
import { DEFAULT_KERNEL_GATE, type KernelGateConfig } from "../verify/gateStage";
import type { KernelGateBackend } from "../verify/kernelGate";
import { LeanKernelGate, localGateToolchain, type GateToolchain } from "../verify/leanKernelGate";
import { refutationLogPath } from "../verify/refutationLog";
import type { VerifierSpec } from "./startVerifier";
import type { VerifierIdentity } from "../verify/verdict";

/**
 * The gate's time limit, as a multiple of a check's: it elaborates the whole document afresh (header, every
 * declaration above the hole) where a check reuses the server's snapshots, then replays. Never under
 * MIN_GATE_TIMEOUT_MS. Running past it fails the proof (never masked), so it is generous.
 */
export const GATE_TIMEOUT_FACTOR = 4;
export const MIN_GATE_TIMEOUT_MS = 120_000;

/** The simulator's settings a command line gives it (`--oracle`, `--header-ms`, `--decl-ms`), for its gate model. */
function simulatorSettings(argv: readonly string[]): { oracle?: string; headerMs?: number; declMs?: number } {
  const after = (flag: string) => {
    const k = argv.indexOf(flag);
    return k >= 0 ? argv[k + 1] : undefined;
  };
  const ms = (flag: string) => {
    const n = Number(after(flag));
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  };
  const oracle = after("--oracle");
  const headerMs = ms("--header-ms");
  const declMs = ms("--decl-ms");
  return {
    ...(oracle !== undefined ? { oracle } : {}),
    ...(headerMs !== undefined ? { headerMs } : {}),
    ...(declMs !== undefined ? { declMs } : {}),
  };
}

/**
 * The gate a verifier of this identity gets: the simulator's model for the simulator (never real Lean's, which
 * it is not), real Lean's otherwise. Undefined for `off`, and where it cannot run by design (see Kimina).
 */
export function kernelGateFor(
  identity: VerifierIdentity,
  projectRoot: string,
  spec: VerifierSpec,
  limits: Limits,
  slots: number,
  checkTimeoutMs: number,
  /** The Lean the verifier's server runs where it is the embedded Lean: its gate runs on the same Lean. */
  serverToolchain?: GateToolchain,
): KernelGateConfig | undefined {
  const mode = spec.kernelGate ?? DEFAULT_KERNEL_GATE;
  if (mode.kind === "off") return undefined;
  let backend: KernelGateBackend;
  if (identity.kind === "simulator") {
    const argv =
      spec.kind === "simulator"
        ? [...(spec.oracle ? ["--oracle", spec.oracle] : []), ...(spec.extraArgs ?? [])]
        : spec.kind === "lean"
          ? (spec.serverCommand ?? [])
          : [];
    const sim = simulatorSettings(argv);
    // The oracle the simulator's server judges with (`--oracle`, else the workspace's own fim-oracle.json): a gate
    // judging without it would refute every proof the server accepted from the oracle's menus.
    const oracle = resolveOracle(
      projectRoot,
      sim.oracle !== undefined ? resolve(projectRoot, sim.oracle) : undefined,
    );
    backend = new SimulatedKernelGate({
      cwd: projectRoot,
      ...(oracle.kind === "ok" ? { oracle: oracle.resolved.oracle } : {}),
      ...(sim.headerMs !== undefined ? { headerMs: sim.headerMs } : {}),
      ...(sim.declMs !== undefined ? { declMs: sim.declMs } : {}),
    });
  } else
    backend = new LeanKernelGate({
      projectRoot,
      limits,
      // A server on the embedded Lean has its gate there too, even where a file of the workspace is one the
      // embedded Lean refuses (that file's checks are `environment`; the others' proofs still need the kernel).
      toolchain: serverToolchain ?? localGateToolchain(projectRoot) ?? { kind: "lake" },
      ...(spec.env ? { env: spec.env } : {}),
    });
  return {
    backend,
    mode,
    timeoutMs: Math.max(MIN_GATE_TIMEOUT_MS, GATE_TIMEOUT_FACTOR * checkTimeoutMs),
    // Each run is a Lean process as large as a worker: half the slots' worth at most.
    concurrency: Math.max(1, Math.ceil(slots / 2)),
    refutationLog: refutationLogPath(projectRoot),
  };
}
