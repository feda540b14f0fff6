/** Which icon and colours each verdict gets (icons in media/, light and dark; colours contributed in package.json). */
import * as vscode from "vscode";
import type { VerdictKind } from "../lean-bridge/protocol/trainer";

/** The four icon families; verdicts that are not the model's fault share the timeout icon. */
export type IconName = "proved" | "failed" | "incomplete" | "timeout";

export function iconName(verdict: VerdictKind): IconName {
  switch (verdict) {
    case "proved":
    case "failed":
    case "incomplete":
      return verdict;
    case "rejected":
      return "failed";
    default:
      return "timeout";
  }
}

export function iconPaths(extensionUri: vscode.Uri, icon: IconName): { light: vscode.Uri; dark: vscode.Uri } {
  return {
    light: vscode.Uri.joinPath(extensionUri, "media", `${icon}-light.svg`),
    dark: vscode.Uri.joinPath(extensionUri, "media", `${icon}-dark.svg`),
  };
}

/** The theme colour ids contributed in package.json (`contributes.colors`). */
export function backgroundColor(icon: IconName): vscode.ThemeColor {
  return new vscode.ThemeColor(`fimRlvr.${icon}Background`);
}
