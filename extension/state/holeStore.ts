/**
 * What the model filled, per hole: the recent attempts from train/sample notifications, the latest and the
 * best verdict, and the hole's current range in its file (moved through the user's edits). Pure: no
 * `vscode`, so decorations, the tree view and the CodeLens are thin views over it and it is unit-tested.
 */
import type { Range, TrainSampleParams, VerdictKind } from "../../lean-bridge/protocol/trainer";
import { shiftRangeThrough, type TextChange } from "./rangeTracking";

/** Better first: the order in which verdicts count as "best so far". */
export const VERDICT_RANK: readonly VerdictKind[] = [
  "proved",
  "incomplete",
  "failed",
  "rejected",
  "timeout",
  "crashed",
  "environment",
];

export function betterVerdict(a: VerdictKind, b: VerdictKind): VerdictKind {
  return VERDICT_RANK.indexOf(a) <= VERDICT_RANK.indexOf(b) ? a : b;
}

export interface Attempt {
  candidate: string;
  verdict: VerdictKind;
  reward: number;
  step: number;
  algorithm: string;
  diagnostics: NonNullable<TrainSampleParams["diagnostics"]>;
  /** The run folder's name (attempts of several runs are told apart by it); absent in older saved files. */
  run?: string;
  /** Who judged it: "Lean" or "simulator (not Lean)"; absent in older saved files. */
  verifier?: string;
  /**
   * The model that wrote it, for a candidate "Fill Hole with Model" inserted (its reward, step and algorithm then
   * mean nothing and are not shown); absent for training samples.
   */
  model?: string;
}

/** A hole as it is now in its file (a filled hole is placed as is, not moved through a run's edit log). */
export interface PlacedHole {
  taskId: string;
  file: string;
  kind: string;
  decl?: string;
  range: Range;
}

/** What a sample does not say itself: which run sent it, whose verdict it is, which declaration it is in. */
export interface SampleContext {
  run: string;
  verifier: string;
  /** The declaration's fully qualified name ("" for `example`), when the run's dataset names it. */
  decl?: string;
}

export interface HoleRecord {
  taskId: string;
  /** The key of the file the hole is in (an absolute path in the extension). */
  file: string;
  kind: string;
  /** The declaration the hole is in ("" for `example`), when known. */
  decl?: string;
  /** The hole's range in the file as it is now. */
  range: Range;
  /** Newest last, at most `maxAttempts`. */
  attempts: Attempt[];
  /** How many attempts arrived, including those no longer kept. */
  total: number;
  best: VerdictKind;
  latest: Attempt;
}

export interface HoleStoreOptions {
  /** Attempts kept per hole (older ones are dropped; `total` still counts them). */
  maxAttempts?: number;
  /** Edits remembered per file to place samples that arrive after the user changed the file. */
  maxEditsPerFile?: number;
}

/**
 * Holes by task id. The store also remembers each file's edits since the run began: a sample carries the
 * hole's range in the file as it was mined, so a sample that arrives after the user edited that file is
 * moved through those edits before it is shown.
 */
export class HoleStore {
  private readonly holes = new Map<string, HoleRecord>();
  private readonly editsByFile = new Map<string, TextChange[]>();
  /** Files whose edit log overflowed: their new samples cannot be placed reliably and are not shown. */
  private readonly lostTrack = new Set<string>();
  private readonly listeners = new Set<(files: ReadonlySet<string>) => void>();
  private readonly maxAttempts: number;
  private readonly maxEdits: number;

  constructor(options: HoleStoreOptions = {}) {
    this.maxAttempts = options.maxAttempts ?? 20;
    this.maxEdits = options.maxEditsPerFile ?? 5000;
  }

