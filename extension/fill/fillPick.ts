/**
 * The quick pick of Fill Hole: candidates Lean proved first, then the best attempts with Lean's first message;
 * moving through the list shows a diff of the document with that candidate in the hole (a read-only virtual
 * document beside the real one). Resolves with the chosen candidate, or undefined when dismissed.
 */
import * as vscode from "vscode";
import type { FilledCandidate } from "../../lean-bridge/fill/fillHole";
import { withCandidate, type EditorHole } from "../../lean-bridge/fill/editorHole";

export const PREVIEW_SCHEME = "fim-rlvr-fill";

/** The preview documents' texts by URI path; registered once by `FillPreviews`. */
export class FillPreviews implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, this);
  private next = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? "";
  }

  /** A preview URI showing `text`, named after the real document. */
  show(document: vscode.TextDocument, text: string): vscode.Uri {
    const name = document.uri.path.split("/").pop() ?? "preview.lean";
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: `/${++this.next}/${name}` });
    this.texts.set(uri.path, text);
    return uri;
  }

  /** Closes the diff tabs of previews and forgets their texts. */
  async closeAll(): Promise<void> {
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter(
        (t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === PREVIEW_SCHEME,
      );
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
    this.texts.clear();
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}

const OUTCOME_LABEL: Record<FilledCandidate["outcome"], string> = {
  proved: "$(pass-filled) proved",
  // The verifier may be the simulator: never "Lean error" here.
  "lean-error": "$(error) error",
  sorry: "$(warning) sorry",
  timeout: "$(watch) timeout",
  infrastructure: "$(debug-disconnect) not checked",
};

interface CandidateItem extends vscode.QuickPickItem {
  candidate?: FilledCandidate;
}

function firstMessage(candidate: FilledCandidate): string {
  const error = candidate.verdict.diagnostics.find((d) => d.severity === 1);
  if (error) {
    const where = error.candidateRange ? `line ${error.candidateRange.start.line + 1}: ` : "";
    return where + error.message.split("\n").slice(0, 3).join(" ⏎ ");
  }
  const reason = (candidate.verdict as { reason?: unknown }).reason;
  return typeof reason === "string" ? reason : candidate.verdict.kind;
}

export function pickItems(candidates: readonly FilledCandidate[]): CandidateItem[] {
  const proved = candidates.filter((c) => c.outcome === "proved");
  const others = candidates.filter((c) => c.outcome !== "proved");
  const item = (c: FilledCandidate): CandidateItem => ({
    label: `${OUTCOME_LABEL[c.outcome]}  ${c.text.split("\n")[0]!.slice(0, 80)}${c.text.includes("\n") ? " …" : ""}`,
    description: `${c.text.split("\n").length} line(s)${c.count > 1 ? ` · written ${c.count}×` : ""}`,
    detail: c.outcome === "proved" ? c.text.replace(/\n\s*/g, " ⏎ ").slice(0, 200) : firstMessage(c),
    candidate: c,
  });
  return [
    ...(proved.length
      ? [{ label: "Proved by the verifier", kind: vscode.QuickPickItemKind.Separator }, ...proved.map(item)]
      : []),
    ...(others.length
      ? [
          { label: "Best attempts (not proved)", kind: vscode.QuickPickItemKind.Separator },
          ...others.map(item),
        ]
      : []),
  ];
}

export async function pickCandidate(
  document: vscode.TextDocument,
  hole: EditorHole,
  candidates: readonly FilledCandidate[],
  verifierLabel: string,
  previews: FillPreviews,
): Promise<FilledCandidate | undefined> {
  const pick = vscode.window.createQuickPick<CandidateItem>();
  const provedCount = candidates.filter((c) => c.outcome === "proved").length;
  pick.title = `Fill '${hole.declaration}': ${provedCount} of ${candidates.length} candidate(s) proved — verified by ${verifierLabel}`;
  pick.placeholder = "Choose a candidate to insert (the diff shows it in place); Escape inserts nothing";
  pick.matchOnDetail = true;
  pick.items = pickItems(candidates);
  const text = document.getText();
  // Diffs open one after another, and none opens once the pick has closed: a diff still opening when the user
  // chose would otherwise appear after `closeAll` and stay beside the filled document.
  let picking = true;
  let diffs: Promise<void> = Promise.resolve();
  const showDiff = async (item: CandidateItem | undefined) => {
    if (!picking || !item?.candidate) return;
    const preview = previews.show(document, withCandidate(text, hole, item.candidate.text));
    await vscode.commands.executeCommand(
      "vscode.diff",
      document.uri,
      preview,
      `Fill '${hole.declaration}' (${item.candidate.outcome})`,
      // Beside the document, so the user's own editor (maybe a preview tab) is never replaced.
      {
        preview: true,
        preserveFocus: true,
        viewColumn: vscode.ViewColumn.Beside,
        selection: new vscode.Range(hole.range.start.line, 0, hole.range.start.line, 0),
      },
    );
  };
  const chosen = await new Promise<FilledCandidate | undefined>((resolve) => {
    pick.onDidChangeActive((items) => {
      diffs = diffs.then(() => showDiff(items[0])).catch(() => undefined);
    });
    pick.onDidAccept(() => {
      resolve(pick.selectedItems[0]?.candidate ?? pick.activeItems[0]?.candidate);
      pick.hide();
    });
    pick.onDidHide(() => resolve(undefined));
    pick.show();
  });
  picking = false;
  pick.dispose();
  await diffs;
  await previews.closeAll();
  return chosen;
}
