/**
 * Export pass 1's output for one file, from the file's text escaped once (`JsonText`): its files.jsonl row
 * and its declarations' contexts.jsonl rows, each exactly `JSON.stringify` of the record records.ts defines
 * (test/dataset/rowBytes.test.ts compares them), but with the declaration's text a slice of the escaped
 * file, not serialised and encoded again; and each task's sketch (taskSketches.ts), from which taskRows.ts
 * writes its row once its split is known. Rows are UTF-8 bytes in one-byte strings
 * (`JsonlWriter.writeLatin1Line`).
 */
import type { MinedHole } from "../holes/mine";
import { prefixStart, suffixChars, suffixEnd } from "./context";
import type { JsonlWriter } from "./jsonl";
import { JsonText, latin1OfUtf8 } from "./jsonText";
import { declKeyOf, type TaskContext } from "./records";
import { FileHoleIds } from "./holeIds";
import { HOLE_KINDS } from "../holes/mine";
import { NO_REFERENCE, Sketch, type TaskSketchWriter } from "./taskSketches";

/** What all holes of one declaration write alike. */
interface DeclarationRow {
  declStart: MinedHole["declStart"];
  /** `JSON.stringify(decl)`, as UTF-8 bytes. */
  name: string;
  /** `declKeyOf(hole)`. */
  key: string;
}

/** `JSON.stringify` of string arrays that many rows share (the same array object), computed once per array. */
class ScopesJson {
  private imports: readonly string[] | undefined;
  private scope: readonly string[] | undefined;
  private variables: readonly string[] | undefined;
  private json = "";

  /**
   * `,"imports":…,"scope":…,"variables":…,"statement":` as UTF-8 bytes (one character per byte), made again
   * only when one of the arrays is another (the declarations of a scope share them).
   */
  of(imports: readonly string[], scope: readonly string[], variables: readonly string[]): string {
    if (imports !== this.imports || scope !== this.scope || variables !== this.variables) {
      this.imports = imports;
      this.scope = scope;
      this.variables = variables;
      this.json = latin1OfUtf8(
        `,"imports":${JSON.stringify(imports)},"scope":${JSON.stringify(scope)},` +
          `"variables":${JSON.stringify(variables)},"statement":`,
      );
    }
    return this.json;
  }
}

export class FileRows {
  private readonly json: JsonText;
  /** `JSON.stringify(file)` as UTF-8 bytes, and as text. */
  private readonly fileName: string;
  private readonly fileJson: string;
  private last: DeclarationRow | undefined;
  private readonly scopes = new ScopesJson();
  /** The sketches' task ids, from the file's UTF-8 bytes (made on the first sketch). */
  private ids: FileHoleIds | undefined;

  /**
   * `json`: the text as JSON when already at hand (its `pairs` made `context.codePoints`); `utf8`: the text's
   * UTF-8 when at hand (the file's bytes), for the task ids; `idBuffer`: the ids' buffer, shared by the rows
   * of files written one after another (`FileHoleIds`).
   */
  constructor(
    private readonly text: string,
    private readonly context: TaskContext,
    json?: JsonText,
    private readonly utf8?: Buffer,
    private readonly idBuffer?: { buffer: Buffer },
  ) {
    this.json = json ?? new JsonText(text);
    this.fileJson = JSON.stringify(context.file);
    this.fileName = latin1OfUtf8(this.fileJson);
  }

  /** files.jsonl's row: `JSON.stringify(fileRecord(file, text))`. */
  writeFile(out: JsonlWriter, sha256: string): void {
    out.writeLatin1Line(
      `{"file":${this.fileName},"sha256":"${sha256}","text":${this.json.quoted(0, this.text.length)}}`,
    );
  }

