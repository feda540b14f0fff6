/**
 * Keeps the hole annotations across window reloads: the store is saved (debounced, atomically) to this
 * workspace's extension storage and put back on activation for every file whose text is still the one the
 * ranges refer to. A file restored by hot exit with unsaved changes is matched against its editor text when it
 * opens. Without a workspace folder there is no workspace storage, and nothing is saved.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { writeFileAtomic } from "../lean-bridge/util/atomicWrite";
import { log } from "./log";
import { makeSnapshot, readSnapshot, textHash } from "./state/annotationSnapshot";
import type { HoleRecord, HoleStore } from "./state/holeStore";
import { KeyedDebouncer } from "./state/debounce";

const FILE_NAME = "annotations.json";
const SAVE_DELAY_MS = 2000;

/** The text the ranges refer to: the open editor's (unsaved edits included), else the file on disk. */
function currentText(file: string): string | undefined {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === file);
  if (open) return open.getText();
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

export class AnnotationPersistence implements vscode.Disposable {
  private readonly path: string | undefined;
  private readonly saver = new KeyedDebouncer<"all">(() => this.save(), SAVE_DELAY_MS);
  /** Saved records of files whose text did not match at activation, by file: retried when the file opens. */
  private readonly pending = new Map<string, { sha256: string; records: HoleRecord[] }>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly store: HoleStore,
    storageUri: vscode.Uri | undefined,
  ) {
    this.path = storageUri ? join(storageUri.fsPath, FILE_NAME) : undefined;
    if (!this.path) return;
    this.restore(this.path);
    this.disposables.push(
      store.onDidChange(() => this.saver.schedule("all")),
      vscode.workspace.onDidOpenTextDocument((doc) => this.retry(doc)),
    );
  }

  private restore(path: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT")
        log.warn(
          `FIM-RLVR: the saved hole annotations (${path}) could not be read and are ignored: ${String(error)}`,
        );
      return;
    }
    // Files open now, or on disk, are checked at once; a mismatch is kept for when the file opens (hot exit).
    const restored = readSnapshot(raw, currentText);
    const added = this.store.restore(restored.records);
    const files = (raw as { files?: Record<string, { sha256: string; holes: HoleRecord[] }> }).files ?? {};
    for (const file of restored.changed) {
      const entry = files[file];
      if (entry) this.pending.set(file, { sha256: entry.sha256, records: entry.holes });
    }
    if (added > 0 || restored.changed.length > 0 || restored.malformed > 0)
      log.info(
        `FIM-RLVR: restored ${added} annotated hole(s) from the last session` +
          (restored.changed.length > 0
            ? `; ${restored.changed.length} file(s) changed since, their annotations return only if an editor reopens them unchanged`
            : "") +
          (restored.malformed > 0 ? `; ${restored.malformed} malformed entr(ies) ignored` : ""),
      );
  }

  private retry(doc: vscode.TextDocument): void {
    if (doc.uri.scheme !== "file") return;
    const entry = this.pending.get(doc.uri.fsPath);
    if (!entry) return;
    this.pending.delete(doc.uri.fsPath);
    if (textHash(doc.getText()) !== entry.sha256) return;
    const checked = readSnapshot(
      { version: 1, files: { [doc.uri.fsPath]: { sha256: entry.sha256, holes: entry.records } } },
      () => doc.getText(),
    );
    this.store.restore(checked.records);
  }

  /** "Clear Hole Annotations": the saved ones that wait for their file go too. */
  forgetPending(): void {
    this.pending.clear();
    this.saver.schedule("all");
  }

  private save(): void {
    if (!this.path) return;
    try {
      mkdirSync(join(this.path, ".."), { recursive: true });
      const snapshot = makeSnapshot(this.store.records(), currentText);
      // Files still waiting for their editor keep their saved annotations.
      for (const [file, entry] of this.pending)
        snapshot.files[file] ??= { sha256: entry.sha256, holes: entry.records };
      writeFileAtomic(this.path, JSON.stringify(snapshot));
    } catch (error) {
      log.warn(`FIM-RLVR: could not save the hole annotations to ${this.path}: ${String(error)}`);
    }
  }

  dispose(): void {
    this.saver.flush();
    this.saver.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
