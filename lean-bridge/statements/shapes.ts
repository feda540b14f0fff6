/**
 * The row shapes statement datasets come in, read into one form: a header (imports, then the `open`,
 * `set_option` and `universe` commands right after them), context (other commands before the theorem), the
 * theorem's head (keyword, name, binders, type) and, when the row has one, its tactic proof.
 *
 * - lean-grpo: {name, statement, context, imports}; the statement with or without a leading `theorem name`,
 *   with or without `:=` (a proof after it is kept);
 * - miniF2F / ProofNet / Lean Workbook: {formal_statement, header, informal_prefix};
 * - NuminaMath-LEAN: {formal_statement, formal_ground_truth} (the ground truth is a whole Lean file with the
 *   proof, used when it proves the very statement given);
 * - anything else through a column mapping (`--columns statement=…,header=…`).
 *
 * Every Lean text is read by the project's own parser (lean/commands.ts), never by pattern matching.
 */
import { parseFile, type Declaration, type ParsedFile } from "../lean/commands";
import { lex } from "../lean/lexer";
import { TokenKind, isCommentKind, tokenText } from "../lean/tokens";
import { codeTokens } from "../lean/sameCode";
import { withoutTrailingComments } from "../verify/placeCandidate";

export type RowShape = "lean-grpo" | "formal-statement" | "numina" | "columns";

/** Which column holds what, for rows of any other shape. */
export interface ColumnMap {
  statement: string;
  name?: string;
  header?: string;
  imports?: string;
  context?: string;
  proof?: string;
  informal?: string;
}

export const COLUMN_ROLES = [
  "statement",
  "name",
  "header",
  "imports",
  "context",
  "proof",
  "informal",
] as const;

export interface StatementRow {
  /** 1-based position of the row in the input. */
  row: number;
  shape: RowShape;
  /** How reports name the row: its name column, else the theorem's name, else `row N`. */
  label: string;
  /** Imports, then the `open` / `set_option` / `universe` commands that follow them, one per line. */
  header: string;
  /** Other commands before the theorem (definitions, variables, auxiliary lemmas), as written. */
  context: string;
  /** The theorem from its doc comment and modifiers through its statement (no `:=`). */
  head: string;
  /** The keyword and the name, when it has one. */
  keyword: string;
  name: string | undefined;
  /** The whole declaration as written, when it has a tactic proof (its proof becomes the hole). */
  proved: string | undefined;
  /** Why a proof the row gave is not used. */
  proofNote?: "term-proof" | "ground-truth-differs";
}

export type ShapedRow =
  { kind: "ok"; row: StatementRow } | { kind: "malformed"; row: number; reason: string };

const THEOREM_KEYWORDS = new Set(["theorem", "lemma", "example"]);
const HEADER_KEYWORDS = new Set(["open", "set_option", "universe"]);

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** Imports given as a list of module names, one string, or a Lean header. */
function importLines(value: unknown): string {
  const list = Array.isArray(value)
    ? value.filter((v): v is string => typeof v === "string")
    : typeof value === "string"
      ? value.split(/[\n,]/)
      : [];
  return list
    .map((m) => m.trim())
    .filter((m) => m !== "")
    .map((m) => (m.startsWith("import ") ? m : `import ${m}`))
    .join("\n");
}

/** Text as a doc comment: kept when it already is one, wrapped otherwise (never able to close early). */
function asDocComment(text: string | undefined): string {
  const t = (text ?? "").trim();
  if (t === "") return "";
  const ts = lex(t);
  if (ts.count === 1 && ts.kinds[0] === TokenKind.DocComment) return t + "\n";
  return `/-- ${t.replace(/-\//g, "- /")} -/\n`;
}

/** Whether text starts with a declaration keyword (after doc comments, attributes and modifiers). */
function startsWithKeyword(statement: string): boolean {
  const parsed = parseFile(statement.trim());
  const decl = parsed.commands[0]?.declaration;
  return decl !== undefined && THEOREM_KEYWORDS.has(decl.keyword);
}

/** A Lean identifier for a row's name, or undefined when the name cannot be one. */
function identifier(name: string | undefined): string | undefined {
  const n = (name ?? "").trim();
  const ts = lex(n);
  return ts.count === 1 && ts.kinds[0] === TokenKind.Ident && tokenText(ts, 0) === n ? n : undefined;
}

