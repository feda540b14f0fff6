/**
 * Fill results remembered per hole: the key is what decides them — the text Lean checks (the file up to the end of
 * the hole's declaration), the hole, the model and its sampling settings — so edits elsewhere (below the
 * declaration, in other files) never ask the model again, and any edit that could change a verdict does.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { FillResult } from "./fillHole";

export interface FillKeyParts {
  /** The document (its URI or path). */
  document: string;
  /** The document's text, the hole's offsets in it and the end of its declaration. */
  text: string;
  start: number;
  end: number;
  declarationEnd: number;
  /** Model and sampling settings, as one comparable value. */
  model: unknown;
}

export function fillKey(parts: FillKeyParts): string {
  return createHash("sha256")
    .update(parts.document)
    .update("\0")
    .update(parts.text.slice(0, parts.declarationEnd))
    .update(`\0${parts.start}\0${parts.end}\0`)
    .update(JSON.stringify(parts.model))
    .digest("hex");
}

export class FillCache {
  private readonly results = new LRUCache<string, Extract<FillResult, { kind: "ok" }>>({ max: 64 });

  get(key: string): Extract<FillResult, { kind: "ok" }> | undefined {
    return this.results.get(key);
  }

  /** Only answers worth keeping: a failure or a cancelled request is asked again next time. */
  remember(key: string, result: FillResult): void {
    if (result.kind === "ok") this.results.set(key, result);
  }

  clear(): void {
    this.results.clear();
  }
}
