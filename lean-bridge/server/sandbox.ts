/**
 * The OS sandbox (bubblewrap) for every process that runs a candidate's code: the Lean server with its
 * workers, and the kernel gate's compile. Code a candidate writes can run there at elaboration time (a
 * metaprogram, an `eval`-like elaborator with IO), so what it must not reach is out of reach by construction,
 * not by the policy's word:
 *  - the whole file system is read-only (the project with its `.lake/` build folder and packages, the gate's
 *    files, the toolchain), except the folders a caller names writable (the gate's fresh output folder);
 *  - a private, size-bounded `/tmp` (also HOME and TMPDIR inside), gone when the sandbox ends;
 *  - the user's home folder, the host's `/tmp` and `/run` (where sockets such as a container engine's live)
 *    are hidden, and only the paths the command needs to read are shown again, read-only;
 *  - the environment is cleared to an allow-list (no tokens: a key in `LEAN_SERVER_API_KEY` or `HF_TOKEN`
 *    never reaches the candidate);
 *  - its own user, PID, network, IPC and UTS namespaces with every capability dropped: it cannot see or
 *    signal the verifier, has only a loopback network, cannot remount anything writable, and dies with its
 *    parent (the PID namespace goes with its first process, so nothing it started outlives it).
 */
import { existsSync, realpathSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve, sep } from "node:path";

/** Environment variables that reach the sandboxed command, by exact name (everything else is cleared). */
export const SANDBOX_ENV_ALLOWED: readonly string[] = [
  "PATH",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "LEAN_PATH",
  "LEAN_SRC_PATH",
  "LEAN_SYSROOT",
  "LEAN_NUM_THREADS",
  "LEAN_ABORT_ON_PANIC",
  // The script each file worker starts through (server/strays.ts), set by the verifier itself.
  "LEAN_WORKER_PATH",
  "LEAN_CC",
  "LAKE",
  "LAKE_HOME",
  "LAKE_OVERRIDE_LEAN",
  "LAKE_NO_CACHE",
  "ELAN_HOME",
  "ELAN_TOOLCHAIN",
  "FIM_EMBEDDED_LEAN",
  "FIM_RLVR_CACHE",
];

/** Bytes the private `/tmp` may hold: Lean needs little there, and a candidate filling it fills only that. */
export const SANDBOX_TMP_BYTES = 512 * 1024 * 1024;

export interface SandboxOptions {
  /** Folders the command may write (they must exist); nothing else is writable. */
  writable?: readonly string[];
  /** More paths the command must read, where they lie in a hidden folder (home, the host's /tmp). */
  readable?: readonly string[];
  /** The environment the allow-list is taken from (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

/** Whether `path` is `folder` or lies inside it. */
function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/** The path with symbolic links resolved where it exists (a bind must name the real folder). */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** Folders hidden behind an empty file system inside the sandbox. */
function hiddenFolders(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME && isAbsolute(env.HOME) ? real(env.HOME) : undefined;
  const hidden = ["/tmp", "/var/tmp", "/run", "/dev/shm"];
  if (home && home !== "/" && existsSync(home)) hidden.push(home);
  return hidden.filter((f) => existsSync(f));
}

/**
 * Paths the command needs to read besides the project: its toolchain (elan's folder, the embedded Lean's
 * cache, the folder of the command's program), the PATH, and this package with the node running it (the
 * simulator). Only those inside a hidden folder are bound again; the rest of the system is visible anyway.
 */
function neededPaths(command: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME ?? "";
  const paths = [
    env.ELAN_HOME ?? (home ? join(home, ".elan") : ""),
    env.FIM_RLVR_CACHE ?? (home ? join(home, ".cache", "fim-rlvr") : ""),
    env.FIM_EMBEDDED_LEAN ? dirname(dirname(env.FIM_EMBEDDED_LEAN)) : "",
    dirname(dirname(process.execPath)),
    ...(env.PATH ?? "").split(delimiter),
  ];
  for (const word of command) if (isAbsolute(word) && existsSync(word)) paths.push(dirname(word));
  return paths.filter((p) => p !== "" && isAbsolute(p) && existsSync(p));
}

/** The allow-listed environment, as bwrap arguments after `--clearenv`. */
function environment(env: NodeJS.ProcessEnv): string[] {
  const args: string[] = ["--clearenv"];
  for (const name of SANDBOX_ENV_ALLOWED) {
    const value = env[name];
    if (value !== undefined) args.push("--setenv", name, value);
  }
  // Inside, HOME is the private /tmp; the tools found through the real home are named where they are.
  const home = env.HOME;
  if (home && env.ELAN_HOME === undefined && existsSync(join(home, ".elan")))
    args.push("--setenv", "ELAN_HOME", join(home, ".elan"));
  if (home && env.FIM_RLVR_CACHE === undefined && existsSync(join(home, ".cache", "fim-rlvr")))
    args.push("--setenv", "FIM_RLVR_CACHE", join(home, ".cache", "fim-rlvr"));
  args.push("--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp");
  return args;
}

/** The bubblewrap command line that runs `command` in `projectRoot` inside the sandbox. */
export function sandboxed(
  command: readonly string[],
  projectRoot: string,
  options: SandboxOptions = {},
): string[] {
  const env = options.env ?? process.env;
  const root = real(projectRoot);
  const writable = (options.writable ?? []).map(real);
  const hidden = hiddenFolders(env);
  const args = [
    "bwrap",
    "--unshare-user",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
  ];
  for (const folder of hidden)
    args.push("--size", String(folder === "/tmp" ? SANDBOX_TMP_BYTES : 1 << 20), "--tmpfs", folder);
  // Shown again read-only at the path the command uses (a PATH entry may be a link into elsewhere), parents
  // before children so that a deeper bind is not covered by a shallower one.
  const shown = new Map<string, string>();
  for (const path of [root, ...neededPaths(command, env), ...(options.readable ?? [])].map((p) => resolve(p)))
    if (hidden.some((h) => within(path, h))) shown.set(path, real(path));
  const depth = (p: string) => p.split(sep).length;
  for (const [at, from] of [...shown].sort(([a], [b]) => depth(a) - depth(b)))
    args.push("--ro-bind", from, at);
  for (const folder of writable) args.push("--bind", folder, folder);
  // The hiding folders themselves read-only: a candidate cannot even fill them.
  for (const folder of hidden) if (folder !== "/tmp" && !shown.has(folder)) args.push("--remount-ro", folder);
  args.push(...environment(env), "--chdir", root, "--", ...command);
  return args;
}
