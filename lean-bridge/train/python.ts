/**
 * Finding a Python that can run the trainer: the one the user named (`--python`), else a virtual
 * environment this program creates and fills on first use under the user's cache folder, keyed by a hash of
 * trainer/pyproject.toml (a changed dependency list gets a fresh environment). torch is pinned to the CPU
 * build that this machine kind installs from disk; plain `torch` would pull a multi-GB CUDA build.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { writeFileAtomic } from "../util/atomicWrite";

export const PINNED_TORCH = "torch==2.13.0";

/** Modules the trainer imports at start-up (import name -> pip name). */
const REQUIRED_MODULES: Record<string, string> = {
  torch: PINNED_TORCH,
  transformers: "transformers",
  tokenizers: "tokenizers",
  numpy: "numpy",
  yaml: "pyyaml",
  pylsp_jsonrpc: "python-lsp-jsonrpc",
};

const CHECK_SCRIPT = [
  "import importlib.util, json, sys",
  `mods = ${JSON.stringify(Object.keys(REQUIRED_MODULES))}`,
  "print(json.dumps({'version': '%d.%d.%d' % sys.version_info[:3], 'ok': sys.version_info >= (3, 10),",
  "  'missing': [m for m in mods if importlib.util.find_spec(m) is None]}))",
].join("\n");

export type PythonResult =
  | { kind: "ok"; python: string; version: string; managed: boolean }
  | { kind: "error"; message: string; hint: string };

interface Inspection {
  version: string;
  ok: boolean;
  missing: string[];
}

/** Runs the interpreter once to read its version and which trainer dependencies it lacks. */
export function inspectPython(
  python: string,
): { kind: "ok"; info: Inspection } | { kind: "error"; message: string } {
  const run = spawnSync(python, ["-c", CHECK_SCRIPT], { encoding: "utf8", timeout: 60_000 });
  if (run.error) return { kind: "error", message: run.error.message };
  if (run.status !== 0)
    return {
      kind: "error",
      message: `it exited with code ${run.status}: ${run.stderr.trim().split("\n").slice(-3).join(" ")}`,
    };
  try {
    const info = JSON.parse(run.stdout.trim().split("\n").pop() ?? "") as Inspection;
    return { kind: "ok", info };
  } catch {
    return {
      kind: "error",
      message: `it did not answer like Python (stdout: ${run.stdout.trim().slice(0, 200)})`,
    };
  }
}

function installCommand(python: string, missing: string[]): string {
  return `${python} -m pip install ${missing.map((m) => REQUIRED_MODULES[m] ?? m).join(" ")}`;
}

/** Checks a user-given interpreter: it must exist, run, be Python >= 3.10 and have the trainer's dependencies. */
export function checkGivenPython(given: string): PythonResult {
  // The trainer runs in the run folder: a relative path must not change meaning there.
  const python = given.includes("/") ? resolve(given) : given;
  if (python.includes("/") && !existsSync(python))
    return {
      kind: "error",
      message: `--python ${given}: no such file`,
      hint: "Give the path of a Python 3.10+ interpreter, or leave --python out to use the managed environment.",
    };
  const inspected = inspectPython(python);
  if (inspected.kind === "error")
    return {
      kind: "error",
      message: `--python ${given} could not be used: ${inspected.message}`,
      hint: "Give the path of a Python 3.10+ interpreter, or leave --python out to use the managed environment.",
    };
  const { info } = inspected;
  if (!info.ok)
    return {
      kind: "error",
      message: `${python} is Python ${info.version}; the trainer needs 3.10 or newer`,
      hint: "Give a newer interpreter with --python.",
    };
  if (info.missing.length > 0)
    return {
      kind: "error",
      message: `${python} lacks the trainer's dependencies: ${info.missing.join(", ")}`,
      hint: `Install them with: ${installCommand(python, info.missing)}  (or leave --python out to use the managed environment)`,
    };
  return { kind: "ok", python, version: info.version, managed: false };
}

/** The dependency list of trainer/pyproject.toml ([project] dependencies), with torch pinned. */
export function trainerDependencies(pyproject: string): string[] {
  const block = /^dependencies\s*=\s*\[([\s\S]*?)\]/m.exec(pyproject);
  const deps = block ? [...block[1]!.matchAll(/"([^"]+)"/g)].map((m) => m[1]!) : [];
  return [PINNED_TORCH, ...deps.filter((d) => !/^torch\b/.test(d))];
}

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "fim-rlvr");
}

export function managedVenvDir(trainerRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  const pyproject = readFileSync(join(trainerRoot, "pyproject.toml"));
  return join(cacheRoot(env), `venv-${createHash("sha256").update(pyproject).digest("hex").slice(0, 12)}`);
}

export interface ManagedVenvOptions {
  trainerRoot: string;
  /** The interpreter the environment is made from (default: python3 on PATH). */
  basePython?: string;
  /** Where the environment lives (default: the cache folder, keyed by the pyproject hash). */
  dir?: string;
  /** Each line pip prints, and the steps taken. */
  onProgress?: (line: string) => void;
}

