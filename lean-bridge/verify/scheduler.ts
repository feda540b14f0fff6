/**
 * Which slot checks what, and in which order. A candidate goes to an idle slot that already holds the same
 * declaration prefix, so the edit Lean sees is only the hole and Lean reuses the elaboration of everything
 * above it. For a batch, work is queued per hole so one slot stays on one hole (see `HoleQueues`).
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Range } from "vscode-languageserver-protocol";

/** One document on the server that checks are run in, one at a time. */
export interface Slot {
  index: number;
  uri: string;
  /** The document's current text in the server, or undefined when not open there. */
  text: string | undefined;
  busy: boolean;
  lastUsed: number;
}

/** What the scheduler needs to know about a check document to place it. */
export interface Placeable {
  text: string;
  /** Everything before the candidate: documents that share it share Lean's snapshots. */
  prefix: string;
}

function sharedPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let k = 0;
  while (k < n && a.charCodeAt(k) === b.charCodeAt(k)) k++;
  return k;
}

export class SlotScheduler {
  readonly slots: Slot[];
  private readonly waiting: ((slot: Slot | undefined) => void)[] = [];
  private clock = 0;
  private closed = false;

  constructor(projectRoot: string, count: number) {
    this.slots = Array.from({ length: count }, (_, index) => ({
      index,
      uri: pathToFileURL(join(projectRoot, ".fim-rlvr", `Slot${index}.lean`)).href,
      text: undefined,
      busy: false,
      lastUsed: 0,
    }));
  }

  /** A slot for `doc`, waiting for one to be free; undefined once the scheduler is closed. */
  async acquire(doc: Placeable): Promise<Slot | undefined> {
    for (;;) {
      if (this.closed) return undefined;
      const slot = this.pick(doc);
      if (slot) {
        slot.busy = true;
        slot.lastUsed = ++this.clock;
        return slot;
      }
      const next = await new Promise<Slot | undefined>((resolve) => this.waiting.push(resolve));
      if (next) return next;
    }
  }

  release(slot: Slot): void {
    slot.busy = false;
    // Hand the slot to the next waiter directly: no other caller can take it in between.
    const next = this.waiting.shift();
    if (next) {
      slot.busy = true;
      slot.lastUsed = ++this.clock;
      next(slot);
    }
  }

  /** Every slot's document is gone (the server restarted or died): the next check opens it afresh. */
  forgetAll(): void {
    for (const s of this.slots) s.text = undefined;
  }

  /** No more slots are handed out; everyone waiting is told so at once. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter(undefined);
  }

  /** Prefers an idle slot that already holds this declaration's prefix, then the longest shared text, then LRU. */
  private pick(doc: Placeable): Slot | undefined {
    let best: Slot | undefined;
    let bestScore = -1;
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const shared = slot.text === undefined ? 0 : sharedPrefixLength(slot.text, doc.text);
      const score =
        (slot.text !== undefined && slot.text.startsWith(doc.prefix) ? 1e12 : 0) +
        shared * 1e3 -
        slot.lastUsed / 1e9;
      if (score > bestScore) {
        bestScore = score;
        best = slot;
      }
    }
    return best;
  }
}

/**
 * Per-hole work queues for a batch. Each of the K workers stays on one hole until its queue is empty, then
 * takes the longest queue no other worker owns: a GRPO group is then checked by one slot whose document
 * already holds that declaration, instead of every slot switching declarations (which makes Lean
 * re-elaborate everything between the two) on every group.
 */
export class HoleQueues {
  private readonly queues = new Map<string, number[]>();
  private readonly owned = new Set<string>();

  constructor(items: readonly { task: { file: string; hole: Range } }[]) {
    items.forEach((item, k) => {
      const h = item.task.hole;
      const key = `${item.task.file}\0${h.start.line}:${h.start.character}-${h.end.line}:${h.end.character}`;
      const queue = this.queues.get(key) ?? [];
      queue.push(k);
      this.queues.set(key, queue);
    });
  }

  /** The next item index for a worker now on hole `current` (undefined at its start), with its hole key. */
  take(current: string | undefined): [string, number] | undefined {
    const mine = current !== undefined ? this.queues.get(current) : undefined;
    if (current !== undefined && mine && mine.length > 0) return [current, mine.shift()!];
    if (current !== undefined) this.owned.delete(current);
    let best: string | undefined;
    for (const [key, queue] of this.queues) {
      if (queue.length === 0) continue;
      const better =
        best === undefined ||
        (this.owned.has(best) && !this.owned.has(key)) ||
        (this.owned.has(best) === this.owned.has(key) && queue.length > this.queues.get(best)!.length);
      if (better) best = key;
    }
    if (best === undefined) return undefined;
    this.owned.add(best);
    return [best, this.queues.get(best)!.shift()!];
  }
}
