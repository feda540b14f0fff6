/**
 * The Python extension's selected interpreter, through its environments API, when that extension is
 * installed. Typed by a small local interface checked at run time (the API is not an npm dependency).
 */
import * as vscode from "vscode";
import { log } from "./log";

interface PythonEnvironmentsApi {
  environments: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(path: string): Promise<{ executable: { uri: vscode.Uri | undefined } } | undefined>;
  };
}

function isPythonApi(value: unknown): value is PythonEnvironmentsApi {
  const environments = (value as { environments?: Record<string, unknown> } | undefined)?.environments;
  return (
    typeof environments?.getActiveEnvironmentPath === "function" &&
    typeof environments.resolveEnvironment === "function"
  );
}

export async function pythonFromExtension(folder: vscode.Uri | undefined): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension("ms-python.python");
  if (!extension) return undefined;
  try {
    const api: unknown = extension.isActive ? extension.exports : await extension.activate();
    if (!isPythonApi(api)) return undefined;
    const active = api.environments.getActiveEnvironmentPath(folder);
    const resolved = await api.environments.resolveEnvironment(active.path);
    return resolved?.executable.uri?.fsPath ?? active.path;
  } catch (error) {
    log.warn(
      `The Python extension did not give an interpreter (${String(error)}); using the setting or the managed one.`,
    );
    return undefined;
  }
}
