/**
 * Deterministic splits by declaration: a seeded hash of (file, declaration) decides the split, so every
 * hole of one theorem falls in the same split and the same seed always gives the same assignment.
 */
import { createHash } from "node:crypto";

export type Split = "train" | "validation" | "test";

export const SPLIT_FRACTIONS = { train: 0.8, validation: 0.1, test: 0.1 } as const;

export function splitOf(seed: number, file: string, declKey: string): Split {
  const digest = createHash("sha256").update(`${seed}\0${file}\0${declKey}`).digest();
  const u = digest.readUInt32BE(0) / 2 ** 32;
  if (u < SPLIT_FRACTIONS.train) return "train";
  if (u < SPLIT_FRACTIONS.train + SPLIT_FRACTIONS.validation) return "validation";
  return "test";
}

/** A stable id for a hole: the same hole in the same file text always gets the same id. */
export function holeId(
  file: string,
  declKey: string,
  kind: string,
  start: number,
  end: number,
  middle: string,
): string {
  return createHash("sha256")
    .update(`${file}\0${declKey}\0${kind}\0${start}:${end}\0${middle}`)
    .digest("hex")
    .slice(0, 16);
}
