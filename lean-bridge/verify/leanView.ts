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
import type {
  DocumentSymbol,
  FoldingRange,
  Position,
  SymbolInformation,
} from "vscode-languageserver-protocol";
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

export function checkLeanView(doc: CheckDocument, answer: SymbolsAnswer): ViewCheck {
  if (answer !== null && !Array.isArray(answer))
    return { kind: "unexpected", reason: "Lean's documentSymbol answer is not a list" };
  const index = new LineIndex(doc.text);
  const start = index.positionAt(doc.declarationStart);
  const mine = declarationSymbols(answer).filter((s) => !before(s.start, start));
  const want = nameParts(doc.declaredName).join(".");
  const names = mine.map((s) => `'${s.name}'`).join(", ");
  // Lean lists only commands of kind `declaration`, in every version (RequestHandling.lean,
  // `handleDocumentSymbol`); a declaration wrapped in `set_option … in` / `open … in` is one command of
  // kind `in` and is never listed. Then nothing may be listed from its start on (a declaration the
  // candidate introduced would be), and its end is confirmed by `checkFoldingView`.
  if (!doc.listedBySymbols)
    return mine.length === 0
      ? { kind: "ok" }
      : {
          kind: "unexpected",
          reason: `Lean sees declarations where only '${doc.declaredName}' belongs: ${names}`,
        };
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

export type FoldingAnswer = FoldingRange[] | null;

/**
 * For a declaration documentSymbol does not list: Lean's `textDocument/foldingRange` (RequestHandling.lean,
 * `handleFoldingRange`) gives every top-level command that spans lines one region from its first token's
 * line to its last token's line (`addCommandRange` → `addRangeFromSyntax`; nothing for a one-line command).
 * The checked command's region must start on the declaration's first line and end on the line of its last
 * token, and no other region may start inside it: text in the candidate that ended the command early cuts
 * that region short, and a command it started over several lines shows up as a region of its own. This is
 * a check at line granularity: a command started and ended on the declaration's last line (or within a
 * one-line declaration) is left to the policy and the re-parse (checkDocument.ts).
 */
export function checkFoldingView(doc: CheckDocument, answer: FoldingAnswer): ViewCheck {
  if (!Array.isArray(answer))
    return { kind: "unexpected", reason: "Lean's foldingRange answer is not a list" };
  const index = new LineIndex(doc.text);
  const first = index.positionAt(doc.declarationStart).line;
  const last = index.positionAt(doc.declarationEnd).line;
  const inside = answer.filter((r) => r.startLine >= first && r.startLine <= last && r.kind !== "comment");
  const own = inside.filter((r) => r.startLine === first);
  const others = inside.filter((r) => r.startLine !== first);
  if (others.length > 0)
    return {
      kind: "unexpected",
      reason: `Lean sees a command starting on line ${others[0]!.startLine + 1}, inside '${doc.declaredName}': something in the candidate ended it`,
    };
  if (first === last)
    return own.length === 0
      ? { kind: "ok" }
      : {
          kind: "unexpected",
          reason: `Lean's command at line ${first + 1} runs past the one line of '${doc.declaredName}'`,
        };
  if (own.length !== 1 || own[0]!.endLine !== last)
    return {
      kind: "unexpected",
      reason: `Lean's command '${doc.declaredName}' (line ${first + 1}) ends on line ${own[0] ? own[0].endLine + 1 : "?"}, not on line ${last + 1} where the checked text ends: something in the candidate ended it`,
    };
  return { kind: "ok" };
}