/** A bare statement (`(n : Nat) : n + 0 = n`, `∀ n, …`) as a theorem named after the row. */
function withHead(statement: string, name: string | undefined, row: number): string {
  const s = statement.trim();
  if (startsWithKeyword(s)) return s;
  const id = identifier(name) ?? `row_${row}`;
  const signature = /^[([{⦃:]/.test(s) ? s : `: ${s}`;
  return `theorem ${id} ${signature}`;
}

/** Adds `:= by sorry` where the statement stops before its proof (`:=`, `:= by` or nothing). */
function withBody(text: string): string {
  // A statement may end with a comment: what is added must not land inside it.
  const t = (withoutTrailingComments(text) ?? text).trimEnd();
  if (/:=\s*by$/.test(t)) return `${t}\n  sorry`;
  if (/:=$/.test(t)) return `${t} by\n  sorry`;
  const parsed = parseFile(t);
  const decl = lastTheorem(parsed);
  if (decl && decl.bodyKind === "none") return `${t} := by\n  sorry`;
  return t;
}

function lastTheorem(parsed: ParsedFile): Declaration | undefined {
  let found: Declaration | undefined;
  for (const c of parsed.commands)
    if (c.declaration && THEOREM_KEYWORDS.has(c.declaration.keyword)) found = c.declaration;
  return found;
}

/** The code tokens of a statement after its keyword and name: what makes two statements the same. */
export function signatureTokens(head: string, named: boolean): string[] {
  const tokens = codeTokens(head);
  const k = tokens.findIndex((t) => THEOREM_KEYWORDS.has(t));
  return tokens.slice(k < 0 ? 0 : k + (named ? 2 : 1));
}

type Split = Omit<StatementRow, "row" | "shape" | "label">;

/**
 * A Lean text holding a header, maybe context, and the theorem (last `theorem`/`lemma`/`example`). Its
 * proof is kept when it is a tactic proof other than `sorry`.
 */
export function splitLeanText(text: string): Split | { error: string } {
  const source = text.replace(/\r\n?/g, "\n");
  const parsed = parseFile(source);
  const decl = lastTheorem(parsed);
  if (!decl) return { error: "no theorem, lemma or example in the statement" };
  const headerParts: string[] = [];
  if (parsed.headerEnd > 0) headerParts.push(source.slice(0, parsed.headerEnd).trim());
  let contextStart = parsed.headerEnd;
  for (const c of parsed.commands) {
    if (c.end <= parsed.headerEnd) continue;
    if (c.declaration || !HEADER_KEYWORDS.has(c.keyword) || c.start >= decl.start) break;
    headerParts.push(source.slice(c.start, c.end).trim());
    contextStart = c.end;
  }
  const context = source.slice(contextStart, decl.start).trim();
  const head = (source.slice(decl.start, decl.keywordStart) + decl.statement).trim();
  let proved: string | undefined;
  let proofNote: StatementRow["proofNote"];
  if (decl.bodyKind === "tactic" && decl.byStart !== undefined) {
    const body = codeTokens(source.slice(decl.byStart + 2, decl.byEnd ?? decl.end));
    if (body.length > 0 && !(body.length === 1 && body[0] === "sorry"))
      proved = source.slice(decl.start, decl.end).trimEnd();
  } else if (decl.bodyKind !== "none" && decl.bodyStart !== undefined) {
    const body = codeTokens(source.slice(decl.bodyStart, decl.end));
    if (!(body.length === 1 && body[0] === "sorry")) proofNote = "term-proof";
  }
  return {
    header: headerParts.join("\n"),
    context,
    head,
    keyword: decl.keyword,
    name: decl.name,
    proved,
    ...(proofNote ? { proofNote } : {}),
  };
}

function finish(
  row: number,
  shape: RowShape,
  label: string | undefined,
  split: Split | { error: string },
): ShapedRow {
  if ("error" in split) return { kind: "malformed", row, reason: split.error };
  return { kind: "ok", row: { row, shape, label: label?.trim() || split.name || `row ${row}`, ...split } };
}

function leanGrpoRow(
  raw: Record<string, unknown>,
  row: number,
  shape: RowShape,
  columns?: ColumnMap,
): ShapedRow {
  const get = (role: keyof ColumnMap, fallback: string) => raw[columns?.[role] ?? fallback];
  const statement = str(get("statement", "statement"));
  if (statement === undefined || statement.trim() === "")
    return { kind: "malformed", row, reason: `no statement (column "${columns?.statement ?? "statement"}")` };
  const name = str(get("name", "name"));
  const header = [importLines(get("imports", "imports")), str(get("header", "header")) ?? ""]
    .filter((h) => h.trim() !== "")
    .join("\n");
  const context = str(get("context", "context")) ?? "";
  const proof = columns?.proof ? str(raw[columns.proof]) : undefined;
  let theorem = withHead(statement, name, row);
  if (proof?.trim()) theorem = `${theorem.replace(/\s*:=\s*(by)?\s*(sorry)?\s*$/, "")} := ${proof.trim()}`;
  const text = [header, context, asDocComment(str(get("informal", "informal_prefix"))) + withBody(theorem)]
    .filter((p) => p.trim() !== "")
    .join("\n\n");
  return finish(row, shape, name, splitLeanText(text));
}

function formalStatementRow(raw: Record<string, unknown>, row: number): ShapedRow {
  const statement = str(raw["formal_statement"]) ?? "";
  const header = str(raw["header"]) ?? "";
  const informal = asDocComment(str(raw["informal_prefix"]));
  const text = `${header}\n\n${informal}${withBody(statement.trim())}`;
  return finish(row, "formal-statement", str(raw["name"]) ?? str(raw["id"]), splitLeanText(text));
}

function numinaRow(raw: Record<string, unknown>, row: number): ShapedRow {
  const given = splitLeanText(withBody((str(raw["formal_statement"]) ?? "").trim()));
  const label = str(raw["uuid"]) ?? str(raw["name"]) ?? str(raw["id"]);
  const truth = str(raw["formal_ground_truth"]);
  if ("error" in given || !truth?.trim()) return finish(row, "numina", label, given);
  const proved = splitLeanText(truth);
  const same =
    !("error" in proved) &&
    proved.proved !== undefined &&
    proved.header === given.header &&
    signatureTokens(proved.head, proved.name !== undefined).join(" ") ===
      signatureTokens(given.head, given.name !== undefined).join(" ");
  if (same) return finish(row, "numina", label, proved);
  return finish(row, "numina", label, { ...given, proofNote: "ground-truth-differs" });
}

/** Reads one row (a parsed JSON object or Parquet record) in its shape. */
export function shapeRow(raw: unknown, row: number, columns?: ColumnMap): ShapedRow {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return { kind: "malformed", row, reason: "not an object" };
  const record = raw as Record<string, unknown>;
  if (columns) return leanGrpoRow(record, row, "columns", columns);
  if (typeof record["formal_statement"] === "string")
    return typeof record["formal_ground_truth"] === "string"
      ? numinaRow(record, row)
      : formalStatementRow(record, row);
  if (typeof record["statement"] === "string") return leanGrpoRow(record, row, "lean-grpo");
  return {
    kind: "malformed",
    row,
    reason: `no statement column (found: ${Object.keys(record).slice(0, 8).join(", ") || "none"}); expected "statement" (lean-grpo), "formal_statement", or --columns statement=COLUMN`,
  };
}

/** Parses `--columns statement=problem,header=preamble,…`. */
export function parseColumnMap(
  spec: string,
): { kind: "ok"; columns: ColumnMap } | { kind: "error"; message: string } {
  const map: Partial<ColumnMap> = {};
  for (const part of spec.split(",")) {
    const [role, column] = part.split("=").map((s) => s.trim());
    if (!role || !column) return { kind: "error", message: `"${part}" is not ROLE=COLUMN` };
    if (!(COLUMN_ROLES as readonly string[]).includes(role))
      return { kind: "error", message: `unknown role "${role}" (roles: ${COLUMN_ROLES.join(", ")})` };
    map[role as keyof ColumnMap] = column;
  }
  if (!map.statement) return { kind: "error", message: "the mapping needs statement=COLUMN" };
  return { kind: "ok", columns: map as ColumnMap };
}

/** Whether a comment-free text is empty (context made only of comments adds nothing). */
export function isBlank(text: string): boolean {
  const ts = lex(text);
  for (let i = 0; i < ts.count; i++) if (!isCommentKind(ts.kinds[i] ?? 0)) return false;
  return true;
}
