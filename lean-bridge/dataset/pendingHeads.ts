/**
 * What export pass 1 keeps in memory of each pending task, so that pass 3 assigns splits without reading the
 * pending file twice and rewrites each line without searching it: the task's declaration index, its
 * normalised-middle key, its kind, and where its line's split placeholder is (0 when pass 1 writes sketches
 * instead of pending lines). Typed arrays, grown by
 * doubling: 17 bytes per task, whatever the task's text.
 */
import { HOLE_KINDS, type HoleKind } from "../holes/mine";

export class PendingHeads {
  count = 0;
  private decls = new Int32Array(1024);
  private keys = new Float64Array(1024);
  private splitAts = new Int32Array(1024);
  private kinds = new Uint8Array(1024);
  /** Per declaration: the bytes of its tasks' tail (`,"declKind":…}`), which ends each pending line. */
  private readonly tails: number[] = [];

  push(decl: number, middleKey: number, kind: HoleKind, splitAt: number): void {
    if (this.count === this.decls.length) this.grow();
    const k = this.count++;
    this.decls[k] = decl;
    this.keys[k] = middleKey;
    this.kinds[k] = HOLE_KINDS.indexOf(kind);
    this.splitAts[k] = splitAt;
  }

  setTailBytes(decl: number, bytes: number): void {
    this.tails[decl] = bytes;
  }

  decl(k: number): number {
    return this.decls[k]!;
  }

  middleKey(k: number): number {
    return this.keys[k]!;
  }

  kind(k: number): HoleKind {
    return HOLE_KINDS[this.kinds[k]!]!;
  }

  /** Bytes from the start of task k's pending line to its `,"split":"train"`. */
  splitAt(k: number): number {
    return this.splitAts[k]!;
  }

  /** Bytes of the tail that ends the pending lines of declaration `decl`. */
  tailBytes(decl: number): number {
    return this.tails[decl] ?? -1;
  }

  private grow(): void {
    const size = this.decls.length * 2;
    const grown = <T extends Int32Array | Float64Array | Uint8Array>(old: T, fresh: T): T => {
      fresh.set(old);
      return fresh;
    };
    this.decls = grown(this.decls, new Int32Array(size));
    this.keys = grown(this.keys, new Float64Array(size));
    this.splitAts = grown(this.splitAts, new Int32Array(size));
    this.kinds = grown(this.kinds, new Uint8Array(size));
  }
}
