/**
 * The workspace's compiled imports, checked rather than trusted. Every file Lean loads a module from (`.olean`
 * and its `.olean.server`/`.olean.private` parts, `.ir`) under the project, its `.lake/` build folder and
 * packages included, and under a toolchain kept inside the project, is fingerprinted when the verifier starts:
 * its size, modification and change times, inode, and a SHA-256 of its content. A candidate whose code
 * rewrote one (adding `cheat : False` to an import, then crashing its worker so the retry loads the poisoned
 * module) would otherwise have every later proof confirmed on top of it, the kernel gate's included.
 *
 * A sweep compares the tree with the fingerprint: a stat per file and per folder (the fast path; a folder's
 * times change when an entry is added, removed or renamed), and the content hash again only for a file whose
 * stat changed (a `touch` with the same bytes is no change). Sweeps are shared: a caller asks for one that
 * started after a moment (the end of its candidate's last Lean process), and every caller waiting while a
 * sweep runs is served by the next one, so many slots finishing together cost one sweep.
 *
 * The sandbox makes these files read-only to candidates' code in the first place; this is the check that
 * holds where it is off, or if anything gets past it, and that notices a rebuild under a running verifier.
 */
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync, type BigIntStats, type Dirent } from "node:fs";
import { join, relative } from "node:path";

/** Files Lean loads a module from. */
const MODULE_FILE = /\.(olean(\.server|\.private)?|ir)$/;

/** Folders never walked: version control, node's packages, and the verifier's own scratch (the gate's runs). */
const SKIPPED_FOLDERS = new Set([".git", "node_modules", ".fim-rlvr"]);

/** Stats between two turns of the event loop in a sweep (about a millisecond's worth). */
const SWEEP_SLICE = 500;

interface FileMark {
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
  sha256: string;
}

interface FolderMark {
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
}

export type ImportCheck =
  | { kind: "unchanged"; files: number }
  /** `file` is relative to the project root; `change` says what happened to it. */
  | { kind: "tampered"; file: string; change: "rewritten" | "removed" | "added"; message: string };

/**
 * The `rejected` rule of every verdict once the imports changed under the verifier: reward 0, never masked
 * (which candidate wrote the file cannot be told apart, and a masked outcome is one a candidate could choose).
 */
export const IMPORTS_TAMPERED_RULE = "imports-tampered";

/** What a caller must do once the imports changed under the verifier. */
export const IMPORTS_TAMPERED_ACTION =
  "stop this run: rebuild the workspace from a clean checkout (`lake clean && lake build`, fetching packages " +
  "again), find the candidate that wrote it (its code ran with IO at elaboration time), and start the verifier again";

function sameStat(a: FileMark | FolderMark, s: BigIntStats): boolean {
  return a.mtimeNs === s.mtimeNs && a.ctimeNs === s.ctimeNs && a.ino === s.ino;
}

function statOf(path: string): BigIntStats | undefined {
  return statSync(path, { bigint: true, throwIfNoEntry: false });
}

function hashFile(path: string): string | undefined {
  try {
    return createHash("sha256").update(readFileSync(path)).digest("hex");
  } catch {
    return undefined;
  }
}

function markOf(s: BigIntStats, sha256: string): FileMark {
  return { size: s.size, mtimeNs: s.mtimeNs, ctimeNs: s.ctimeNs, ino: s.ino, sha256 };
}

