/**
 * Which verifier answered. Decided from what the server says about itself in `initialize` (serverInfo),
 * never by importing the simulator: verify/ must not depend on simulator code to know a name.
 */
import type { LeanServer } from "../server/leanServer";
import type { VerifierIdentity } from "./verdict";

/**
 * Any server whose serverInfo name contains this word is the simulator (its name is
 * "fim-rlvr Lean server simulator"; test/unit/serverParts.test.ts holds the two together). Lean's own
 * server calls itself "Lean 4 Server".
 */
export const SIMULATOR_NAME_MARKER = "simulator";

export function identify(server: LeanServer, toolchain: string | undefined): VerifierIdentity {
  const name = server.serverName;
  const version = server.initializeResult?.serverInfo?.version ?? "?";
  if (name.toLowerCase().includes(SIMULATOR_NAME_MARKER)) {
    // The oracle file it judges with, which it names in parentheses (simulator/server.ts `simulatorName`).
    const oracle = /\(oracle: (.+)\)$/.exec(name)?.[1];
    const judged = oracle ? ` with oracle ${oracle}` : "";
    return { kind: "simulator", version, label: `simulator ${version}${judged} (not Lean)` };
  }
  const tc = toolchain ?? "unknown toolchain";
  return { kind: "lean", version: tc, label: `Lean (${tc})` };
}
