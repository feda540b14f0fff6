/**
 * Keeps, per document, the diagnostics of its newest version. Handles both of Lean's publishing styles:
 * cumulative (each publish is the whole set; the last wins) and incremental (Lean >= 4.31 with
 * `incrementalDiagnosticSupport`: the first publish of a version is whole, later ones add to it).
 *
 * Only the version last sent is ever read. A publish for an older version (a late answer about a document
 * that timed out and was closed) and one for a version never sent are both dropped: either could
 * otherwise replace a version's errors with an empty set, and turn a failure into `proved`.
 */
import type { LeanDiagnostic, LeanFileProgressParams, LeanPublishDiagnosticsParams } from "../protocol/lean";
import { LeanFileProgressKind } from "../protocol/lean";

interface DocumentState {
  version: number;
  diagnostics: LeanDiagnostic[];
  fatal: boolean;
  /**
   * The first line Lean still had to elaborate in its last `$/lean/fileProgress` for this version: undefined
   * before any, null once it reported nothing left. Tells whose time a timeout spent (the pool's timeout).
   */
  processingFrom: number | null | undefined;
}

/** How far Lean got with a version, from its last `$/lean/fileProgress`. */
export type Progress = { kind: "none" } | { kind: "processing"; fromLine: number } | { kind: "done" };

export class DiagnosticsStore {
  private readonly docs = new Map<string, DocumentState>();

  reset(uri: string, version: number): void {
    this.docs.set(uri, { version, diagnostics: [], fatal: false, processingFrom: undefined });
  }

  forget(uri: string): void {
    this.docs.delete(uri);
  }

  onPublish(params: LeanPublishDiagnosticsParams): void {
    const state = this.docs.get(params.uri);
    if (!state) return;
    const version = params.version ?? state.version;
    if (version !== state.version) return;
    state.diagnostics = params.isIncremental
      ? state.diagnostics.concat(params.diagnostics)
      : params.diagnostics.slice();
  }

  onProgress(params: LeanFileProgressParams): void {
    const state = this.docs.get(params.textDocument.uri);
    if (!state || params.textDocument.version !== state.version) return;
    if (params.processing.some((p) => p.kind === LeanFileProgressKind.fatalError)) state.fatal = true;
    const lines = params.processing.map((p) => p.range.start.line);
    state.processingFrom = lines.length === 0 ? null : Math.min(...lines);
  }

  progress(uri: string, version: number): Progress {
    const state = this.docs.get(uri);
    if (!state || state.version !== version || state.processingFrom === undefined) return { kind: "none" };
    return state.processingFrom === null
      ? { kind: "done" }
      : { kind: "processing", fromLine: state.processingFrom };
  }

  read(uri: string, version: number): { diagnostics: LeanDiagnostic[]; fatal: boolean } {
    const state = this.docs.get(uri);
    if (!state || state.version !== version) return { diagnostics: [], fatal: false };
    return { diagnostics: state.diagnostics, fatal: state.fatal };
  }
}
