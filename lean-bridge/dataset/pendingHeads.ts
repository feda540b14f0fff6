/**
 * What the export keeps in memory of each task until its split is known, so that pass 3 assigns splits and
 * tells held-out middles apart without reading the tasks twice: the task's declaration index, its
 * normalised-middle key, its kind and whether it has a reference. Typed arrays, grown by doubling: 13 bytes
 * per task, whatever the task's text.
 */
import { HOLE_KINDS, type HoleKind } from "../holes/mine";

/** The bit of a task's kind byte that says it has no reference. */
const NO_REFERENCE = 0x80;

export class PendingHeads {
  count = 0;
  private decls = new Int32Array(1024);
  private keys = new Float64Array(1024);
  private kinds = new Uint8Array(1024);

  /** `reference`: false for a statement without a proof (its middle is `sorry`). */
  push(decl: number, middleKey: number, kind: HoleKind, reference = true): void {
    if (this.count === this.decls.length) this.grow();
    const k = this.count++;
    this.decls[k] = decl;
    this.keys[k] = middleKey;
    this.kinds[k] = HOLE_KINDS.indexOf(kind) | (reference ? 0 : NO_REFERENCE);
  }

  decl(k: number): number {
    return this.decls[k]!;
  }

  middleKey(k: number): number {
    return this.keys[k]!;
  }

  kind(k: number): HoleKind {
    return HOLE_KINDS[this.kinds[k]! & ~NO_REFERENCE]!;
  }

  reference(k: number): boolean {
    return (this.kinds[k]! & NO_REFERENCE) === 0;
  }

  private grow(): void {
    const size = this.decls.length * 2;
    const grown = <T extends Int32Array | Float64Array | Uint8Array>(old: T, fresh: T): T => {
      fresh.set(old);
      return fresh;
    };
    this.decls = grown(this.decls, new Int32Array(size));
    this.keys = grown(this.keys, new Float64Array(size));
    this.kinds = grown(this.kinds, new Uint8Array(size));
  }
}
