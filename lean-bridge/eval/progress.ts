/** The evaluation's progress line on stderr: tasks done, samples, proved so far, and the time left at this pace. */
import type { ResultLine } from "./records";

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

export class EvalProgress {
  private done = 0;
  private samples = 0;
  private proved = 0;
  private infrastructure = 0;
  private lastPrint = 0;
  private readonly started = performance.now();

  constructor(
    private readonly total: number,
    /** Tasks already in results.jsonl when resuming (not counted in the pace). */
    private readonly resumed: number,
    private readonly write: (line: string) => void,
  ) {}

  taskDone(lines: readonly ResultLine[]): void {
    this.done++;
    for (const line of lines) {
      if (!line.final) continue;
      this.samples++;
      if (line.outcome === "proved") this.proved++;
      if (line.outcome === "infrastructure") this.infrastructure++;
    }
    const now = performance.now();
    // At most one line a second, and always the last one.
    if (now - this.lastPrint < 1000 && this.resumed + this.done < this.total) return;
    this.lastPrint = now;
    this.write(this.line(now));
  }

  line(now = performance.now()): string {
    const all = this.resumed + this.done;
    const elapsed = (now - this.started) / 1000;
    const left = this.done > 0 ? (elapsed / this.done) * (this.total - all) : Number.NaN;
    const pctDone = this.total ? Math.floor((100 * all) / this.total) : 100;
    return (
      `eval: ${all}/${this.total} tasks (${pctDone}%), ${this.samples} samples, ${this.proved} proved` +
      (this.infrastructure ? `, ${this.infrastructure} infrastructure` : "") +
      `, ${formatDuration(elapsed)} elapsed` +
      (all < this.total ? `, ETA ${formatDuration(left)}` : "")
    );
  }
}
