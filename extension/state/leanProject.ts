/**
 * Which Lean project a command works on: the innermost folder holding a `lean-toolchain` around the active
 * file (as vscode-lean4 picks the innermost project), else the workspace folders (or their direct children)
 * that are Lean projects. Pure over a tiny file-system interface.
 */
import { dirname, join, relative, isAbsolute } from "node:path";

export interface ProjectFs {
  exists(path: string): boolean;
  /** Names of the sub-folders of `dir` (empty when unreadable). */
  subfolders(dir: string): string[];
}

export function isLeanProject(dir: string, fs: ProjectFs): boolean {
  return fs.exists(join(dir, "lean-toolchain"));
}

function inside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** The innermost Lean project containing `file`, not leaving the workspace folder that holds it. */
export function innermostProject(
  file: string,
  workspaceFolders: readonly string[],
  fs: ProjectFs,
): string | undefined {
  const root = workspaceFolders.filter((w) => inside(file, w)).sort((a, b) => b.length - a.length)[0];
  if (!root) return undefined;
  for (let dir = dirname(file); inside(dir, root); dir = dirname(dir)) {
    if (isLeanProject(dir, fs)) return dir;
    if (dir === root) break;
  }
  return undefined;
}

/** Every Lean project among the workspace folders and their direct children, sorted. */
export function projectsInWorkspace(workspaceFolders: readonly string[], fs: ProjectFs): string[] {
  const found = new Set<string>();
  for (const folder of workspaceFolders) {
    if (isLeanProject(folder, fs)) found.add(folder);
    for (const name of fs.subfolders(folder)) {
      if (name.startsWith(".") || name === "node_modules") continue;
      if (isLeanProject(join(folder, name), fs)) found.add(join(folder, name));
    }
  }
  return [...found].sort();
}

export type ProjectChoice =
  { kind: "one"; project: string } | { kind: "several"; projects: string[] } | { kind: "none" };

export function chooseProject(
  activeFile: string | undefined,
  workspaceFolders: readonly string[],
  fs: ProjectFs,
): ProjectChoice {
  const fromEditor = activeFile ? innermostProject(activeFile, workspaceFolders, fs) : undefined;
  if (fromEditor) return { kind: "one", project: fromEditor };
  const projects = projectsInWorkspace(workspaceFolders, fs);
  if (projects.length === 1) return { kind: "one", project: projects[0]! };
  return projects.length ? { kind: "several", projects } : { kind: "none" };
}
