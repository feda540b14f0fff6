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
 * Goals are counted by a small model of tactics (tacticModel.ts): `constructor` adds one, a closing tactic (`exact`, `rfl`,
 * `omega`, `simp`, `decide`, `native_decide`, `trivial`, …) closes one, `skip`/`all_goals skip` do nothing.
 * It is a test double, never a judge of proofs.
 */
import { PassThrough } from "node:stream";
import { createMessageConnection, ResponseError, type MessageConnection } from "vscode-jsonrpc/node";
import { parseFile, type Declaration } from "../../lean-bridge/lean/commands";
import { isCommentKind, tokenText } from "../../lean-bridge/lean/tokens";
import { LeanErrorCode, type LeanDiagnostic } from "../../lean-bridge/protocol/lean";
import { LeanServer } from "../../lean-bridge/server/leanServer";
import { applyChanges } from "../../lean-bridge/text/edits";
import { LineIndex } from "../../lean-bridge/text/positions";
import { CLOSERS, elaborate, type Elaborated } from "./tacticModel";

export interface LeanLikeOptions {
  /** How Lean reads the document where it differs from the project's lexer (default: the same). */
  leanReads?: (text: string) => string;
  /** Axioms of a proof that uses no special tactic (default: propext). */
  baseAxioms?: string[];
  /** Goals `$/lean/plainGoal` shows at a hole (default 1). */
  goalsAtHole?: number;
  /** Requests this server never answers (a Lean too busy to reply before the check's deadline). */
  neverAnswers?: readonly string[];
  /** Versions of a document whose diagnostics it answers (later ones never finish); default all. */
  answersVersions?: number;
  /**
   * Never finishes: still loading the header (progress from line 0), or elaborating the checked
   * declaration (progress from the last declaration's line), as Lean reports it in `$/lean/fileProgress`.
   */
  hangsAt?: "header" | "declaration";
  /** The first this many waits for diagnostics end with the worker crashing (Lean's error -32902). */
  crashes?: number;
}

/** Types the lean-like server knows to be data (anything else it takes for a proposition). */
const DATA_TYPES = new Set([
  "Nat",
  "Int",
  "String",
  "Bool",
  "Char",
  "List",
  "Array",
  "Option",
  "Type",
  "Decidable",
]);

/** The head of a declaration's type, after its top-level `:`. */
function typeHead(decl: Declaration): string {
  const ts = parseFile(decl.statement).tokens;
  let depth = 0;
  for (let k = 0; k < ts.count; k++) {
    const t = tokenText(ts, k);
    if (t === "(" || t === "[" || t === "{" || t === "⦃") depth++;
    else if (t === ")" || t === "]" || t === "}" || t === "⦄") depth--;
    else if (depth === 0 && t === ":") return k + 1 < ts.count ? tokenText(ts, k + 1) : "";
  }
  return "";
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
      for (const error of e.errors)
        diagnostics.push({
          range: index.rangeAt(error.at, error.end),
          severity: 1,
          // Lean's `fail "msg"` reports the message as written, untagged.
          message: error.message,
          ...(error.unsolved ? { leanTags: [1] } : {}),
        });
      for (const info of e.infos)
        diagnostics.push({ range: index.rangeAt(info.at, info.end), severity: 3, message: info.message });
      if (e.errors.length === 0 && e.usesSorry)
        diagnostics.push({
          range: at,
          severity: 2,
          // src/Lean/AddDecl.lean (4.24 on): the sorry term, never the declaration's name.
          message: "declaration uses `sorry`",
        });
    } else if (command.keyword === "#check") {
      // `#check (type_of% @_root_.X : Prop)`: the verifier's question whether X states a proposition.
      const m = /type_of% @(?:_root_\.)?([^\s)]+) : Prop\)/.exec(read.slice(command.start, command.end));
      const found = m ? known.get(m[1] ?? "") : undefined;
      if (!found) diagnostics.push({ range, severity: 1, message: `unknown constant '${m?.[1] ?? "?"}'` });
      else if (DATA_TYPES.has(typeHead(found.decl)))
        diagnostics.push({
          range,
          severity: 1,
          message: `type mismatch\n  ${typeHead(found.decl)}\nhas type\n  Type : Type 1\nbut is expected to have type\n  Prop : Type`,
        });
      else diagnostics.push({ range, severity: 3, message: `type_of% @${m?.[1] ?? ""} : Prop` });
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
  // Lean's `goalsAt?` answers with the innermost block at the position: after a nested `by` or a bullet on
  // the same line, its own goal (closed once a closing tactic ran in it), not the goals of the hole's block.
  const ts = file.tokens;
  for (let i = ts.count - 1; i >= 0; i--) {
    const at = ts.starts[i] ?? 0;
    if (at >= offset) continue;
    if (ts.lines[i] !== new LineIndex(read).positionAt(offset).line || at <= (decl.byStart ?? 0)) break;
    if (tokenText(ts, i) !== "by" && tokenText(ts, i) !== "·") continue;
    let closers = 0;
    for (let k = i + 1; k < ts.count && (ts.starts[k] ?? 0) < offset; k++)
      if (CLOSERS.has(tokenText(ts, k))) closers++;
    return Math.max(0, 1 - closers);
  }
  // A line starting with `<;>` continues the step before it: the node at its start is `t <;> s`, which
  // starts where `t` does, so Lean answers with the goals before `t`.
  let before = offset;
  const here = ts.starts.findIndex((start, k) => start === offset && k < ts.count);
  if (here > 0 && tokenText(ts, here) === "<;>")
    for (let k = here - 1; k >= 0; k--)
      if (ts.lineFirst[k] === 1 && !isCommentKind(ts.kinds[k] ?? 0)) {
        before = ts.starts[k] ?? offset;
        break;
      }
  const upTo: Declaration = { ...decl, end: before };
  return elaborate(file, upTo, [], options.goalsAtHole ?? 1).goalsLeft;
}

function serve(connection: MessageConnection, options: LeanLikeOptions): void {
  const docs = new Map<string, { text: string; version: number }>();
  const never = new Promise<never>(() => undefined);
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
  const versionsSeen = new Map<string, number>();
  let crashes = options.crashes ?? 0;
  connection.onRequest("textDocument/waitForDiagnostics", async (p: { uri: string; version: number }) => {
    const seen = (versionsSeen.get(p.uri) ?? 0) + 1;
    versionsSeen.set(p.uri, seen);
    if (seen > (options.answersVersions ?? Infinity)) await never;
    if (crashes > 0) {
      crashes--;
      return new ResponseError(LeanErrorCode.WorkerCrashed, `Server process for ${p.uri} crashed`);
    }
    const doc = docs.get(p.uri);
    if (doc && options.hangsAt) {
      const file = parseFile(doc.text);
      const decls = file.commands.filter((c) => c.declaration);
      const line =
        options.hangsAt === "header" ? 0 : new LineIndex(doc.text).positionAt(decls.at(-1)?.start ?? 0).line;
      const end = new LineIndex(doc.text).positionAt(doc.text.length);
      await connection.sendNotification("$/lean/fileProgress", {
        textDocument: { uri: p.uri, version: doc.version },
        processing: [{ range: { start: { line, character: 0 }, end }, kind: 1 }],
      });
      await never;
    }
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
