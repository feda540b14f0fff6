/**
 * "FIM-RLVR: Evaluate Model on Workspace": runs `fim-rlvr eval` on the Lean project (mined into the evaluation's
 * folder) with the Fill Hole model, in a child process (dist/cli.js) with progress and Cancel (Ctrl-C: what is
 * done is kept), then opens its report in a webview. The API key reaches the child through its environment only.
 */
import { fork } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { evalRunPath } from "../../lean-bridge/util/projectLayout";
import { log } from "../log";
import { findLake, trainSettings } from "../settings";
import { chooseProject } from "../state/leanProject";
import { fillModel } from "./modelSettings";
import { openEvalReport } from "./reportPanel";

const FS = {
  exists: existsSync,
  subfolders: (dir: string) => {
    try {
      return readdirSync(dir).filter((n) => statSync(join(dir, n)).isDirectory());
    } catch {
      return [];
    }
  },
};

export type EvalWorkspaceOutcome =
  | { kind: "done" | "stopped"; dir: string; panel: vscode.WebviewPanel }
  | { kind: "refused" | "failed"; message: string };

function verifierArgs(): string[] {
  const s = trainSettings();
  if (s.verifierMode === "simulator") return ["--simulator"];
  if (s.serverCommand.length) return ["--server", s.serverCommand.join(" ")];
  if (s.verifierMode === "auto" && findLake() === undefined) return ["--simulator"];
  return [];
}

export async function evaluateWorkspace(
  secrets: vscode.SecretStorage,
  state: vscode.Memento,
): Promise<EvalWorkspaceOutcome> {
  const refuse = (message: string): EvalWorkspaceOutcome => {
    void vscode.window.showWarningMessage(`FIM-RLVR: ${message}`);
    return { kind: "refused", message };
  };
  if (!vscode.workspace.isTrusted)
    return refuse("Evaluating runs Lean on the workspace's code: trust the workspace to continue.");
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const choice = chooseProject(vscode.window.activeTextEditor?.document.uri.fsPath, folders, FS);
  let project: string | undefined;
  if (choice.kind === "one") project = choice.project;
  else if (choice.kind === "several")
    project = await vscode.window.showQuickPick(choice.projects, {
      title: "Evaluate the model on which Lean project?",
    });
  if (!project)
    return refuse(
      choice.kind === "none"
        ? "No Lean project (a folder with lean-toolchain) in this workspace."
        : "No project chosen.",
    );
  const model = await fillModel(secrets, project, state);
  if (model.kind === "error") return refuse(model.message);
  const c = vscode.workspace.getConfiguration("fimRlvr");
  const stamp = new Date()
    .toISOString()
    .replace(/\.\d+Z$/, "")
    .replace(/:/g, "-");
  const dir = evalRunPath(project, stamp);
  const n = model.model.n;
  const ks = [1, 8, 32].filter((k) => k <= n);
  const args = [
    "eval",
    project,
    "--model",
    model.model.specText,
    "-n",
    String(n),
    "-k",
    (ks.length ? ks : [1]).join(","),
    "--temperature",
    String(model.model.sampling.temperature),
    "--max-new-tokens",
    String(model.model.sampling.maxNewTokens),
    "--prompt-style",
    model.model.backend.prompt.style,
    "--split",
    c.get<string>("fill.evalSplit", "test"),
    ...(model.model.backend.prompt.fimFamily ? ["--fim-family", model.model.backend.prompt.fimFamily] : []),
    ...(model.model.backend.tokenizerDir ? ["--tokenizer", model.model.backend.tokenizerDir] : []),
    ...verifierArgs(),
    "--out",
    dir,
  ];
  log.info(`Evaluate Model: fim-rlvr ${args.join(" ")}`);
  const cli = join(__dirname, "cli.js");
  const result = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: "FIM-RLVR: evaluating the model",
      cancellable: true,
    },
    (progress, token) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = fork(cli, args, {
          env: {
            ...process.env,
            ELECTRON_RUN_AS_NODE: "1",
            ...(model.model.backend.apiKey ? { OPENAI_API_KEY: model.model.backend.apiKey } : {}),
          },
          stdio: ["ignore", "pipe", "pipe", "ipc"],
          execArgv: [],
        });
        let stderr = "";
        let last = 0;
        child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
          stderr = (stderr + chunk).slice(-8000);
          const lines = chunk.split("\n").filter((l) => l.startsWith("eval:"));
          for (const line of lines) {
            log.info(line);
            const m = /eval: (\d+)\/(\d+) tasks \((\d+)%\)(.*)$/.exec(line);
            if (m) {
              const pctDone = Number(m[3]);
              progress.report({ message: `${m[1]}/${m[2]} tasks${m[4]}`, increment: pctDone - last });
              last = pctDone;
            } else progress.report({ message: line.slice(6) });
          }
        });
        token.onCancellationRequested(() => child.kill("SIGINT"));
        child.on("exit", (code) => resolve({ code, stderr }));
      }),
  );
  const report = join(dir, "report.html");
  if ((result.code === 0 || result.code === 130) && existsSync(report)) {
    const panel = openEvalReport(report, `Evaluation ${stamp}`);
    return { kind: result.code === 0 ? "done" : "stopped", dir, panel };
  }
  const message = `the evaluation failed (exit ${result.code}): ${result.stderr.trim().split("\n").slice(-4).join(" ")}`;
  log.error(`Evaluate Model: ${message}`);
  void vscode.window
    .showErrorMessage(`FIM-RLVR: ${message}`, "Show Log")
    .then((c) => c && vscode.commands.executeCommand("fimRlvr.showLog"));
  return { kind: "failed", message };
}
