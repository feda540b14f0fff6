/**
 * Peers' REPL pools as cost models, for bench:verify: LeanInteract's design (a trie over each REPL's history picks
 * the earlier command to reuse elaboration from) and Kimina's (each REPL keeps its imports, every check document is
 * elaborated from the top). Not the peers' code, not Lean: timers that charge what the Lean server SIMULATOR
 * charges (lean-bridge/simulator/snapshots.ts, server.ts) for the same work, at the costs measured on the embedded
 * Lean (bench/realLeanCosts.json, read through ./realLeanCosts.ts unless a test gives its own): `headerMs` to load a
 * header, `editMs` per check, `declMs` per declaration elaborated, commands other than declarations free, and a
 * declaration reused only when the text up to the start of the next command is unchanged (`planReuse`).
 *
 * LeanInteract ≥ 0.9 (augustepoiroux/LeanInteract v0.9.0, 2025-10-13, "Incremental elaboration"; its REPL fork
 * augustepoiroux/repl v1.3.14, REPL/Main.lean and REPL/Frontend.lean), as read from its sources:
 * - every command is sent with `incrementality: true` and `Elab.async` set (server.py);
 * - each REPL process keeps a header cache keyed by the imports' syntax (Frontend.lean `processInput`,
 *   `headerCache`) and a trie of every earlier command's text, cut at each command boundary it elaborated
 *   (Main.lean `addCommandToTrie`, at `cmdPos`); a new command takes the state of the longest such prefix of its
 *   own text (`findBestIncrementalState`, `matchPrefix`) and Lean's `processCommands` reuses the snapshots of
 *   that earlier command up to the first change: what the simulator's `planReuse` models for an edit;
 * - `LeanServerPool` (pool.py, 2026-01) hands a command to a free REPL, the most recently freed one first
 *   (`_try_acquire_worker`: affinity only for commands that name an `env`, which whole documents do not).
 * Modelled generously: no trie or process memory limit (`AutoLeanServer` restarts a REPL past its memory
 * threshold, losing its trie), no cost for the trie or for the session cache. `Elab.async` elaborates proofs in
 * parallel; the simulator models it for no one (the language server sets it too), so neither side gets it.
 */
import { parseFile, type ParsedFile } from "../lean-bridge/lean/commands";
import { modelCosts, type ServerCosts } from "./realLeanCosts";

/** What one check cost its REPL. */
export interface CheckCost {
  headerLoaded: boolean;
  /** Declarations elaborated (the rest were reused). */
  declarations: number;
  ms: number;
}

const parsed = new Map<string, ParsedFile>();
function parse(text: string): ParsedFile {
  let file = parsed.get(text);
  if (!file) {
    file = parseFile(text);
    parsed.set(text, file);
  }
  return file;
}

/** Length of the text two documents share from their start. */
export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let k = 0;
  while (k < n && a.charCodeAt(k) === b.charCodeAt(k)) k++;
  return k;
}

/**
 * Declarations of `text` elaborated when an earlier document's snapshots are reused up to `firstChange`: a
 * command is reused only when the change begins at or after the next command's start (the simulator's
 * `planReuse`: a command owns its trailing whitespace and comments); the last command never is.
 */
export function declarationsToElaborate(text: string, firstChange: number): number {
  const commands = parse(text).commands;
  let count = 0;
  commands.forEach((command, k) => {
    const nextStart = commands[k + 1]?.start ?? Number.MAX_SAFE_INTEGER;
    if (command.declaration && nextStart > firstChange) count++;
  });
  return count;
}

/** The header a REPL caches by: its imports (LeanInteract keys by the header's syntax, comments left out). */
export function headerKey(text: string): string {
  return parse(text).imports.join("\n");
}

class Repl {
  readonly headers = new Set<string>();
  /** Every document checked here, for the trie's longest-prefix match. */
  readonly history: string[] = [];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A pool of REPL processes; `reuse: "trie"` is LeanInteract's design, `"none"` Kimina's. */
export class ReplPoolModel {
  private readonly free: Repl[];
  private readonly waiting: ((repl: Repl) => void)[] = [];
  readonly stats = { checks: 0, declarations: 0, headerLoads: 0, modelledMs: 0 };

  /**
   * `costs`: a header loaded (once per REPL and header), a check's fixed cost, a declaration elaborated; the
   * calibration's by default.
   */
  constructor(
    replCount: number,
    readonly costs: ServerCosts = modelCosts().server,
    private readonly reuse: "trie" | "none" = "trie",
  ) {
    this.free = Array.from({ length: replCount }, () => new Repl());
  }

  /** What checking `text` on `repl` costs, given what that REPL has done before. */
  cost(repl: Repl, text: string): CheckCost {
    const headerLoaded = !repl.headers.has(headerKey(text));
    let firstChange = 0;
    if (this.reuse === "trie")
      for (const earlier of repl.history) firstChange = Math.max(firstChange, commonPrefix(earlier, text));
    const declarations = declarationsToElaborate(text, firstChange);
    return {
      headerLoaded,
      declarations,
      ms: (headerLoaded ? this.costs.headerMs : 0) + this.costs.editMs + declarations * this.costs.declMs,
    };
  }

  /** One check document, on the most recently freed REPL (waiting for one when all are busy). */
  async check(text: string): Promise<CheckCost> {
    const repl = this.free.pop() ?? (await new Promise<Repl>((resolve) => this.waiting.push(resolve)));
    const cost = this.cost(repl, text);
    await sleep(cost.ms);
    repl.headers.add(headerKey(text));
    if (this.reuse === "trie") repl.history.push(text);
    this.stats.checks++;
    this.stats.declarations += cost.declarations;
    this.stats.headerLoads += cost.headerLoaded ? 1 : 0;
    this.stats.modelledMs += cost.ms;
    const next = this.waiting.shift();
    if (next) next(repl);
    else this.free.push(repl);
    return cost;
  }

  /** Every document at once, as `LeanServerPool.run_batch` submits a batch. */
  checkAll(texts: readonly string[]): Promise<CheckCost[]> {
    return Promise.all(texts.map((text) => this.check(text)));
  }
}
