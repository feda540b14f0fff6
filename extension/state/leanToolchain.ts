/**
 * Where Lean's `lake` is, as the user set it up for the Lean 4 extension: our own `fimRlvr.verifier.lakePath`
 * first, then the Lean 4 extension's `lean4.envPathExtensions` (folders it puts before PATH for its server; relative
 * ones are relative to the workspace folder) and its older `lean4.toolchainPath` (a toolchain whose bin/ holds
 * lake), then PATH, then elan's ~/.elan/bin. Nothing here changes the extension host's `process.env`, which every
 * extension shares: the environment it returns is a copy, given to the processes FIM-RLVR starts.
 */
import { existsSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";

/** The settings that say where Lean is (empty when unset). */
export interface LeanToolchainSettings {
  /** `fimRlvr.verifier.lakePath`: the lake binary. */
  lakePath: string;
  /** `lean4.envPathExtensions`: folders before PATH. */
  envPathExtensions: readonly string[];
  /** `lean4.toolchainPath` (older Lean 4 extensions): a toolchain folder with bin/lake. */
  toolchainPath: string;
}

export interface LeanToolchain {
  /** The lake binary found, if any. */
  lake: string | undefined;
  /** A copy of `base` whose PATH starts with the folders the settings name and lake's own folder. */
  env: NodeJS.ProcessEnv;
}

/** The folders the settings put before PATH, in order, resolved against the workspace folder. */
export function settingFolders(settings: LeanToolchainSettings, workspaceRoot: string | undefined): string[] {
  const absolute = (path: string) =>
    isAbsolute(path) || workspaceRoot === undefined ? path : resolve(workspaceRoot, path);
  return [
    ...settings.envPathExtensions.map((p) => p.trim()).filter(Boolean),
    ...(settings.toolchainPath.trim() ? [join(settings.toolchainPath.trim(), "bin")] : []),
  ].map(absolute);
}

export function leanToolchain(
  settings: LeanToolchainSettings,
  options: {
    base: NodeJS.ProcessEnv;
    home: string;
    workspaceRoot?: string;
    exists?: (path: string) => boolean;
  },
): LeanToolchain {
  const exists = options.exists ?? existsSync;
  const folders = settingFolders(settings, options.workspaceRoot);
  const path = (options.base.PATH ?? "").split(delimiter).filter(Boolean);
  const configured = settings.lakePath.trim();
  const candidates = [
    ...(configured ? [configured] : []),
    ...[...folders, ...path].map((dir) => join(dir, "lake")),
    join(options.home, ".elan", "bin", "lake"),
  ];
  const lake = candidates.find((candidate) => exists(candidate));
  const front = [...(lake ? [dirname(lake)] : []), ...folders];
  const entries = [...new Set([...front, ...path])];
  return { lake, env: { ...options.base, PATH: entries.join(delimiter) } };
}
