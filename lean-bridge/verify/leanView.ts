/**
 * Confirms from Lean's own view of the check document (its `textDocument/documentSymbol` answer,
 * src/Lean/Server/FileWorker/RequestHandling.lean) that the candidate introduced no declaration: from the
 * checked declaration's start to the end of the document Lean must list exactly that one declaration, under
 * the name the check document gives it, and Lean's range of it must reach the end of the checked text.
 * Lean lists every top-level `declaration` command (namespaces and sections as containers with children),
 * so text that escaped the hole and became a declaration shows up here whatever our lexer thought of it,
 * and text that ended the declaration early (to start any other command) cuts its range short. Any other
 * answer fails closed.
 */
import type { DocumentSymbol, Position, SymbolInformation } from "vscode-languageserver-protocol";
import { lex } from "../lean/lexer";
import { tokenText } from "../lean/tokens";
import { LineIndex } from "../text/positions";
import type { CheckDocument } from "./checkDocument";
import { nameParts } from "./policy";

export type SymbolsAnswer = DocumentSymbol[] | SymbolInformation[] | null;

export type ViewCheck = { kind: "ok" } | { kind: "unexpected"; reason: string };

/** LSP SymbolKind.Namespace: Lean's kind for `namespace` and `section` containers. */
const NAMESPACE_KIND = 3;

interface FlatSymbol {
  name: string;
  start: Position;
  end: Position;
}

function isDocumentSymbol(s: DocumentSymbol | SymbolInformation): s is DocumentSymbol {
  return "selectionRange" in s;
}

/** Every declaration symbol, containers opened, in document order. */
export function declarationSymbols(answer: SymbolsAnswer): FlatSymbol[] {
  const out: FlatSymbol[] = [];
  const visit = (symbols: readonly (DocumentSymbol | SymbolInformation)[]) => {
    for (const s of symbols) {
      if (isDocumentSymbol(s)) {
        if (s.kind !== NAMESPACE_KIND) out.push({ name: s.name, start: s.range.start, end: s.range.end });
        if (s.children) visit(s.children);
      } else if (s.kind !== NAMESPACE_KIND)
        out.push({ name: s.name, start: s.location.range.start, end: s.location.range.end });
    }
  };
  visit(answer ?? []);
  return out;
}

const before = (a: Position, b: Position) =>
  a.line < b.line || (a.line === b.line && a.character < b.character);

/**
 * Lean versions before the info-tree based handler list only declarations that are themselves top-level
 * commands, so one wrapped in `set_option … in` / `open … in` is not listed; its absence is then expected.
 */
function wrappedInIn(doc: CheckDocument): boolean {
  const head = doc.text.slice(doc.declaration.start, doc.declaration.keywordStart);
  const ts = lex(head);
  for (let i = 0; i < ts.count; i++) if (tokenText(ts, i) === "in") return true;
  return false;
}

export function checkLeanView(doc: CheckDocument, answer: SymbolsAnswer): ViewCheck {
  if (answer !== null && !Array.isArray(answer))
    return { kind: "unexpected", reason: "Lean's documentSymbol answer is not a list" };
  const index = new LineIndex(doc.text);
  const start = index.positionAt(doc.declarationStart);
  const mine = declarationSymbols(answer).filter((s) => !before(s.start, start));
  const want = nameParts(doc.declaredName).join(".");
  const names = mine.map((s) => `'${s.name}'`).join(", ");
  if (mine.length === 0 && wrappedInIn(doc)) return { kind: "ok" };
  if (mine.length !== 1)
    return {
      kind: "unexpected",
      reason: `Lean sees ${mine.length} declarations where only '${doc.declaredName}' belongs${names ? ` (${names})` : ""}`,
    };
  const got = nameParts(mine[0]!.name).join(".");
  if (got !== want)
    return {
      kind: "unexpected",
      reason: `Lean names the checked declaration '${mine[0]!.name}', not '${doc.declaredName}'`,
    };
  // Lean's declaration must run to our end: if text in the candidate ended it early (and started some
  // other command, declaration or not), Lean's range stops inside the candidate.
  const end = index.positionAt(doc.declarationEnd);
  if (before(mine[0]!.end, end))
    return {
      kind: "unexpected",
      reason: `Lean's declaration '${mine[0]!.name}' ends at ${mine[0]!.end.line}:${mine[0]!.end.character}, before the end of the checked text (${end.line}:${end.character}): something in the candidate ended it`,
    };
  return { kind: "ok" };
}
