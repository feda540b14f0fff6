/**
 * Which slot checks what, and in which order. A candidate goes to an idle slot that already holds the same
 * declaration prefix, so the edit Lean sees is only the hole and Lean reuses the elaboration of everything
 * above it. For a batch, work is queued per hole so one slot stays on one hole (see `HoleQueues`).
 */
import { pathToFileURL } from "node:url";
import type { Range } from "vscode-languageserver-protocol";
import { slotDocumentPath } from "../util/projectLayout";

/** One document on the server that checks are run in, one at a time. */
export interface Slot {
  index: number;
  uri: string;
  /** The document's current text in the server, or undefined when not open there. */
  text: string | undefined;
  busy: boolean;
  lastUsed: number;
  /** performance.now() when it was last freed. */
  freedAt?: number;
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

interface Waiter {
  doc: Placeable;
  resolve: (slot: Slot | undefined) => void;
}

/**
 * Hands slots to checks. Two rules keep Lean's snapshots useful when several callers (trainer ranks, service
 * clients) check at once:
 * - A freed slot is handed over on the next turn of the event loop, not at once: the check that just ended
 *   usually continues with the next candidate of the same hole (a GRPO group), and within the same turn it
 *   takes the slot back, so that group stays on the document that already holds its declaration.
 * - Otherwise waiting checks are served oldest first, except that one whose declaration a freed slot already
 *   holds goes first; and while anyone waits, a newcomer may take an idle slot only if that slot holds its
 *   declaration (so nobody is overtaken by a check that would not reuse anything).
 * - A freed slot that holds a declaration nobody waiting wants is kept for HOLD_MS before it goes to a check
 *   of another declaration (anticipatory scheduling): a client that verifies one sample per request (verl's
 *   reward managers do) or sends a group's next request over the network is back within that time, and
 *   losing the slot would cost it a re-elaboration of the declaration, far more than the wait.
 */
export const HOLD_MS = 25;

export class SlotScheduler {
  readonly slots: Slot[];
  private waiting: Waiter[] = [];
  private clock = 0;
  private closed = false;
  private handoffScheduled = false;
  /** A later hand-off for held slots. Not unref'd: a check waits on it, so the process must not exit before it. */
  private holdTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(projectRoot: string, count: number) {
    this.slots = Array.from({ length: count }, (_, index) => ({
      index,
      uri: pathToFileURL(slotDocumentPath(projectRoot, index)).href,
      text: undefined,
      busy: false,
      lastUsed: 0,
    }));
  }

  /** A slot for `doc`, waiting for one to be free; undefined once the scheduler is closed. */
  async acquire(doc: Placeable): Promise<Slot | undefined> {
    if (this.closed) return undefined;
    const slot = this.waiting.length === 0 ? this.pick(doc) : this.pickHolding(doc);
    if (slot) return this.take(slot);
    return new Promise<Slot | undefined>((resolve) => this.waiting.push({ doc, resolve }));
  }

  release(slot: Slot): void {
    slot.busy = false;
    slot.freedAt = performance.now();
    if (this.waiting.length > 0) this.scheduleHandOff(0);
  }

  private scheduleHandOff(delayMs: number): void {
    if (delayMs <= 0) {
      if (this.handoffScheduled) return;
      this.handoffScheduled = true;
      setImmediate(() => this.handOff());
    } else {
      // A later hand-off for a held slot; an earlier one may serve everyone before it fires (then it is a no-op).
      if (this.holdTimer !== undefined) clearTimeout(this.holdTimer);
      this.holdTimer = setTimeout(() => {
        this.holdTimer = undefined;
        this.handOff();
      }, Math.ceil(delayMs));
    }
  }

  /** Every slot's document is gone (the server restarted or died): the next check opens it afresh. */
  forgetAll(): void {
    for (const s of this.slots) s.text = undefined;
  }

  /** No more slots are handed out; everyone waiting is told so at once. */
  close(): void {
    this.closed = true;
    if (this.holdTimer !== undefined) clearTimeout(this.holdTimer);
    for (const waiter of this.waiting.splice(0)) waiter.resolve(undefined);
  }