/** Lets the event loop run between slices of a sweep, so other slots' answers are read meanwhile. */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export class ImportFingerprint {
  private readonly files = new Map<string, FileMark>();
  private readonly folders = new Map<string, FolderMark>();
  private tampered: (ImportCheck & { kind: "tampered" }) | undefined;
  private sweep: { startedAt: number; result: Promise<ImportCheck> } | undefined;
  /** Sweeps run so far (tests and benchmarks read it). */
  sweeps = 0;

  private constructor(private readonly projectRoot: string) {}

  /**
   * Fingerprints every module file under `roots` (default: the project root), before any candidate is
   * checked: each file is read once for its hash.
   */
  static take(projectRoot: string, roots: readonly string[] = [projectRoot]): ImportFingerprint {
    const print = new ImportFingerprint(projectRoot);
    const found: string[] = [];
    for (const root of roots) print.walk(root, found);
    for (const path of found) {
      const s = statOf(path);
      const sha256 = hashFile(path);
      if (s && sha256 !== undefined) print.files.set(path, markOf(s, sha256));
    }
    return print;
  }

  /** Module files fingerprinted. */
  get fileCount(): number {
    return this.files.size;
  }

  /** The change a sweep found, once one did (every later answer is it). */
  get found(): (ImportCheck & { kind: "tampered" }) | undefined {
    return this.tampered;
  }

  /** Adds `folder`'s module files (recursively) to `found` and marks every folder walked. */
  private walk(folder: string, found: string[]): void {
    const s = statOf(folder);
    if (!s?.isDirectory()) return; // A root that does not exist has nothing to load.
    this.folders.set(folder, { mtimeNs: s.mtimeNs, ctimeNs: s.ctimeNs, ino: s.ino });
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name)) this.walk(path, found);
      } else if (MODULE_FILE.test(entry.name)) found.push(path);
    }
  }

  private fail(path: string, change: "rewritten" | "removed" | "added"): ImportCheck & { kind: "tampered" } {
    const file = relative(this.projectRoot, path) || path;
    this.tampered ??= {
      kind: "tampered",
      file,
      change,
      message: `the workspace's imports changed while the verifier ran: ${file} was ${change} after the verifier fingerprinted it at start; no verdict from here on is paid`,
    };
    return this.tampered;
  }

  /**
   * A sweep that started at or after `since` (a `performance.now()` time): the one under way if it started
   * late enough, else the next, which serves everyone who asked meanwhile. Once a change was found, every
   * answer is that change.
   */
  checkedSince(since: number): Promise<ImportCheck> {
    if (this.tampered) return Promise.resolve(this.tampered);
    const current = this.sweep;
    if (current && current.startedAt >= since) return current.result;
    if (current) return current.result.then((r) => (r.kind === "tampered" ? r : this.checkedSince(since)));
    const startedAt = performance.now();
    const result = this.compare().finally(() => {
      if (this.sweep?.result === result) this.sweep = undefined;
    });
    this.sweep = { startedAt, result };
    return result;
  }

  /**
   * One sweep: every file and folder stat'ed, a hash only where a stat changed. Synchronous stats (a
   * thread-pool request each costs several times more), in slices between which the event loop runs.
   */
  private async compare(): Promise<ImportCheck> {
    this.sweeps++;
    let k = 0;
    for (const [path, mark] of this.files) {
      if (++k % SWEEP_SLICE === 0) await yieldToLoop();
      const s = statOf(path);
      if (!s) return this.fail(path, "removed");
      if (s.size === mark.size && sameStat(mark, s)) continue;
      const sha256 = hashFile(path);
      if (sha256 !== mark.sha256) return this.fail(path, sha256 === undefined ? "removed" : "rewritten");
      // The same bytes under new times (a `touch`, a copy put back): no change.
      this.files.set(path, markOf(s, sha256));
    }
    for (const [folder, mark] of [...this.folders]) {
      if (++k % SWEEP_SLICE === 0) await yieldToLoop();
      const s = statOf(folder);
      if (s && sameStat(mark, s)) continue;
      // An entry came, went or was renamed: a module file that is new, or a new folder holding one, is a change.
      let entries: Dirent[] = [];
      try {
        entries = readdirSync(folder, { withFileTypes: true });
      } catch {
        // The folder is gone: its files were found removed above, or it held none.
      }
      for (const entry of entries) {
        const path = join(folder, entry.name);
        if (entry.isDirectory() && !SKIPPED_FOLDERS.has(entry.name) && !this.folders.has(path)) {
          const inside: string[] = [];
          this.walk(path, inside);
          if (inside.length > 0) return this.fail(inside[0]!, "added");
        } else if (MODULE_FILE.test(entry.name) && !this.files.has(path)) return this.fail(path, "added");
      }
      if (s) this.folders.set(folder, { mtimeNs: s.mtimeNs, ctimeNs: s.ctimeNs, ino: s.ino });
    }
    return { kind: "unchanged", files: this.files.size };
  }
}