  /** Listeners hear which files changed (after samples, edits, or a clear). */
  onDidChange(listener: (files: ReadonlySet<string>) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Records one sample for the hole in `file` (the resolved file key); false when it cannot be placed. */
  record(sample: TrainSampleParams, file: string, context?: SampleContext): boolean {
    if (this.lostTrack.has(file)) return false;
    const attempt: Attempt = {
      candidate: sample.candidate,
      verdict: sample.verdict,
      reward: sample.reward,
      step: sample.step,
      algorithm: sample.algorithm,
      diagnostics: sample.diagnostics ?? [],
      ...(context ? { run: context.run, verifier: context.verifier } : {}),
    };
    this.add(
      {
        taskId: sample.taskId,
        file,
        kind: sample.kind,
        ...(context?.decl !== undefined ? { decl: context.decl } : {}),
        // The sample's range is the file as it was mined: moved through the edits made since.
        range: shiftRangeThrough(sample.hole, this.editsByFile.get(file) ?? []),
      },
      attempt,
      false,
    );
    return true;
  }

  /**
   * Records an attempt at a hole whose range is already the file's current one (a candidate Fill Hole inserted):
   * the hole takes that range, also when it was known before (the same hole filled again).
   */
  recordAt(hole: PlacedHole, attempt: Attempt): void {
    this.add(hole, attempt, true);
  }

  private add(hole: PlacedHole, attempt: Attempt, moveExisting: boolean): void {
    const existing = this.holes.get(hole.taskId);
    if (existing) {
      existing.attempts.push(attempt);
      if (existing.attempts.length > this.maxAttempts) existing.attempts.shift();
      existing.total++;
      existing.best = betterVerdict(existing.best, attempt.verdict);
      existing.latest = attempt;
      if (hole.decl !== undefined) existing.decl = hole.decl;
      if (moveExisting) existing.range = hole.range;
    } else {
      this.holes.set(hole.taskId, {
        ...hole,
        attempts: [attempt],
        total: 1,
        best: attempt.verdict,
        latest: attempt,
      });
    }
    this.emit(new Set([hole.file]));
  }

  /** Moves the holes of `file` through the user's edits (VS Code's content changes, in order). */
  applyEdits(file: string, changes: readonly TextChange[]): void {
    if (changes.length === 0) return;
    const log = this.editsByFile.get(file) ?? [];
    log.push(...changes);
    if (log.length > this.maxEdits) {
      this.lostTrack.add(file);
      this.editsByFile.delete(file);
    } else this.editsByFile.set(file, log);
    let moved = false;
    for (const hole of this.holes.values()) {
      if (hole.file !== file) continue;
      hole.range = shiftRangeThrough(hole.range, changes);
      moved = true;
    }
    if (moved) this.emit(new Set([file]));
  }

  /** Forgets the edit logs (a new run mines the files as they are now). Annotations stay. */
  beginRun(): void {
    this.editsByFile.clear();
    this.lostTrack.clear();
  }

  get(taskId: string): HoleRecord | undefined {
    return this.holes.get(taskId);
  }

  /** The holes of one file, in text order. */
  holesIn(file: string): HoleRecord[] {
    return [...this.holes.values()]
      .filter((h) => h.file === file)
      .sort(
        (a, b) =>
          a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character,
      );
  }

  /** Files with at least one annotated hole, sorted. */
  files(): string[] {
    return [...new Set([...this.holes.values()].map((h) => h.file))].sort();
  }

  /** The best verdict among a file's holes, for the tree view's file rows. */
  bestIn(file: string): VerdictKind | undefined {
    let best: VerdictKind | undefined;
    for (const hole of this.holesIn(file)) best = best ? betterVerdict(best, hole.best) : hole.best;
    return best;
  }

  get size(): number {
    return this.holes.size;
  }

  /** Every hole record (for saving the annotations across a reload). */
  records(): HoleRecord[] {
    return [...this.holes.values()];
  }

  /** Puts back saved records (holes already known keep their newer record); returns how many were added. */
  restore(records: readonly HoleRecord[]): number {
    const files = new Set<string>();
    let added = 0;
    for (const record of records) {
      if (this.holes.has(record.taskId)) continue;
      this.holes.set(record.taskId, record);
      files.add(record.file);
      added++;
    }
    if (files.size > 0) this.emit(files);
    return added;
  }

  clear(): void {
    const files = new Set(this.files());
    this.holes.clear();
    this.emit(files);
  }

  private emit(files: ReadonlySet<string>): void {
    for (const listener of this.listeners) listener(files);
  }
}
