/** Which icon and colours each verdict gets (icons in media/, light and dark; colours contributed in package.json). */
import * as vscode from "vscode";
import type { GutterIcon, IconName } from "./state/gutterMarks";

export { iconName, type IconName, type GutterIcon } from "./state/gutterMarks";

export function iconPaths(
  extensionUri: vscode.Uri,
  icon: GutterIcon,
): { light: vscode.Uri; dark: vscode.Uri } {
  return {
    light: vscode.Uri.joinPath(extensionUri, "media", `${icon}-light.svg`),
    dark: vscode.Uri.joinPath(extensionUri, "media", `${icon}-dark.svg`),
  };
}

/** The theme colour ids contributed in package.json (`contributes.colors`). */
export function backgroundColor(icon: IconName): vscode.ThemeColor {
  return new vscode.ThemeColor(`fimRlvr.${icon}Background`);
}