  private take(slot: Slot): Slot {
    slot.busy = true;
    slot.lastUsed = ++this.clock;
    return slot;
  }

  /** Gives the idle slots to waiters: first those whose declaration a slot holds, then the oldest. */
  private handOff(): void {
    this.handoffScheduled = false;
    if (this.closed) return;
    const served = new Set<Waiter>();
    for (const waiter of this.waiting) {
      const slot = this.pickHolding(waiter.doc);
      if (!slot) continue;
      served.add(waiter);
      waiter.resolve(this.take(slot));
    }
    const now = performance.now();
    const held = (s: Slot) => s.text !== undefined && s.freedAt !== undefined && now - s.freedAt < HOLD_MS;
    for (const waiter of this.waiting) {
      if (served.has(waiter)) continue;
      const slot = this.pick(waiter.doc, held);
      if (!slot) break;
      served.add(waiter);
      waiter.resolve(this.take(slot));
    }
    this.waiting = this.waiting.filter((w) => !served.has(w));
    const holding = this.slots.filter((s) => !s.busy && held(s));
    if (this.waiting.length > 0 && holding.length > 0)
      this.scheduleHandOff(Math.min(...holding.map((s) => s.freedAt! + HOLD_MS - now)));
  }

  /** An idle slot whose document already holds this declaration's prefix. */
  private pickHolding(doc: Placeable): Slot | undefined {
    return this.slots.find((s) => !s.busy && s.text !== undefined && s.text.startsWith(doc.prefix));
  }

  /** Prefers an idle slot that already holds this declaration's prefix, then the longest shared text, then LRU. */
  private pick(doc: Placeable, skip?: (slot: Slot) => boolean): Slot | undefined {
    let best: Slot | undefined;
    let bestScore = -1;
    for (const slot of this.slots) {
      if (slot.busy || skip?.(slot)) continue;
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
 * re-elaborate everything between the two) on every group. Among those it prefers a hole whose file has the
 * header (imports) of the hole it just left: Lean reuses a document's imports across edits only while the
 * header's syntax is unchanged (src/Lean/Language/Lean.lean, `parseHeader`), so a slot that stays within one
 * header loads it once, where a slot that alternates between headers loads one on every switch.
 */
export class HoleQueues {
  private readonly queues = new Map<string, number[]>();
  private readonly owned = new Set<string>();
  /** Each queue's header text, when the caller can tell it. */
  private readonly headers = new Map<string, string | undefined>();

  constructor(
    items: readonly { task: { file: string; hole: Range } }[],
    headerOf: (k: number) => string | undefined = () => undefined,
  ) {
    items.forEach((item, k) => {
      const h = item.task.hole;
      const key = `${item.task.file}\0${h.start.line}:${h.start.character}-${h.end.line}:${h.end.character}`;
      const queue = this.queues.get(key) ?? [];
      queue.push(k);
      this.queues.set(key, queue);
      if (!this.headers.has(key)) this.headers.set(key, headerOf(k));
    });
  }

  /** The next item index for a worker now on hole `current` (undefined at its start), with its hole key. */
  take(current: string | undefined): [string, number] | undefined {
    const mine = current !== undefined ? this.queues.get(current) : undefined;
    if (current !== undefined && mine && mine.length > 0) return [current, mine.shift()!];
    if (current !== undefined) this.owned.delete(current);
    const header = current !== undefined ? this.headers.get(current) : undefined;
    const sameHeader = (key: string) => header !== undefined && this.headers.get(key) === header;
    let best: string | undefined;
    for (const [key, queue] of this.queues) {
      if (queue.length === 0) continue;
      const better =
        best === undefined ||
        (this.owned.has(best) && !this.owned.has(key)) ||
        (this.owned.has(best) === this.owned.has(key) &&
          ((sameHeader(key) && !sameHeader(best)) ||
            (sameHeader(key) === sameHeader(best) && queue.length > this.queues.get(best)!.length)));
      if (better) best = key;
    }
    if (best === undefined) return undefined;
    this.owned.add(best);
    return [best, this.queues.get(best)!.shift()!];
  }
}
