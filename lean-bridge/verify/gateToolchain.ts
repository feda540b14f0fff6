/**
 * Which Lean the kernel gate runs for a project: the project's own through Lake, or the embedded runtime, which
 * has no standard library on disk and so judges only prelude workspaces (every Lean file begins with `prelude`).
 */
import { readFileSync, readdirSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { which } from "../server/launch";
import { embeddedLeanPath } from "./nativeReplayTool";

/** Which Lean the gate runs: the project's through Lake, or the embedded runtime (no standard library on disk). */
export type GateToolchain =
  | { kind: "lake" }
  /**
   * `lean`: the embedded binary. `buildDir`: where the workspace's modules are built (default
   * PROJECT/.lake/build/lib/lean), the check document's LEAN_PATH.
   */
  | { kind: "embedded"; lean: string; buildDir?: string };

/**
 * The Lean the gate runs on this machine for the project: its own through Lake where `lake` is on PATH, else
 * the embedded Lean where it is installed (or named by FIM_EMBEDDED_LEAN) and the project is one it can judge
 * (a prelude workspace); undefined where there is neither.
 */
export function localGateToolchain(
  projectRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): GateToolchain | undefined {
  if (which("lake", env)) return { kind: "lake" };
  const lean = embeddedLeanPath(env);
  return lean && isPreludeWorkspace(projectRoot) ? { kind: "embedded", lean } : undefined;
}

/** The first token of a Lean file, past whitespace and comments (`--` lines, `/- … -/` blocks, nested). */
function firstToken(text: string): string {
  let k = 0;
  while (k < text.length) {
    if (/\s/.test(text[k]!)) k++;
    else if (text.startsWith("--", k)) {
      const end = text.indexOf("\n", k);
      k = end < 0 ? text.length : end;
    } else if (text.startsWith("/-", k)) {
      let depth = 0;
      while (k < text.length) {
        if (text.startsWith("/-", k)) {
          depth++;
          k += 2;
        } else if (text.startsWith("-/", k)) {
          k += 2;
          if (--depth === 0) break;
        } else k++;
      }
    } else break;
  }
  return /^\S*/.exec(text.slice(k, k + 64))?.[0] ?? "";
}

/**
 * Whether every Lean file of the project (outside hidden folders such as .lake) begins with `prelude`: the
 * only workspaces the embedded Lean, which has no standard library, can judge. At most 20,000 files are read.
 */
export function isPreludeWorkspace(projectRoot: string): boolean {
  let seen = 0;
  const walk = (dir: string): boolean => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return false;
    }
    for (const e of entries) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (!walk(path)) return false;
      } else if (e.isFile() && e.name.endsWith(".lean")) {
        if (++seen > 20_000) return false;
        let text: string;
        try {
          text = readFileSync(path, "utf8");
        } catch {
          return false;
        }
        if (firstToken(text) !== "prelude") return false;
      }
    }
    return true;
  };
  return walk(projectRoot) && seen > 0;
}
