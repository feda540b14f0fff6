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
}

export class DiagnosticsStore {
  private readonly docs = new Map<string, DocumentState>();

  reset(uri: string, version: number): void {
    this.docs.set(uri, { version, diagnostics: [], fatal: false });
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
  }

  read(uri: string, version: number): { diagnostics: LeanDiagnostic[]; fatal: boolean } {
    const state = this.docs.get(uri);
    if (!state || state.version !== version) return { diagnostics: [], fatal: false };
    return { diagnostics: state.diagnostics, fatal: state.fatal };
  }
}
