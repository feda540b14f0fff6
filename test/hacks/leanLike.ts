/**
 * A "lean-like" test server for the hack battery: an in-process LSP server that answers the way real Lean
 * would on each hack, in the worst case for the verifier. Every declaration elaborates cleanly (no error)
 * unless its tactics leave goals open; `#print axioms` resolves names as Lean does (`_root_.` exact,
 * otherwise the innermost open namespace first) and prints the axioms the proof would really use
 * (`native_decide` → `Lean.ofReduceBool`, `sorry` → `sorryAx`, plus the warning); private names print as
 * `_private.<Module>.0.<name>`; `textDocument/documentSymbol` lists every declaration Lean would see;
 * `$/lean/plainGoal` shows one goal at the start of a tactic block. `leanReads` models text that Lean reads
 * differently from the project's lexer (a divergence the lexer missed): the server applies it before parsing.
 *
 * Goals are counted by a small model of tactics: `constructor` adds one, a closing tactic (`exact`, `rfl`,
 * `omega`, `simp`, `decide`, `native_decide`, `trivial`, …) closes one, `skip`/`all_goals skip` do nothing.
 * It is a test double, never a judge of proofs.
 */
import { PassThrough } from "node:stream";
import { createMessageConnection, type MessageConnection } from "vscode-jsonrpc/node";
import { parseFile, type Declaration, type ParsedFile } from "../../lean-bridge/lean/commands";
import { isCommentKind, tokenText } from "../../lean-bridge/lean/tokens";
import type { LeanDiagnostic } from "../../lean-bridge/protocol/lean";
import { LeanServer } from "../../lean-bridge/server/leanServer";
import { applyChanges } from "../../lean-bridge/text/edits";
import { LineIndex } from "../../lean-bridge/text/positions";

export interface LeanLikeOptions {
  /** How Lean reads the document where it differs from the project's lexer (default: the same). */
  leanReads?: (text: string) => string;
  /** Axioms of a proof that uses no special tactic (default: propext). */
  baseAxioms?: string[];
  /** Goals `$/lean/plainGoal` shows at a hole (default 1). */
  goalsAtHole?: number;
  /** Requests this server never answers (a Lean too busy to reply before the check's deadline). */
  neverAnswers?: string[];
}

const CLOSERS = new Set([
  "exact",
  "rfl",
  "omega",
  "simp",
  "decide",
  "native_decide",
  "trivial",
  "assumption",
  "linarith",
]);

interface Elaborated {
  decl: Declaration;
  namespace: string;
  goalsLeft: number;
  tooMany: boolean;
  /** Offset of a `fail` step, which Lean reports as an error there. */
  failedAt: number | undefined;
  axioms: string[];
  usesSorry: boolean;
}

function elaborate(file: ParsedFile, decl: Declaration, base: string[], goalsAtStart: number): Elaborated {
  const ts = file.tokens;
  let goals = goalsAtStart;
  let tooMany = false;
  const axioms = new Set(base);
  let usesSorry = false;
  let failedAt: number | undefined;
  const from = decl.bodyStart ?? decl.end;
  for (let i = 0; i < ts.count; i++) {
    const at = ts.starts[i] ?? 0;
    // Only a line's first token is a tactic here (`have h : … := by decide` is one step).
    if (at < from || at >= decl.end || isCommentKind(ts.kinds[i] ?? 0) || ts.lineFirst[i] !== 1) continue;
    const word = tokenText(ts, i);
    if (word === "fail") failedAt ??= at;
    else if (word === "constructor") goals++;
    else if (word === "sorry" || word === "admit" || word === "stop") {
      // `admit` is `sorry`; `stop` discards the rest of the block as `repeat sorry` (Lean's Init/Tactics.lean).
      usesSorry = true;
      axioms.add("sorryAx");
      if (word === "stop") {
        goals = 0;
        break;
      }
      goals = Math.max(0, goals - 1);
    } else if (CLOSERS.has(word)) {
      if (word === "native_decide") axioms.add("Lean.ofReduceBool");
      if (goals === 0) tooMany = true;
      goals = Math.max(0, goals - 1);
    }
  }
  return {
    decl,
    namespace: decl.namespace,
    goalsLeft: decl.bodyKind === "tactic" ? goals : 0,
    tooMany,
    failedAt,
    axioms: [...axioms].sort(),
    usesSorry,
  };
}

interface Answer {
  diagnostics: LeanDiagnostic[];
  symbols: object[];
}

