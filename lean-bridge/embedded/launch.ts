/**
 * How the embedded Lean's server is started so that it finds the workspace's modules without Lake.
 *
 * Lean's file worker asks Lake for a file's search path (`lake setup-file`, src/Lean/Server/FileWorker/
 * SetupFile.lean) only when a `lake` program exists where `Lean.determineLakePath` looks: the LAKE variable,
 * else `$LEAN_SYSROOT/bin/lake`, else `lake` beside the running `lean`. The embedded install has no `lake`
 * beside its `lean`, so with LAKE and LEAN_SYSROOT removed from the environment the worker takes its
 * "no lakefile" path, whatever lakefile.toml says, and imports come from LEAN_PATH (`initSearchPath`), which
 * names the folder the workspace's modules are built into (build.ts). The same environment serves the
 * builds and the kernel gate.
 */
import { realpathSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { prefixModulesPath } from "../util/projectLayout";
import { IMMEDIATE_REPORTS_FLAG, limited, type Limits } from "../server/launch";
import type { LaunchSpec } from "../server/leanServer";

/** The folder of an install whose `bin/lean` this is (the binary's real path two levels up). */
function installFolder(lean: string): string {
  try {
    return dirname(dirname(realpathSync(lean)));
  } catch {
    return dirname(dirname(lean));
  }
}

/** The environment every embedded `lean` runs in under `root`: LEAN_PATH set, Lake's pointers removed. */
export function embeddedEnv(root: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  // The workspace's modules, then the check documents' compiled prefixes (verify/prefixModules.ts).
  const leanPath = [join(root, ".lake", "build", "lib", "lean"), prefixModulesPath(root)].join(delimiter);
  const env: NodeJS.ProcessEnv = { ...base, LEAN_PATH: leanPath };
  // Either would send the file worker to some other Lean's `lake setup-file` (an elan toolchain's).
  delete env.LAKE;
  delete env.LEAN_SYSROOT;
  return env;
}

/**
 * `lean --server` with reports as soon as they exist and the memory limit, which the watchdog passes on to
 * every file worker; under the CPU limit and the sandbox like any other server command.
 */
export function embeddedServerLaunch(
  lean: string,
  root: string,
  limits: Limits,
  base: NodeJS.ProcessEnv = process.env,
): { spec: LaunchSpec; warning?: string } {
  const command = [lean, "--server", IMMEDIATE_REPORTS_FLAG, `-M${limits.memoryMb}`];
  const env = embeddedEnv(root, base);
  // The install (bin/lean beside lib/) may live under the home, which the sandbox hides: it is shown read-only.
  const wrapped = limited(command, root, limits, env, limits.sandbox ? [installFolder(lean)] : []);
  return {
    spec: { command: wrapped.command, cwd: root, env },
    ...(wrapped.warning ? { warning: wrapped.warning } : {}),
  };
}