  /** contexts.jsonl's row of the declaration `hole` lies in: `JSON.stringify(contextRecord(…))`. */
  writeContext(out: JsonlWriter, hole: MinedHole, index: number): void {
    const { codePoints } = this.context;
    const start = hole.declFrom;
    const end = hole.declTo;
    const { line, character } = hole.declStart;
    // contextRecord's fields in its order (`declStart` is two whole numbers: its JSON is written here).
    const head =
      `{"context":${index},"file":${this.fileJson},"decl":${JSON.stringify(hole.decl)},` +
      `"declKind":${JSON.stringify(hole.declKind)},"declStart":{"line":${line},"character":${character}},` +
      `"offsets":{"start":${start},"end":${end}},"offsetsCodePoints":{"start":${codePoints.codePointOffset(start)},` +
      `"end":${codePoints.codePointOffset(end)}}`;
    const statement = JSON.stringify(hole.statement);
    const text = this.json.quoted(start, end);
    const scopes = this.scopesJson(hole.variables);
    // Encoded straight into the writer: the head and the statement as UTF-8, the arrays and the text as
    // the UTF-8 they already are. No joined row.
    out.room(3 * (head.length + statement.length) + scopes.length + text.length + 16);
    out.putUtf8(head);
    out.putLatin1(scopes);
    out.putUtf8(statement);
    out.putLatin1(',"text":');
    out.putLatin1(text);
    out.putLatin1("}");
    out.endLine(out.end);
  }

  private scopesJson(variables: readonly string[]): string {
    return this.scopes.of(this.context.imports, this.context.scope, variables);
  }

  /** `declKeyOf(hole)`, computed once per declaration. */
  declKey(hole: MinedHole): string {
    return this.declaration(hole).key;
  }

  /** `JSON.stringify(hole.decl)` as UTF-8 bytes, for the task rows pass 3 writes from sketches. */
  declName(hole: MinedHole): string {
    return this.declaration(hole).name;
  }

  private declaration(hole: MinedHole): DeclarationRow {
    // Holes of one declaration share its `declStart` object and come one after another.
    if (this.last?.declStart === hole.declStart) return this.last;
    this.last = {
      declStart: hole.declStart,
      name: latin1OfUtf8(JSON.stringify(hole.decl)),
      key: declKeyOf(hole),
    };
    return this.last;
  }

  /**
   * The task's sketch (taskSketches.ts): what its row holds that is not the file's text, nor its
   * declaration's, as whole numbers (`taskRecord`'s fields). `fileLine`: the file's line in files.jsonl;
   * `reference`: false for a statement without a proof.
   */
  sketch(out: TaskSketchWriter, hole: MinedHole, decl: number, fileLine: number, reference = true): void {
    const { text, context, json } = this;
    const { codePoints, contextChars } = context;
    const { start, end, range } = hole;
    this.ids ??= new FileHoleIds(text, context.file, json, this.utf8, this.idBuffer);
    const prefixFrom = prefixStart(text, start - hole.declPrefix.length, start, contextChars);
    const suffixTo = suffixEnd(text, end, end + hole.declSuffix.length, suffixChars(contextChars));
    const { ints, at } = out.next();
    ints[at + Sketch.File] = fileLine;
    ints[at + Sketch.Decl] = decl;
    ints[at + Sketch.Kind] = HOLE_KINDS.indexOf(hole.kind);
    ints[at + Sketch.Start] = start;
    ints[at + Sketch.End] = end;
    ints[at + Sketch.StartCodePoints] = codePoints.codePointOffset(start);
    ints[at + Sketch.EndCodePoints] = codePoints.codePointOffset(end);
    ints[at + Sketch.RangeStartLine] = range.start.line;
    ints[at + Sketch.RangeStartCharacter] = range.start.character;
    ints[at + Sketch.RangeEndLine] = range.end.line;
    ints[at + Sketch.RangeEndCharacter] = range.end.character;
    ints[at + Sketch.Indent] = hole.indent;
    ints[at + Sketch.PrefixFrom] = prefixFrom;
    ints[at + Sketch.SuffixTo] = suffixTo;
    this.ids.halvesInto(ints, at + Sketch.IdHigh, this.declaration(hole).key, hole.kind, start, end);
    ints[at + Sketch.PrefixFromByte] = json.byteAt(prefixFrom);
    ints[at + Sketch.StartByte] = json.byteAt(start);
    ints[at + Sketch.EndByte] = json.byteAt(end);
    ints[at + Sketch.SuffixToByte] = json.byteAt(suffixTo);
    ints[at + Sketch.Flags] = reference ? 0 : NO_REFERENCE;
  }
}
