/**
 * Rows of a statement dataset, one at a time: JSONL line by line (jsonl.ts `readLines`, 1 MB chunks), Parquet
 * row group by row group (hyparquet, a pure-JS reader; it reads only the byte ranges of the group asked for).
 * Either way memory holds one chunk or one row group, never the file.
 */
import { extname } from "node:path";
import { readLines } from "../dataset/jsonl";

export type RowFormat = "jsonl" | "parquet";

export type RowRead =
  { kind: "row"; row: number; value: unknown } | { kind: "bad"; row: number; reason: string };

export function rowFormatOf(path: string): RowFormat | undefined {
  const ext = extname(path).toLowerCase();
  if (ext === ".parquet" || ext === ".pq") return "parquet";
  if (ext === ".jsonl" || ext === ".ndjson" || ext === ".json") return "jsonl";
  return undefined;
}

function* jsonlRows(path: string): Generator<RowRead> {
  let row = 0;
  for (const line of readLines(path)) {
    row++;
    try {
      yield { kind: "row", row, value: JSON.parse(line) as unknown };
    } catch (error) {
      yield {
        kind: "bad",
        row,
        reason: `not JSON (${error instanceof Error ? error.message : String(error)})`,
      };
    }
  }
}

/** Parquet integers come back as BigInt; rows are plain JSON values from here on. */
function plain(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === "object" && !(value instanceof Date))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

async function* parquetRows(path: string): AsyncGenerator<RowRead> {
  const { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } = await import("hyparquet");
  const file = await asyncBufferFromFile(path);
  const metadata = await parquetMetadataAsync(file);
  let start = 0;
  let row = 0;
  for (const group of metadata.row_groups) {
    const end = start + Number(group.num_rows);
    const rows = await parquetReadObjects({ file, metadata, rowStart: start, rowEnd: end });
    for (const value of rows) yield { kind: "row", row: ++row, value: plain(value) };
    start = end;
  }
}

/** The rows of a JSONL or Parquet file; a file that cannot be read at all throws with what to do. */
export async function* readRows(path: string, format: RowFormat): AsyncGenerator<RowRead> {
  if (format === "parquet") yield* parquetRows(path);
  else yield* jsonlRows(path);
}
