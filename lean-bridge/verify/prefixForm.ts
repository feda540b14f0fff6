/**
 * The prefix-import form of a check document. Lean's server re-walks every command snapshot above an edit, so a
 * check deep in a long file costs time in proportion to the declarations above its hole (measured on the embedded
 * Lean 4.35: about 15 ms with 10 one-line theorems above, about 200 ms with 500). In this form the declarations
 * above the hole's declaration come from a module compiled once from the file's own text (never the candidate's),
 * and the check document imports it: the commands above are blanked in place (their lines kept, empty), so every
 * line of the document, and every column from the hole's declaration on, stays the file's, and Lean elaborates
 * only the hole's declaration.
 *
 * The form is used only where it means exactly what the whole file means. Commands that only set scope
 * (`namespace`, `section`, `end`, `open`, `variable`, `universe`, `set_option`) are kept verbatim, so names
 * resolve as in the file; declarations and commands whose effect an import carries (notation, syntax, macros,
 * `#check`-style queries) are blanked; anything else, and any `private`, `local` or `scoped` declaration (whose
 * effect does not survive an import), keeps the whole file. This is an allow-list: a command it does not know
 * means the whole document.
 */
import { createHash } from "node:crypto";
import type { Declaration, ParsedFile } from "../lean/commands";
import { TokenKind, tokenText } from "../lean/tokens";

/** Commands kept verbatim: they change only how later names resolve, which an import does not carry. */
const SCOPE_COMMANDS = new Set(["namespace", "section", "end", "open", "variable", "universe", "set_option"]);

/** Commands that are not declarations but whose whole effect an importing module sees (or that have none). */
const IMPORTED_COMMANDS = new Set([
  "notation",
  "infix",
  "infixl",
  "infixr",
  "prefix",
  "postfix",
  "syntax",
  "macro",
  "macro_rules",
  "declare_syntax_cat",
  "#check",
  "#print",
  "#reduce",
]);

/** Words whose effect is confined to the module that says them: a prefix holding one keeps the whole file. */
const MODULE_LOCAL_WORDS = new Set(["private", "local", "scoped", "mutual"]);

/**
 * Words that keep the whole file because the verifier reads the check document's own text for them: an `axiom`
 * the workspace declares is told apart from the allowed axiom of the same name by being declared in the
 * document (classify.ts `declaredByDocument`, the gate's `declaredInDocument`), which a blanked prefix would hide.
 */
const READ_FROM_DOCUMENT_WORDS = new Set(["axiom"]);

/** How the text above a declaration is checked. */
export type PrefixPlan =
  | {
      kind: "import";
      /** The module the check document imports: `P` and 8 hex digits of the key. */
      module: string;
      /** What the module is compiled from: the file's text up to the declaration. */
      moduleText: string;
      /**
       * What stands in the check document before the declaration: the same lines as the text it replaces, and
       * the same columns on the declaration's first line.
       */
      blanked: string;
      /** The hash of the module's text, the Lean that compiles it and its search path. */
      key: string;
    }
  | { kind: "whole"; reason: string };

/** The text with every character but line breaks made a space: the same offsets, lines and columns. */
function blank(text: string): string {
  return text.replace(/[^\n\r]/g, " ");
}

/**
 * Every whole line that holds only spaces made empty: the same lines, and the same columns wherever text stands
 * (the last line, where the hole's declaration begins, is kept as it is). Lean then reads a few bytes per line
 * above the hole instead of the file's whole text.
 */
function compact(text: string): string {
  const lines = text.split("\n");
  for (let k = 0; k < lines.length - 1; k++)
    if (/^[ \r]*$/.test(lines[k]!)) lines[k] = lines[k]!.includes("\r") ? "\r" : "";
  return lines.join("\n");
}

/**
 * Plans the prefix-import form for the declaration `decl` of `file`. `salt` names what else the module depends
 * on (the Lean version, the imports' build), so a changed toolchain compiles afresh. `minDeclarations`: below
 * this many declarations above the hole, the whole file is cheap enough.
 */
export function planPrefix(
  file: ParsedFile,
  decl: Declaration,
  salt: string,
  minDeclarations: number,
): PrefixPlan {
  const source = file.tokens.text;
  const ts = file.tokens;
  const firstImport = file.commands.find((c) => c.keyword === "import" && c.end <= file.headerEnd);
  if (!firstImport)
    return { kind: "whole", reason: "the file has no import to stand the prefix module in for" };
  if (file.commands.some((c) => c.keyword === "module" && c.end <= file.headerEnd))
    return { kind: "whole", reason: "a `module` file's declarations are private to it unless marked public" };
  const above = file.commands.filter((c) => c.start >= file.headerEnd && c.end <= decl.start);
  const declarations = above.filter((c) => c.declaration !== undefined).length;
  if (declarations < minDeclarations)
    return {
      kind: "whole",
      reason: `${declarations} declarations above the hole (the form pays from ${minDeclarations})`,
    };
  for (let i = 0; i < ts.count && (ts.starts[i] ?? 0) < decl.start; i++) {
    if (ts.kinds[i] !== TokenKind.Ident) continue;
    const word = tokenText(ts, i);
    if (MODULE_LOCAL_WORDS.has(word))
      return { kind: "whole", reason: `\`${word}\` above the hole has an effect an import does not carry` };
    if (READ_FROM_DOCUMENT_WORDS.has(word))
      return {
        kind: "whole",
        reason: `\`${word}\` above the hole must be seen in the check document itself`,
      };
  }
  const parts: string[] = [];
  let at = file.headerEnd;
  for (const c of above) {
    parts.push(source.slice(at, c.start));
    const text = source.slice(c.start, c.end);
    if (c.declaration !== undefined || IMPORTED_COMMANDS.has(c.keyword)) parts.push(blank(text));
    else if (SCOPE_COMMANDS.has(c.keyword) && !text.trimEnd().endsWith(" in")) parts.push(text);
    else if (c.keyword === "noncomputable" && /^noncomputable\s+section\b/.test(text)) parts.push(text);
    else
      return {
        kind: "whole",
        reason: `the command \`${c.keyword}\` above the hole is not one the form knows`,
      };
    at = c.end;
  }
  parts.push(source.slice(at, decl.start));
  const moduleText = source.slice(0, decl.start);
  const key = createHash("sha256").update(salt).update("\0").update(moduleText).digest("hex");
  const module = `P${key.slice(0, 8)}`;
  // The header's imports give way to the one import of the module (which imports them itself), on the line of
  // the first import; the header's other lines stay, blank.
  const header = source.slice(firstImport.start, file.headerEnd);
  const firstLineEnd = header.search(/[\n\r]/);
  const newHeader = `import ${module}` + (firstLineEnd === -1 ? "" : blank(header.slice(firstLineEnd)));
  const blanked = compact(source.slice(0, firstImport.start) + newHeader + parts.join(""));
  return { kind: "import", module, moduleText, blanked, key };
}
