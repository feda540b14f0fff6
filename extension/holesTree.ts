/** The Explorer view "FIM Holes": annotated holes by file, each with its best verdict so far. */
import { basename, relative } from "node:path";
import * as vscode from "vscode";
import type { HoleStore } from "./state/holeStore";
import { holeRowLabel } from "./state/hoverText";
import { asRange } from "./converters";
import { iconName, iconPaths } from "./verdictIcons";

type Node = { kind: "file"; file: string } | { kind: "hole"; taskId: string };

export class HolesTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscription: { dispose(): void };
  private pending: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly store: HoleStore,
    private readonly extensionUri: vscode.Uri,
  ) {
    // Samples arrive in bursts: refresh the tree at most a few times a second.
    this.subscription = store.onDidChange(() => {
      this.pending ??= setTimeout(() => {
        this.pending = undefined;
        this.changed.fire(undefined);
      }, 250);
    });
  }

  getChildren(node?: Node): Node[] {
    if (!node) return this.store.files().map((file) => ({ kind: "file", file }));
    if (node.kind === "file")
      return this.store.holesIn(node.file).map((h) => ({ kind: "hole", taskId: h.taskId }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "file") {
      const best = this.store.bestIn(node.file);
      const item = new vscode.TreeItem(basename(node.file), vscode.TreeItemCollapsibleState.Expanded);
      item.resourceUri = vscode.Uri.file(node.file);
      const folder = vscode.workspace.getWorkspaceFolder(item.resourceUri);
      item.description = `${folder ? relative(folder.uri.fsPath, node.file) : node.file}${best ? ` · best ${best}` : ""}`;
      if (best) item.iconPath = iconPaths(this.extensionUri, iconName(best));
      item.contextValue = "fimRlvr.file";
      return item;
    }
    const hole = this.store.get(node.taskId);
    if (!hole) return new vscode.TreeItem("(cleared)");
    const item = new vscode.TreeItem(holeRowLabel(hole));
    item.description = `${hole.kind} · best ${hole.best} · ${hole.total} attempt${hole.total === 1 ? "" : "s"}`;
    item.tooltip = `Latest: ${hole.latest.verdict}, reward ${hole.latest.reward.toFixed(2)} at step ${hole.latest.step}`;
    item.iconPath = iconPaths(this.extensionUri, iconName(hole.best));
    item.contextValue = "fimRlvr.hole";
    item.command = {
      command: "vscode.open",
      title: "Go to Hole",
      arguments: [vscode.Uri.file(hole.file), { selection: asRange(hole.range) }],
    };
    return item;
  }

  dispose(): void {
    if (this.pending) clearTimeout(this.pending);
    this.subscription.dispose();
    this.changed.dispose();
  }
}
