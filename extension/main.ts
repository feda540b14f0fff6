/** Extension entry point; commands are registered in commands.ts. */
import type * as vscode from "vscode";

export function activate(_context: vscode.ExtensionContext): void {}

export function deactivate(): void {}
