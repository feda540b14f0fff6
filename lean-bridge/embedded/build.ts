/**
 * Builds a workspace's own modules with the embedded `lean`, as `lake build` does for a workspace without
 * dependencies: in import order, each into `.lake/build/lib/lean/A/B.olean` (and its `.ilean`), with
 * LEAN_PATH naming that folder so each finds the ones it imports. A module whose source and imports have not
 * changed since its last build is skipped: a stamp beside its .olean holds the hash of the Lean version, its
 * text and its imports' stamps (Lake's own traces are not written; a later `lake build` rebuilds once).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { embeddedEnv } from "./launch";
import type { WorkspaceModule } from "./workspace";

/** Lake's library output folder, which LEAN_PATH names for the server and the gate. */
export function buildLibDir(root: string): string {
  return join(root, ".lake", "build", "lib", "lean");
}

export interface BuildOptions {
  /** The embedded `lean`. */
  lean: string;
  /** `lean --version`'s text: a new Lean rebuilds everything. */
  versionText: string;
  /** Lean's `-M` for each module's build, MB. */
  memoryMb: number;
  /** The time one module's build may take, ms. */
  timeoutMs: number;
}

export type ModuleBuild = { kind: "built" } | { kind: "up-to-date" } | { kind: "failed"; message: string };

export interface BuildReport {
  /** Each module's result, in build order; modules after a failed import are `failed` too. */
  results: Map<string, ModuleBuild>;
  built: number;
  upToDate: number;
  failed: number;
}

interface Output {
  olean: string;
  ilean: string;
  stamp: string;
}

function outputsOf(root: string, module: WorkspaceModule): Output {
  const base = join(buildLibDir(root), ...module.name.split("."));
  return { olean: `${base}.olean`, ilean: `${base}.ilean`, stamp: `${base}.fim-rlvr-hash` };
}

/**
 * What the workspace's build is, in one string: every module's stamp (the hash of the Lean version, its source
 * and its imports' stamps), in module order. A module compiled on top of the build (a check document's prefix)
 * is keyed by it, so a rebuilt library never reuses one compiled against the old.
 */
export function buildIdentity(root: string, modules: readonly WorkspaceModule[]): string {
  return modules.map((m) => `${m.name}=${readStamp(outputsOf(root, m).stamp) ?? "unbuilt"}`).join("\n");
}

function readStamp(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}

/** Runs `lean -R root -o … -i … file`; resolves with Lean's own words when it fails. */
function compile(
  root: string,
  module: WorkspaceModule,
  out: Output,
  options: BuildOptions,
): Promise<string | undefined> {
  mkdirSync(dirname(out.olean), { recursive: true });
  const args = ["-R", root, "-o", out.olean, "-i", out.ilean, `-M${options.memoryMb}`, module.file];
  return new Promise((done) => {
    execFile(
      options.lean,
      args,
      {
        cwd: root,
        env: embeddedEnv(root),
        timeout: options.timeoutMs,
        killSignal: "SIGKILL",
        maxBuffer: 16 * 1024 * 1024,
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        if (!error) return done(undefined);
        const said = `${stdout}${stderr}`.trim();
        if (error.killed || error.signal)
          return done(
            `lean was stopped after ${Math.round(options.timeoutMs / 1000)} s (${error.signal ?? "killed"})${said ? `: ${said}` : ""}`,
          );
        done(said || error.message);
      },
    );
  });
}

/** Builds `modules` (already in import order) under `root`; never throws for Lean's failures. */
export async function buildWorkspace(
  root: string,
  modules: readonly WorkspaceModule[],
  options: BuildOptions,
): Promise<BuildReport> {
  const results = new Map<string, ModuleBuild>();
  const stamps = new Map<string, string>();
  const report: BuildReport = { results, built: 0, upToDate: 0, failed: 0 };
  for (const module of modules) {
    const failedImport = module.imports.find((m) => results.get(m)?.kind === "failed");
    if (failedImport !== undefined) {
      const cause = results.get(failedImport);
      results.set(module.name, {
        kind: "failed",
        message: `it imports ${failedImport}, which did not build: ${cause?.kind === "failed" ? cause.message : ""}`,
      });
      report.failed++;
      continue;
    }
    const out = outputsOf(root, module);
    const hash = createHash("sha256").update(options.versionText).update("\0");
    hash.update(readFileSync(join(root, module.file)));
    for (const m of module.imports)
      hash
        .update("\0")
        .update(m)
        .update("\0")
        .update(stamps.get(m) ?? "");
    const stamp = hash.digest("hex");
    stamps.set(module.name, stamp);
    if (readStamp(out.stamp) === stamp && existsSync(out.olean) && existsSync(out.ilean)) {
      results.set(module.name, { kind: "up-to-date" });
      report.upToDate++;
      continue;
    }
    // No stamp while the outputs are being written: an interrupted build is rebuilt next time.
    rmSync(out.stamp, { force: true });
    const error = await compile(root, module, out, options);
    if (error !== undefined) {
      results.set(module.name, { kind: "failed", message: error });
      report.failed++;
      continue;
    }
    writeFileSync(out.stamp, `${stamp}\n`);
    results.set(module.name, { kind: "built" });
    report.built++;
  }
  return report;
}