function answer(text: string, options: LeanLikeOptions): Answer {
  const read = (options.leanReads ?? ((t) => t))(text);
  const file = parseFile(read);
  const index = new LineIndex(read);
  const diagnostics: LeanDiagnostic[] = [];
  const symbols: object[] = [];
  const known = new Map<string, Elaborated>();
  const scopes: string[] = [];
  for (const command of file.commands) {
    const range = index.rangeAt(command.start, command.end);
    if (command.keyword === "namespace") scopes.push(tokenText(file.tokens, command.lastToken));
    else if (command.keyword === "end") scopes.pop();
    const decl = command.declaration;
    if (decl) {
      symbols.push({ name: decl.name ?? decl.keyword, kind: 6, range, selectionRange: range });
      const e = elaborate(file, decl, options.baseAxioms ?? ["propext"], options.goalsAtHole ?? 1);
      if (decl.fullName) known.set(decl.fullName, e);
      const at = index.rangeAt(decl.byStart ?? decl.keywordStart, (decl.byStart ?? decl.keywordStart) + 2);
      if (e.failedAt !== undefined)
        diagnostics.push({
          range: index.rangeAt(e.failedAt, e.failedAt + 4),
          severity: 1,
          // Lean's `fail "msg"` reports the message as written.
          message: /^fail\s+"([^"]*)"/.exec(read.slice(e.failedAt))?.[1] ?? "failed",
        });
      else if (e.tooMany) diagnostics.push({ range: at, severity: 1, message: "no goals to be proved" });
      else if (e.goalsLeft > 0)
        diagnostics.push({
          range: at,
          severity: 1,
          message: `unsolved goals\n${Array.from({ length: e.goalsLeft }, () => "⊢ P").join("\n\n")}`,
          leanTags: [1],
        });
      else if (e.usesSorry)
        diagnostics.push({
          range: at,
          severity: 2,
          // src/Lean/AddDecl.lean (4.24 on): the sorry term, never the declaration's name.
          message: "declaration uses `sorry`",
        });
    } else if (
      command.keyword === "#print" ||
      (command.keyword === "set_option" && /#print axioms/.test(read.slice(command.start, command.end)))
    ) {
      const written = tokenText(file.tokens, command.lastToken);
      const candidates = written.startsWith("_root_.")
        ? [written.slice(7)]
        : [...scopes.map((_, k) => `${scopes.slice(0, scopes.length - k).join(".")}.${written}`), written];
      const found = candidates.map((c) => known.get(c)).find((e) => e !== undefined);
      if (!found) diagnostics.push({ range, severity: 1, message: `unknown constant '${written}'` });
      else {
        const full = found.decl.fullName ?? "?";
        const printed = found.decl.modifiers.includes("private") ? `_private.Hacks.0.${full}` : full;
        diagnostics.push({
          range,
          severity: 3,
          message: found.axioms.length
            ? `'${printed}' depends on axioms: [${found.axioms.join(", ")}]`
            : `'${printed}' does not depend on any axioms`,
        });
      }
    }
  }
  return { diagnostics, symbols };
}

/** The goals before the tactic at a position: the model's tactics run up to it (null outside a proof). */
function goalsAt(
  text: string,
  position: { line: number; character: number },
  options: LeanLikeOptions,
): number | undefined {
  const read = (options.leanReads ?? ((t) => t))(text);
  const file = parseFile(read);
  const offset = new LineIndex(read).offsetAt(position);
  const decl = file.commands
    .map((c) => c.declaration)
    .find((d) => d?.byStart !== undefined && d.byStart <= offset && offset <= (d.byEnd ?? d.end));
  if (!decl) return undefined;
  const upTo: Declaration = { ...decl, end: offset };
  return elaborate(file, upTo, [], options.goalsAtHole ?? 1).goalsLeft;
}

function serve(connection: MessageConnection, options: LeanLikeOptions): void {
  const docs = new Map<string, { text: string; version: number }>();
  connection.onRequest("initialize", () => ({
    capabilities: { textDocumentSync: { change: 2, openClose: true } },
    serverInfo: { name: "Lean 4 Server", version: "0.3.0" },
  }));
  connection.onNotification("initialized", () => undefined);
  connection.onNotification(
    "textDocument/didOpen",
    (p: { textDocument: { uri: string; text: string; version: number } }) => {
      docs.set(p.textDocument.uri, { text: p.textDocument.text, version: p.textDocument.version });
    },
  );
  connection.onNotification(
    "textDocument/didChange",
    (p: {
      textDocument: { uri: string; version: number };
      contentChanges: Parameters<typeof applyChanges>[1];
    }) => {
      const doc = docs.get(p.textDocument.uri);
      if (doc)
        docs.set(p.textDocument.uri, {
          text: applyChanges(doc.text, p.contentChanges),
          version: p.textDocument.version,
        });
    },
  );
  connection.onNotification("textDocument/didClose", (p: { textDocument: { uri: string } }) => {
    docs.delete(p.textDocument.uri);
  });
  connection.onRequest("textDocument/waitForDiagnostics", async (p: { uri: string; version: number }) => {
    const doc = docs.get(p.uri);
    if (doc) {
      await connection.sendNotification("$/lean/fileProgress", {
        textDocument: { uri: p.uri, version: doc.version },
        processing: [],
      });
      await connection.sendNotification("textDocument/publishDiagnostics", {
        uri: p.uri,
        version: doc.version,
        diagnostics: answer(doc.text, options).diagnostics,
      });
    }
    return {};
  });
  const silent = new Set(options.neverAnswers ?? []);
  const never = new Promise<never>(() => undefined);
  connection.onRequest("textDocument/documentSymbol", async (p: { textDocument: { uri: string } }) => {
    if (silent.has("textDocument/documentSymbol")) await never;
    const doc = docs.get(p.textDocument.uri);
    return doc ? answer(doc.text, options).symbols : null;
  });
  connection.onRequest(
    "$/lean/plainGoal",
    async (p: { textDocument: { uri: string }; position: { line: number; character: number } }) => {
      if (silent.has("$/lean/plainGoal")) await never;
      const doc = docs.get(p.textDocument.uri);
      if (!doc) return null;
      const count = goalsAt(doc.text, p.position, options);
      if (count === undefined) return null;
      const goals = Array.from({ length: count }, () => "⊢ P");
      return { goals, rendered: count === 0 ? "no goals" : goals.join("\n") };
    },
  );
  connection.onRequest("shutdown", () => null);
  connection.listen();
}

/** A LeanServer client connected to a lean-like server in this process. */
export async function leanLike(
  options: LeanLikeOptions = {},
): Promise<{ server: LeanServer; close(): Promise<void> }> {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const connection = createMessageConnection(toServer, toClient);
  serve(connection, options);
  const started = await LeanServer.connect(toClient, toServer);
  if (started.kind !== "started") throw new Error(started.message);
  return {
    server: started.server,
    async close() {
      await started.server.stop(200);
      connection.dispose();
      toServer.end();
      toClient.end();
    },
  };
}