/** Runs a command, streaming its output lines; resolves with its exit code (or the spawn error). */
function runStreaming(
  argv: string[],
  onLine: (line: string) => void,
): Promise<{ code: number | null; error?: string; tail: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    let tail = "";
    let partial = "";
    const take = (chunk: Buffer) => {
      const text = partial + chunk.toString("utf8");
      const lines = text.split(/\r?\n|\r/);
      partial = lines.pop() ?? "";
      for (const line of lines) {
        tail = (tail + line + "\n").slice(-4000);
        if (line.trim()) onLine(line);
      }
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.once("error", (error) => resolve({ code: null, error: error.message, tail }));
    child.once("close", (code) => resolve({ code, tail }));
  });
}

/** The managed environment at `dir`, when one is there and complete (its `.complete` marker is written last). */
function completeVenv(dir: string): PythonResult | undefined {
  const python = join(dir, "bin", "python");
  if (!existsSync(join(dir, ".complete")) || !existsSync(python)) return undefined;
  const checked = checkGivenPython(python);
  return checked.kind === "ok" ? { ...checked, managed: true } : undefined;
}

/**
 * The managed environment: made with `python3 -m venv` and filled with `pip install torch==2.13.0 <the
 * trainer's dependencies>` on first use. It is built in a staging folder of this process's own and renamed into
 * place when complete (a venv run as `python -m` does not depend on its folder's name), so an interrupted install
 * never looks finished and two runs started at once on a fresh machine (bench:seeds --jobs 2, two cluster jobs)
 * never build into, or delete, the same folder: the first to finish is used by both.
 */
export async function managedPython(options: ManagedVenvOptions): Promise<PythonResult> {
  const dir = options.dir ?? managedVenvDir(options.trainerRoot);
  const say = options.onProgress ?? (() => undefined);
  const ready = completeVenv(dir);
  if (ready) return ready;
  if (existsSync(dir)) {
    say(`the managed environment ${dir} is incomplete; rebuilding it`);
    // Moved aside first: the rename is atomic, so a run starting now sees it either whole or gone.
    const stale = `${dir}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
    try {
      renameSync(dir, stale);
      rmSync(stale, { recursive: true, force: true });
    } catch {
      // Another run moved or replaced it first.
    }
  }
  const base = options.basePython ?? "python3";
  const inspected = inspectPython(base);
  if (inspected.kind === "error" || !inspected.info.ok)
    return {
      kind: "error",
      message: `no Python 3.10+ to build the trainer's environment from (${base}: ${inspected.kind === "error" ? inspected.message : `version ${inspected.info.version}`})`,
      hint: "Install Python 3.10 or newer with venv support (Debian/Ubuntu: apt install python3 python3-venv), or pass --python PATH.",
    };
  const staging = `${dir}.building-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    const stagedPython = join(staging, "bin", "python");
    const steps: string[][] = [
      [base, "-m", "venv", staging],
      [
        stagedPython,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        ...trainerDependencies(readFileSync(join(options.trainerRoot, "pyproject.toml"), "utf8")),
      ],
    ];
    for (const argv of steps) {
      const shown = argv.map((a) => (/[\s"'<>|&;]/.test(a) ? `'${a}'` : a)).join(" ");
      say(`$ ${shown}`);
      const ran = await runStreaming(argv, say);
      if (ran.code !== 0)
        return {
          kind: "error",
          message: `setting up the trainer's Python environment failed (${ran.error ?? `exit code ${ran.code}`}):\n${ran.tail.trim().split("\n").slice(-8).join("\n")}`,
          hint: `Run it yourself to see why:\n  ${shown}\nor pass --python PATH to an interpreter that has torch, transformers and tokenizers.`,
        };
    }
    const checked = checkGivenPython(stagedPython);
    if (checked.kind === "error") return checked;
    writeFileAtomic(join(staging, ".complete"), new Date().toISOString() + "\n");
    try {
      renameSync(staging, dir);
    } catch (error) {
      // Another run put its complete environment there first: use that one.
      const theirs = completeVenv(dir);
      if (theirs) return theirs;
      return {
        kind: "error",
        message: `could not move the trainer's Python environment into ${dir}: ${(error as Error).message}`,
        hint: `Remove ${dir} and run again, or pass --python PATH.`,
      };
    }
    const placed = completeVenv(dir);
    return (
      placed ?? {
        kind: "error",
        message: `the trainer's Python environment in ${dir} does not run after being moved there`,
        hint: `Remove ${dir} and run again, or pass --python PATH.`,
      }
    );
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** `--python` when given, else the managed environment. */
export async function findPython(options: ManagedVenvOptions & { python?: string }): Promise<PythonResult> {
  if (options.python) return checkGivenPython(options.python);
  return managedPython(options);
}
