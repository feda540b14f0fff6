/** The "FIM-RLVR" output channel: everything the extension does is logged here (never modal dialogs). */
import * as vscode from "vscode";

let channel: vscode.LogOutputChannel | undefined;
/** Under extension tests the log is mirrored to the console, which the test runner shows. */
let mirror = false;

export function outputChannel(): vscode.LogOutputChannel {
  channel ??= vscode.window.createOutputChannel("FIM-RLVR", { log: true });
  return channel;
}

export function mirrorLogToConsole(on: boolean): void {
  mirror = on;
}

function write(level: "info" | "warn" | "error" | "debug", message: string): void {
  outputChannel()[level](message);
  if (mirror) console.log(`[FIM-RLVR ${level}] ${message}`);
}

export const log = {
  info: (message: string): void => write("info", message),
  warn: (message: string): void => write("warn", message),
  error: (message: string): void => write("error", message),
  debug: (message: string): void => write("debug", message),
};
