/**
 * Builds the kernel gate's replay tool for the embedded Lean (nativeReplaySource.ts) on this machine, from our
 * own source: `cc` links it against the libleanshared of the `lean` it will judge for, once, and the result is
 * cached under the embedded install, `${FIM_RLVR_CACHE:-$HOME/.cache/fim-rlvr}/lean/4.35.0-embedded/bin/`,
 * named by a hash of the source and of the library, so a changed source or another Lean build gets its own.
 * The build is atomic (a private name, then a rename), so two verifiers starting at once never run a half-written
 * tool. Nothing here runs a candidate's code.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { NATIVE_REPLAY_SOURCE, NATIVE_REPLAY_VERSION } from "./nativeReplaySource";

/** The shared library the embedded `lean` is built on, and the tool is linked against. */
export const LEAN_SHARED_LIBRARY = "libleanshared.so";

export type NativeReplayTool =
  { kind: "ok"; path: string; libraryDir: string } | { kind: "unavailable"; message: string; action: string };

/** The embedded install's folder (the installer scripts/setup-lean.sh writes bin/lean and lib/ there). */
export function embeddedCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.FIM_RLVR_CACHE || join(env.HOME || homedir(), ".cache", "fim-rlvr");
  return join(cache, "lean", "4.35.0-embedded");
}

/**
 * The embedded `lean` (FIM_EMBEDDED_LEAN first, then the install's bin/lean), when it is executable. The
 * embedded Lean's own locator (lean-bridge/embedded/) says why when it is not; the gate only needs the path.
 */
export function embeddedLeanPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const path of [env.FIM_EMBEDDED_LEAN, join(embeddedCacheDir(env), "bin", "lean")]) {
    if (!path) continue;
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not there, or not executable: the next place.
    }
  }
  return undefined;
}

/**
 * The folder holding the libleanshared that `lean` runs on: the install's lib/ (bin/lean has the rpath
 * $ORIGIN/../lib), the binary's own folder, else what the dynamic loader resolves for it (`ldd`).
 */
export function leanLibraryDir(lean: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let real: string;
  try {
    real = realpathSync(lean);
  } catch {
    return undefined;
  }
  for (const dir of [join(dirname(real), "..", "lib"), dirname(real)])
    if (existsSync(join(dir, LEAN_SHARED_LIBRARY))) return realpathSync(dir);
  const ldd = spawnSync("ldd", [real], { encoding: "utf8", env, timeout: 10_000 });
  const line = (ldd.stdout ?? "").split("\n").find((l) => l.includes(`${LEAN_SHARED_LIBRARY} => `));
  const path = line?.split("=> ")[1]?.split(" (")[0]?.trim();
  return path && existsSync(path) ? dirname(realpathSync(path)) : undefined;
}

/** The tool's cached path for this library: its name carries the source's and the library's fingerprint. */
export function nativeReplayToolPath(libraryDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const library = statSync(join(libraryDir, LEAN_SHARED_LIBRARY));
  const hash = createHash("sha256")
    .update(NATIVE_REPLAY_SOURCE)
    .update(`\0${libraryDir}\0${library.size}\0${library.mtimeMs}`)
    .digest("hex")
    .slice(0, 16);
  return join(embeddedCacheDir(env), "bin", `fimrlvr-replay-v${NATIVE_REPLAY_VERSION}-${hash}`);
}

const BUILD_ACTION =
  "install a C compiler (`cc`, e.g. apt-get install gcc) so the gate can build its replay tool, or pass --kernel-gate off to train on the server's word alone (eval, export --verify and Fill Hole always need the gate)";

/** The replay tool for this `lean`: the cached build, else built now. Never throws. */
export function ensureNativeReplayTool(lean: string, env: NodeJS.ProcessEnv = process.env): NativeReplayTool {
  const libraryDir = leanLibraryDir(lean, env);
  if (!libraryDir)
    return {
      kind: "unavailable",
      message: `could not find the ${LEAN_SHARED_LIBRARY} that ${lean} runs on (not in its lib/ or its folder, and ldd named none)`,
      action: "reinstall the embedded Lean with npm run setup:lean (scripts/setup-lean.sh)",
    };
  const path = nativeReplayToolPath(libraryDir, env);
  if (existsSync(path)) return { kind: "ok", path, libraryDir };
  const staging = `${path}.build-${process.pid}-${Date.now()}`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(`${staging}.c`, NATIVE_REPLAY_SOURCE);
    const cc = env.CC || "cc";
    const built = spawnSync(
      cc,
      [
        "-O1",
        "-o",
        staging,
        `${staging}.c`,
        `-L${libraryDir}`,
        `-l:${LEAN_SHARED_LIBRARY}`,
        `-Wl,-rpath,${libraryDir}`,
      ],
      { encoding: "utf8", env, timeout: 120_000 },
    );
    if (built.error || built.status !== 0) {
      const said = `${built.stderr ?? ""}${built.stdout ?? ""}`.trim().split("\n").slice(-4).join(" / ");
      return {
        kind: "unavailable",
        message: `building the gate's replay tool with \`${cc}\` failed (${built.error ? built.error.message : `exit ${built.status}`})${said ? `: ${said}` : ""}`,
        action: BUILD_ACTION,
      };
    }
    renameSync(staging, path);
    return { kind: "ok", path, libraryDir };
  } catch (error) {
    return {
      kind: "unavailable",
      message: `could not build the gate's replay tool under ${dirname(path)}: ${error instanceof Error ? error.message : String(error)}`,
      action: `make ${dirname(path)} writable, then verify again`,
    };
  } finally {
    rmSync(`${staging}.c`, { force: true });
    rmSync(staging, { force: true });
  }
}
