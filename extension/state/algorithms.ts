/** The algorithms the trainer implements, with the one-line descriptions the Start quick pick shows. */
import type { AlgorithmName } from "../../lean-bridge/protocol/trainer";

/** One entry per algorithm, in ALGORITHM_NAMES's order (test/extension/startFlow.test.ts checks it). */
export const ALGORITHM_CHOICES: readonly { name: AlgorithmName; label: string; description: string }[] = [
  {
    name: "grpo",
    label: "GRPO",
    description: "Group-normalised advantages, clipped ratio, KL to the reference (DeepSeekMath)",
  },
  {
    name: "drgrpo",
    label: "Dr. GRPO",
    description: "GRPO without the length and std normalisation biases, no KL",
  },
  {
    name: "dapo",
    label: "DAPO",
    description: "Clip-higher, dynamic sampling, token-level loss, overlong shaping",
  },
  {
    name: "gspo",
    label: "GSPO",
    description: "Sequence-level importance ratio and clipping (stable for long candidates)",
  },
  {
    name: "dgpo",
    label: "DGPO",
    description: "GRPO plus a DPO pair term between better and worse candidates of a group",
  },
];
