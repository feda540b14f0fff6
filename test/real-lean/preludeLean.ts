/**
 * Runs check files against the project's own prelude (lean-prelude/) on the embedded Lean 4.35.0, which
 * has no standard library: it finds the binary, builds a temporary copy of the prelude in import order into
 * the layout Lake uses, and runs `lean --json` on a file that imports it. Test-only: the verifier's own
 * embedded-Lean code lives in lean-bridge/embedded/.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, sep } from "node:path";
import { REPO } from "../helpers";

/** The prelude workspace in this repository. */
export const PRELUDE_ROOT = join(REPO, "lean-prelude");

/**
 * Puts the project's prelude library into a workspace at `root`: its modules only (FimPrelude.lean and
 * FimPrelude/, so `import FimPrelude` names a module of that workspace), never its lakefile, toolchain or a build
 * folder left by building it in place (which would make the copy look built). `from` is another copy of it.
 */
export function copyPreludeLibrary(root: string, from: string = PRELUDE_ROOT): void {
  const notBuilt = (src: string) => !src.split(sep).some((part) => part === ".lake" || part === ".fim-rlvr");
  cpSync(join(from, "FimPrelude"), join(root, "FimPrelude"), { recursive: true, filter: notBuilt });
  cpSync(join(from, "FimPrelude.lean"), join(root, "FimPrelude.lean"));
}

/** Every `lean` call here is a prelude-sized file; a minute means something hangs. */
const LEAN_TIMEOUT_MS = 60_000;

export type EmbeddedLean = { kind: "found"; path: string } | { kind: "missing"; reason: string };

/**
 * The embedded `lean`: FIM_EMBEDDED_LEAN first, then the installed location under the cache
 * (`${FIM_RLVR_CACHE:-~/.cache/fim-rlvr}/lean/4.35.0-embedded/bin/lean`).
 */
export function findEmbeddedLean(env: NodeJS.ProcessEnv = process.env): EmbeddedLean {
  const given = env.FIM_EMBEDDED_LEAN;
  if (given) {
    return existsSync(given)
      ? { kind: "found", path: given }
      : { kind: "missing", reason: `FIM_EMBEDDED_LEAN=${given} does not exist` };
  }
  const cache = env.FIM_RLVR_CACHE || join(homedir(), ".cache", "fim-rlvr");
  const installed = join(cache, "lean", "4.35.0-embedded", "bin", "lean");
  if (existsSync(installed)) return { kind: "found", path: installed };
  return {
    kind: "missing",
    reason:
      `no embedded Lean: FIM_EMBEDDED_LEAN is unset and ${installed} does not exist ` +
      "(scripts/setup-lean.sh installs it)",
  };
}

/** One message of `lean --json`. Lines and columns are as Lean prints them (line 1-based, column 0-based). */
export interface LeanMessage {
  severity: "error" | "warning" | "information";
  pos: { line: number; column: number };
  data: string;
}

export interface LeanRun {
  /** The exit status of `lean` (1 when the file has an error). */
  status: number | null;
  messages: LeanMessage[];
  /** Whatever `lean` wrote that was not a JSON message (a crash, a usage error). */
  other: string;
}

/** The modules of the prelude in the order its root module imports them (each imports only earlier ones). */
export function preludeModules(root: string = PRELUDE_ROOT): string[] {
  const text = readFileSync(join(root, "FimPrelude.lean"), "utf8");
  return [...text.matchAll(/^import (FimPrelude\.[A-Za-z]+)$/gm)].map((m) => m[1]!);
}

function runLean(lean: string, args: string[], cwd: string, leanPath: string): LeanRun {
  const r = spawnSync(lean, ["--json", ...args], {
    cwd,
    encoding: "utf8",
    timeout: LEAN_TIMEOUT_MS,
    env: { ...process.env, LEAN_PATH: leanPath },
  });
  const messages: LeanMessage[] = [];
  const other: string[] = [];
  for (const line of `${r.stdout ?? ""}`.split("\n")) {
    if (!line.trim()) continue;
    try {
      const m = JSON.parse(line) as LeanMessage;
      messages.push({ severity: m.severity, pos: m.pos, data: m.data });
    } catch {
      other.push(line);
    }
  }
  if (r.error) other.push(`${r.error.message}`);
  if (r.stderr) other.push(r.stderr);
  return { status: r.status, messages, other: other.join("\n") };
}

export type PreludeBuild =
  | { kind: "built"; root: string; leanPath: string; modules: Record<string, LeanRun> }
  | { kind: "failed"; module: string; run: LeanRun };

/**
 * Copies lean-prelude/ (without its build folder) to a temporary directory and compiles its modules in
 * import order with `lean -o … -i …`, into `.lake/build/lib/lean` as `lake build` would. The copy's parent
 * directory is the caller's to remove (check files are written beside the copy).
 */
export function buildPrelude(lean: string): PreludeBuild {
  const root = join(mkdtempSync(join(tmpdir(), "fim-prelude-")), "lean-prelude");
  cpSync(PRELUDE_ROOT, root, { recursive: true, filter: (src) => !src.split(sep).includes(".lake") });
  const leanPath = join(root, ".lake", "build", "lib", "lean");
  mkdirSync(join(leanPath, "FimPrelude"), { recursive: true });
  const modules: Record<string, LeanRun> = {};
  for (const module of [...preludeModules(root), "FimPrelude"]) {
    const rel = module.replace(/\./g, "/");
    const run = runLean(
      lean,
      ["-o", join(leanPath, `${rel}.olean`), "-i", join(leanPath, `${rel}.ilean`), `${rel}.lean`],
      root,
      leanPath,
    );
    modules[module] = run;
    if (run.status !== 0) return { kind: "failed", module, run };
  }
  return { kind: "built", root, leanPath, modules };
}

/** Elaborates `text` (a file that starts with `prelude` and imports FimPrelude) against a built prelude. */
export function checkWithPrelude(
  lean: string,
  build: { root: string; leanPath: string },
  text: string,
): LeanRun {
  const dir = mkdtempSync(join(build.root, "..", "check-"));
  const file = join(dir, "Check.lean");
  writeFileSync(file, text);
  return runLean(lean, [file], dir, build.leanPath);
}

/** The messages of one severity, for assertions that name what Lean said. */
export function said(run: LeanRun, severity: LeanMessage["severity"]): string[] {
  return run.messages.filter((m) => m.severity === severity).map((m) => m.data);
}
