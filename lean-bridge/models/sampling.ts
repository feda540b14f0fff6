/**
 * Next-token choice for local models: greedy at temperature 0 (the trainer's evaluation), else softmax at the
 * temperature restricted to the nucleus of mass `topP`, drawn with a seeded generator so a seed repeats a run.
 * (PyTorch's sampler draws differently: only greedy decoding is comparable token for token.)
 */

/** A seeded uniform generator on [0, 1) (mulberry32: small, fast, good enough for sampling). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The index of the largest value (the first one on ties, as torch.argmax). */
export function argmax(logits: Float32Array, from = 0, length = logits.length - from): number {
  let best = 0;
  let bestValue = -Infinity;
  for (let i = 0; i < length; i++) {
    const value = logits[from + i]!;
    if (value > bestValue) {
      bestValue = value;
      best = i;
    }
  }
  return best;
}

/** The next token from one row of logits. */
export function sampleToken(
  logits: Float32Array,
  from: number,
  vocab: number,
  temperature: number,
  topP: number,
  random: () => number,
): number {
  if (temperature <= 0) return argmax(logits, from, vocab);
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) max = Math.max(max, logits[from + i]!);
  const probabilities = new Float64Array(vocab);
  let total = 0;
  for (let i = 0; i < vocab; i++) {
    const p = Math.exp((logits[from + i]! - max) / temperature);
    probabilities[i] = p;
    total += p;
  }
  const order = Array.from({ length: vocab }, (_, i) => i).sort(
    (a, b) => probabilities[b]! - probabilities[a]!,
  );
  // The smallest set of most likely tokens whose mass reaches topP (at least one).
  let kept = 0;
  let mass = 0;
  while (kept < vocab && (kept === 0 || mass < topP * total)) mass += probabilities[order[kept++]!]!;
  let draw = random() * mass;
  for (let k = 0; k < kept; k++) {
    draw -= probabilities[order[k]!]!;
    if (draw <= 0) return order[k]!;
  }
  return order[kept - 1]!;
}
