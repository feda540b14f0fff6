/**
 * The pass-rate band of `fim-rlvr filter --keep LOW-HIGH`: a task is kept when its pass rate lies inside it,
 * both ends included. Parse errors say what to type.
 */
export interface KeepBand {
  low: number;
  high: number;
}

export type BandResult = { kind: "ok"; band: KeepBand } | { kind: "error"; message: string };

const EXAMPLE = "e.g. --keep 0.1-0.9 keeps tasks the model proves in 10% to 90% of its samples";

function rate(text: string): number | undefined {
  if (!/^(?:\d+(?:\.\d*)?|\.\d+)$/.test(text)) return undefined;
  const value = Number(text);
  return value >= 0 && value <= 1 ? value : undefined;
}

export function parseKeepBand(text: string): BandResult {
  const m = /^\s*([^-\s]+)\s*-\s*([^-\s]+)\s*$/.exec(text);
  if (!m)
    return {
      kind: "error",
      message: `--keep takes LOW-HIGH, two pass rates from 0 to 1 joined by "-", got "${text}" (${EXAMPLE})`,
    };
  const low = rate(m[1]!);
  const high = rate(m[2]!);
  if (low === undefined || high === undefined)
    return {
      kind: "error",
      message: `--keep ${text}: each end must be a pass rate from 0 to 1 (a fraction, not a percentage; ${EXAMPLE})`,
    };
  if (low > high)
    return {
      kind: "error",
      message: `--keep ${text}: LOW is above HIGH; write it as --keep ${m[2]}-${m[1]}`,
    };
  return { kind: "ok", band: { low, high } };
}

export function formatBand(band: KeepBand): string {
  return `${band.low}-${band.high}`;
}
