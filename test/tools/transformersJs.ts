/**
 * transformers.js for the tests, from the test-tools folder (test/tools/setup-transformers-js.sh installs it
 * there; it is not a dependency of the project). Only the parts the tests use are typed here.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";

export const TEST_TOOLS = process.env.FIM_TEST_TOOLS ?? join(homedir(), ".cache", "fim-rlvr-test-tools");

export interface Tensor {
  dims: number[];
  data: ArrayLike<number | bigint>;
}

export interface TransformersJs {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
  AutoTokenizer: {
    from_pretrained(
      dir: string,
      options: { local_files_only: boolean },
    ): Promise<(text: string) => { input_ids: Tensor; attention_mask: Tensor }>;
  };
  AutoModelForCausalLM: {
    from_pretrained(
      dir: string,
      options: { local_files_only: boolean },
    ): Promise<{
      (inputs: { input_ids: Tensor; attention_mask: Tensor }): Promise<{ logits: Tensor }>;
      generate(options: Record<string, unknown>): Promise<Tensor>;
      dispose(): Promise<unknown>;
    }>;
  };
}

/** The module, or why it cannot be loaded. */
export function loadTransformersJs():
  { kind: "ok"; module: TransformersJs } | { kind: "missing"; why: string } {
  const manifest = join(TEST_TOOLS, "node_modules", "@huggingface", "transformers", "package.json");
  if (!existsSync(manifest))
    return {
      kind: "missing",
      why: `transformers.js is not in ${TEST_TOOLS} (npm run test:setup installs it, or bash test/tools/setup-transformers-js.sh)`,
    };
  try {
    const require = createRequire(join(TEST_TOOLS, "package.json"));
    return { kind: "ok", module: require("@huggingface/transformers") as TransformersJs };
  } catch (error) {
    return { kind: "missing", why: `transformers.js in ${TEST_TOOLS} failed to load: ${String(error)}` };
  }
}
