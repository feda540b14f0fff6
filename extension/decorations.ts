/**
 * Gutter icons, a subtle range highlight and hovers on the holes the model filled. A thin view over the
 * HoleStore: edits move the store's ranges, redraws are debounced per file, and every editor that becomes
 * visible is redrawn, so annotations survive switching editors.
 */
import * as vscode from "vscode";
import { KeyedDebouncer } from "./state/debounce";
import type { HoleRecord, HoleStore } from "./state/holeStore";
import { hoverMarkdown, SHOW_ATTEMPTS_COMMAND, type HoverMessage } from "./state/hoverText";
import { asDiagnostics, asRange } from "./converters";
import { holeMarker, lineMarks } from "./state/gutterMarks";
import { backgroundColor, iconName, iconPaths, type GutterIcon, type IconName } from "./verdictIcons";

const ICONS: readonly IconName[] = ["proved", "failed", "incomplete", "timeout"];
const GUTTER_ICONS: readonly GutterIcon[] = [...ICONS, "several"];
const REDRAW_DELAY_MS = 150;

export function hoverFor(hole: HoleRecord, marker = ""): vscode.MarkdownString {
  const messages: HoverMessage[] = asDiagnostics(hole.latest.diagnostics).map((d, k) => ({
    severity: vscode.DiagnosticSeverity[d.severity],
    line: hole.latest.diagnostics[k]?.candidateRange ? d.range.start.line : null,
    message: d.message,
  }));
  const markdown = new vscode.MarkdownString(hoverMarkdown(hole, messages, marker), true);
  markdown.isTrusted = { enabledCommands: [SHOW_ATTEMPTS_COMMAND] };
  return markdown;
}

/**
 * Three layers: a background per verdict over each hole's range (with its hover), one gutter icon per line
 * (state/gutterMarks.ts: "several" where holes of different verdicts start on one line), and a numbered marker
 * before each hole that shares its line with others.
 */
export class HoleDecorations implements vscode.Disposable {
  private readonly types = new Map<IconName, vscode.TextEditorDecorationType>();
  private readonly gutterTypes = new Map<GutterIcon, vscode.TextEditorDecorationType>();
  private readonly markerType = vscode.window.createTextEditorDecorationType({
    before: { margin: "0 3px 0 0", fontWeight: "bold" },
  });
  private readonly disposables: vscode.Disposable[] = [];
  private readonly redraw = new KeyedDebouncer<string>((file) => this.drawFile(file), REDRAW_DELAY_MS);
  /** Decorations last drawn per file (what the extension-host tests check; VS Code offers no way to read them). */
  readonly drawn = new Map<string, number>();

  constructor(
    private readonly store: HoleStore,
    extensionUri: vscode.Uri,
  ) {
    for (const icon of GUTTER_ICONS) {
      const paths = iconPaths(extensionUri, icon);
      this.gutterTypes.set(
        icon,
        vscode.window.createTextEditorDecorationType({
          light: { gutterIconPath: paths.light },
          dark: { gutterIconPath: paths.dark },
          gutterIconSize: "contain",
          isWholeLine: true,
        }),
      );
    }
    for (const icon of ICONS) {
      this.types.set(
        icon,
        vscode.window.createTextEditorDecorationType({
          backgroundColor: backgroundColor(icon),
          overviewRulerColor: backgroundColor(icon),
          overviewRulerLane: vscode.OverviewRulerLane.Left,
          rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
        }),
      );
    }
    this.disposables.push(
      store.onDidChange((files) => files.forEach((file) => this.redraw.schedule(file))),
      vscode.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.drawEditor(e))),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.document.uri.scheme !== "file" || event.contentChanges.length === 0) return;
        // The store moves the holes (and schedules a redraw); VS Code moves the drawn ones meanwhile.
        store.applyEdits(
          event.document.uri.fsPath,
          event.contentChanges.map((c) => ({
            range: {
              start: { line: c.range.start.line, character: c.range.start.character },
              end: { line: c.range.end.line, character: c.range.end.character },
            },
            text: c.text,
          })),
        );
      }),
    );
    for (const editor of vscode.window.visibleTextEditors) this.drawEditor(editor);
  }

  private drawFile(file: string): void {
    for (const editor of vscode.window.visibleTextEditors)
      if (editor.document.uri.scheme === "file" && editor.document.uri.fsPath === file)
        this.drawEditor(editor);
  }

  private drawEditor(editor: vscode.TextEditor): void {
    if (editor.document.uri.scheme !== "file") return;
    const holes = this.store.holesIn(editor.document.uri.fsPath);
    const byIcon = new Map<IconName, vscode.DecorationOptions[]>(ICONS.map((icon) => [icon, []]));
    const markers: vscode.DecorationOptions[] = [];
    for (const hole of holes) {
      const mark = holeMarker(hole, holes);
      const range = asRange(hole.range);
      byIcon.get(iconName(hole.latest.verdict))!.push({ range, hoverMessage: hoverFor(hole, mark) });
      if (mark)
        markers.push({
          range: new vscode.Range(range.start, range.start),
          renderOptions: {
            before: { contentText: mark, color: new vscode.ThemeColor("editorCodeLens.foreground") },
          },
        });
    }
    let count = 0;
    for (const [icon, options] of byIcon) {
      editor.setDecorations(this.types.get(icon)!, options);
      count += options.length;
    }
    const gutters = new Map<GutterIcon, vscode.DecorationOptions[]>(GUTTER_ICONS.map((icon) => [icon, []]));
    for (const mark of lineMarks(holes))
      gutters.get(mark.icon)!.push({ range: new vscode.Range(mark.line, 0, mark.line, 0) });
    for (const [icon, options] of gutters) editor.setDecorations(this.gutterTypes.get(icon)!, options);
    editor.setDecorations(this.markerType, markers);
    this.drawn.set(editor.document.uri.fsPath, count);
  }

  dispose(): void {
    this.redraw.dispose();
    for (const d of this.disposables) d.dispose();
    for (const type of [...this.types.values(), ...this.gutterTypes.values(), this.markerType])
      type.dispose();
  }
}
