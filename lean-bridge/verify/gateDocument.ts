/**
 * The document the kernel gate compiles. Lean writes no `.olean` for a file with any error
 * (src/Lean/Elab/Frontend.lean, `runFrontend`: `if hasErrors then return none` before `writeModule`), while the
 * server's check leaves errors above the checked declaration to the workspace. So when a compile fails only in
 * commands above the checked declaration (below the header), those commands are blanked, their lines kept so
 * every position stays, and the document is compiled again. Blanking is safe against the candidate: its text
 * lies in the checked declaration, and removing a command it depends on can only make the replay fail.
 */
import { parseFile } from "../lean/commands";
import { LineIndex } from "../text/positions";

/**
 * The text with every command that holds one of `errorLines` (0-based) blanked, or undefined when an error is
 * not in a command strictly between the header and the checked declaration (then nothing is the workspace's
 * alone, and the compile's failure stands).
 */
export function blankFailingCommands(
  text: string,
  errorLines: readonly number[],
  headerEndLine: number,
  declarationLine: number,
): string | undefined {
  if (errorLines.length === 0) return undefined;
  if (errorLines.some((line) => line <= headerEndLine || line >= declarationLine)) return undefined;
  const file = parseFile(text);
  const index = new LineIndex(text);
  const spans: [number, number][] = [];
  for (const line of new Set(errorLines)) {
    const at = index.offsetAt({ line, character: 0 });
    const command = file.commands.find(
      (c) =>
        index.positionAt(c.start).line <= line && line <= index.positionAt(Math.max(c.start, c.end - 1)).line,
    );
    // An error outside any command (or in the header's) leaves nothing to blank.
    if (!command || command.start < file.headerEnd || at >= text.length) return undefined;
    if (
      index.positionAt(command.end).line >= declarationLine &&
      command.end > index.offsetAt({ line: declarationLine, character: 0 })
    )
      return undefined;
    spans.push([command.start, command.end]);
  }
  let out = text;
  for (const [start, end] of spans)
    out = out.slice(0, start) + out.slice(start, end).replace(/[^\n]/g, " ") + out.slice(end);
  return out;
}
