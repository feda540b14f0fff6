/** The "FIM-RLVR" output channel: everything the extension does is logged here (never modal dialogs). */
import * as vscode from "vscode";

let channel: vscode.LogOutputChannel | undefined;

export function outputChannel(): vscode.LogOutputChannel {
  channel ??= vscode.window.createOutputChannel("FIM-RLVR", { log: true });
  return channel;
}

export const log = {
  info: (message: string): void => outputChannel().info(message),
  warn: (message: string): void => outputChannel().warn(message),
  error: (message: string): void => outputChannel().error(message),
  debug: (message: string): void => outputChannel().debug(message),
};
