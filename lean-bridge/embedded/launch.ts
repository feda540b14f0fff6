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
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { prefixModulesPath } from "../util/projectLayout";
import { IMMEDIATE_REPORTS_FLAG, limited, which, type Limits } from "../server/launch";
import type { LaunchSpec } from "../server/leanServer";
import { sandboxed } from "../server/sandbox";
import { workerConfinementSource } from "../server/strays";

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
  const install = installFolder(lean);
  const warnings: string[] = [];
  // Before the sandbox's command line is made: it carries the environment it lets through.
  if (limits.sandbox && which("bwrap", env)) {
    const isolated = isolatedWorker(lean, install, root, env);
    if (isolated.kind === "ok") env.LEAN_WORKER_PATH = isolated.path;
    else warnings.push(isolated.warning);
  }
  // The install (bin/lean beside lib/) may live under the home, which the sandbox hides: it is shown read-only.
  const wrapped = limited(command, root, limits, env, limits.sandbox ? [install] : []);
  if (wrapped.warning) warnings.unshift(wrapped.warning);
  return {
    spec: { command: wrapped.command, cwd: root, env },
    ...(warnings.length ? { warning: warnings.join("\n") } : {}),
  };
}

/**
 * The launcher each file worker starts through inside the sandbox (server/strays.ts), built with `cc` beside the
 * install's `lean` (read-only in the sandbox, like the install), named by its source's hash, and used once it is
 * known to work there: a launcher that cannot confine itself would make every worker fail to start, which would
 * look like candidates crashing them.
 */
function isolatedWorker(
  lean: string,
  install: string,
  root: string,
  env: NodeJS.ProcessEnv,
): { kind: "ok"; path: string } | { kind: "unavailable"; warning: string } {
  const unavailable = (why: string) => ({
    kind: "unavailable" as const,
    warning: `fim-rlvr: Lean's file workers are not confined apart in the sandbox (${why}): a process a candidate starts could reach another check while its own runs; it is still killed when its check ends.`,
  });
  const source = workerConfinementSource(realLean(lean));
  const hash = createHash("sha256").update(source).digest("hex").slice(0, 16);
  const path = join(install, "bin", `lean-worker-confined-${hash}`);
  if (!existsSync(path)) {
    const cc = env.CC || "cc";
    if (!which(cc, env)) return unavailable(`no C compiler (\`${cc}\`) to build its launcher`);
    // Built beside its place (a rename across file systems would fail), then renamed into it.
    const dir = mkdtempSync(join(install, "bin", ".fim-worker-launcher-"));
    try {
      const c = join(dir, "launcher.c");
      writeFileSync(c, source);
      const built = spawnSync(cc, ["-O2", "-o", join(dir, "launcher"), c], {
        env,
        encoding: "utf8",
        timeout: 120_000,
      });
      if (built.status !== 0)
        return unavailable(
          `building its launcher with \`${cc}\` failed: ${(built.stderr || built.error?.message || "").trim().split("\n")[0]}`,
        );
      // Another verifier starting at the same moment sees the whole file or none.
      renameSync(join(dir, "launcher"), path);
    } catch (error) {
      return unavailable(
        `could not install its launcher at ${path}: ${error instanceof Error ? error.message : String(error)}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const [program, ...args] = sandboxed([path, "--version"], root, { env, readable: [install] });
  const probe = spawnSync(program!, args, { env, cwd: root, encoding: "utf8", timeout: 30_000 });
  if (probe.status !== 0)
    return unavailable(
      `its launcher did not start there: ${(probe.stderr || probe.error?.message || "").trim().split("\n")[0]}`,
    );
  return { kind: "ok", path };
}

function realLean(lean: string): string {
  try {
    return realpathSync(lean);
  } catch {
    return lean;
  }
}
