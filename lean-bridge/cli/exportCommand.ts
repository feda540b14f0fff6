/** `fim-rlvr export`: placeholder until the dataset exporter lands (issue: mine FIM holes). */
import { UsageError } from "./usage";

export async function exportCommand(_argv: string[]): Promise<number> {
  throw new UsageError("export is not available in this build yet");
}
