/**
 * Tasks as export pass 1 leaves them (files.jsonl, a sketch per task, their heads), made from mined holes in
 * tests, with the records the contract says their rows are (`taskRecord`), and their rows read back as the
 * exporter writes them (taskRows.ts).
 */
import { join } from "node:path";
import { readFileSync } from "node:fs";
import type { MinedHole } from "../../lean-bridge/holes/mine";
import { JsonlWriter } from "../../lean-bridge/dataset/jsonl";
import { JsonText } from "../../lean-bridge/dataset/jsonText";
import { PendingHeads } from "../../lean-bridge/dataset/pendingHeads";
import {
  CodePointIndex,
  fileRecord,
  taskRecord,
  type TaskContext,
  type TaskRecord,
} from "../../lean-bridge/dataset/records";
import { FileRows } from "../../lean-bridge/dataset/rowBytes";
import { sketchedRows } from "../../lean-bridge/dataset/taskRows";
import { TaskSketchWriter } from "../../lean-bridge/dataset/taskSketches";

export interface SketchedFile {
  file: string;
  text: string;
  /** The holes to sketch, in file order (a test may add holes the miner would not cut). */
  holes: MinedHole[];
}

export interface SketchedTasks {
  filesPath: string;
  sketchPath: string;
  heads: PendingHeads;
  declNames: string[];
  /** Per task, in order: its hole, its file's `TaskContext` and its declaration index. */
  tasks: { hole: MinedHole; context: TaskContext; decl: number }[];
}

/**
 * Writes files.jsonl and the sketches of `files`' holes into `dir` as pass 1 does, each hole its own
 * declaration index (`middleKey`: 1000 + its index).
 */
export function sketchTasks(dir: string, files: SketchedFile[], contextChars = 96): SketchedTasks {
  const filesPath = join(dir, "files.jsonl");
  const sketchPath = join(dir, "sketches.bin");
  const filesOut = new JsonlWriter(filesPath, { durable: false });
  const sketches = new TaskSketchWriter(sketchPath);
  const heads = new PendingHeads();
  const declNames: string[] = [];
  const tasks: SketchedTasks["tasks"] = [];
  files.forEach(({ file, text, holes }, line) => {
    const json = new JsonText(text);
    const context: TaskContext = {
      file,
      imports: [],
      scope: [],
      codePoints: new CodePointIndex(text, json.pairs),
      contextChars,
    };
    const rows = new FileRows(text, context, json);
    rows.writeFile(filesOut, fileRecord(file, text).sha256);
    for (const hole of holes) {
      const decl = tasks.length;
      rows.sketch(sketches, hole, decl, line);
      heads.push(decl, 1000 + decl, hole.kind);
      declNames.push(rows.declName(hole));
      tasks.push({ hole, context, decl });
    }
  });
  filesOut.close();
  sketches.close();
  return { filesPath, sketchPath, heads, declNames, tasks };
}

/** The contract's record of each task (split `train`). */
export function recordsOf(sketched: SketchedTasks): TaskRecord[] {
  return sketched.tasks.map(({ hole, context, decl }) => taskRecord(hole, "train", decl, context));
}

/**
 * The rows the exporter writes for the tasks of `sketchPath` (all split `train`), parsed: `goalsPath` gives
 * each its goal, as after verification.
 */
export function rowsOf(
  dir: string,
  sketched: Pick<SketchedTasks, "filesPath" | "declNames">,
  sketchPath: string,
  heads: PendingHeads,
  goalsPath?: string,
): TaskRecord[] {
  const path = join(dir, `rows-${Math.random().toString(36).slice(2)}.jsonl`);
  const out = new JsonlWriter(path, { durable: false });
  const field = Buffer.from(',"split":"train","novel":null,"heldOut":null');
  for (const row of sketchedRows(sketched.filesPath, sketchPath, heads, sketched.declNames, goalsPath))
    row.write(out, field);
  out.close();
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as TaskRecord);
}
