/**
 * Generated from lean-bridge/protocol/trainer.schema.json by json-schema-to-typescript (scripts/generate-protocol.mjs):
 * do not edit; change the schema and run `npm run protocol:generate`. The hand-written rest of the protocol (method
 * names, error codes, message lists, isMaskedVerdict) is lean-bridge/protocol/trainer.ts.
 */
/**
 * A position in a document: 0-based line, character in UTF-16 code units (LSP).
 */
export interface Position {
  /**
   * 0-based line.
   */
  line: number;
  /**
   * 0-based column in UTF-16 code units.
   */
  character: number;
}

/**
 * A half-open LSP range [start, end).
 */
export interface Range {
  /**
   * First position inside the range.
   */
  start: Position;
  /**
   * First position after the range.
   */
  end: Position;
}

/**
 * Which verifier produced a verdict, so a simulator reward can never pass for a Lean reward.
 */
export interface VerifierIdentity {
  /**
   * Real Lean, the protocol simulator (a test double), or a Kimina Lean Server (Lean through its REPL, over HTTP).
   */
  kind: "lean" | "simulator" | "kimina";
  /**
   * The Lean toolchain (e.g. leanprover/lean4:v4.24.0) or the simulator's version.
   */
  version: string;
  /**
   * What users see, e.g. "Lean (leanprover/lean4:v4.24.0)" or "simulator 0.1.0 (not Lean)".
   */
  label: string;
}

/**
 * The verdict's kind. environment is never the model's fault, and timeout and crashed are not when their cause is the infrastructure: the trainer masks those samples out.
 */
export type VerdictKind =
  "proved" | "failed" | "incomplete" | "rejected" | "timeout" | "crashed" | "environment";

/**
 * Who a timeout or a crash is charged to. candidate: the check ran past its own limit, or the worker crashed again on a fresh start (a failure: reward 0, trained on); infrastructure: the verifier, its server or the connection failed (masked). Absent means candidate, so a reader that does not know fails closed.
 */
export type VerdictCause = "candidate" | "infrastructure";

/**
 * What confirmed a proof. server: the check's own Lean server (its elaboration and `#print axioms` of the check document); kernel-replay: also the kernel gate, which compiled the check document in a fresh Lean process and replayed the checked declaration and every declaration of the document it depends on through the kernel, with the axioms it rests on checked against the allow-list (lean-bridge/verify/kernelGate.ts).
 */
export type ConfirmedBy = "server" | "kernel-replay";

/**
 * Granularity of a hole: one tactic, a block, 2-4 consecutive steps, or the whole proof.
 */
export type HoleKind = "tactic" | "block" | "steps" | "proof";

/**
 * A GRPO-family objective under its published name (dgpo is this project's definition).
 */
export type AlgorithmName = "grpo" | "drgrpo" | "dapo" | "gspo" | "dgpo";

/**
 * A report_to target: where the trainer's metrics lines also go.
 */
export type ReportTarget = "none" | "tensorboard" | "wandb" | "trackio";

/**
 * One message the verifier reported about a candidate.
 */
export interface CandidateDiagnostic {
  /**
   * LSP severity: 1 error, 2 warning, 3 information, 4 hint.
   */
  severity: number;
  /**
   * The verifier's message text.
   */
  message: string;
  /**
   * The range relative to the candidate text (line 0 = its first line), or null when the message lies outside it.
   */
  candidateRange: Range | null;
}

/**
 * The trainer's TrainConfig (trainer/fim_rlvr/core/config.py), snake_case as a user writes it in --config FILE. Every key is optional on the wire: the trainer fills its defaults and answers an unknown key with an error listing the valid ones.
 */
export interface TrainConfig {
  /**
   * Objective to optimise (default grpo).
   */
  algorithm?: AlgorithmName;
  /**
   * AlgorithmConfig overrides, TRL option names (epsilon, epsilon_high, beta, max_completion_length, num_generations, dpo_beta, dpo_coef, overlong_cache_len ...).
   */
  algo_config?: {
    [k: string]: unknown;
  };
  /**
   * A Hugging Face causal LM directory, or null for the embedded tiny model built locally.
   */
  model?: string | null;
  /**
   * RL optimiser steps.
   */
  steps?: number;
  /**
   * Completions sampled per prompt (a GRPO group).
   */
  group_size?: number;
  /**
   * Groups per optimiser step.
   */
  batch_size?: number;
  /**
   * Seed for data order, sampling and initialisation.
   */
  seed?: number;
  /**
   * Hole kinds to train on.
   */
  kinds?: HoleKind[];
  /**
   * Longest completion generated. Default: by what is trained (the embedded model, full fine-tuning or LoRA of a model path: trainer/README.md, TrainConfig).
   */
  max_new_tokens?: number;
  /**
   * Optimiser learning rate. Default: by what is trained (the embedded model, full fine-tuning or LoRA of a model path: trainer/README.md, TrainConfig).
   */
  learning_rate?: number;
  /**
   * Supervised warm-start steps on the train split's middles (null: the trainer's default, on for the embedded model).
   */
  sft_steps?: number | null;
  /**
   * Order hole kinds tactic -> block -> steps -> proof by measured pass rate.
   */
  curriculum?: boolean;
  /**
   * What the SFT warm start imitates: the reference proofs, or those and the fixed portfolio's verified proofs of the training open goals.
   */
  warm_start_data?: "reference" | "portfolio";
  /**
   * How a training task is drawn within its kind: shuffled epochs (kind), or in proportion to p(1 - p) of its Lean file's measured pass rate (learnability).
   */
  task_sampling?: "kind" | "learnability";
  /**
   * Hidden size of the embedded model, a multiple of 32 (128: about 1M parameters); heads are width / 32.
   */
  embedded_width?: number;
  /**
   * Transformer layers of the embedded model.
   */
  embedded_layers?: number;
  /**
   * Write a checkpoint every N steps.
   */
  checkpoint_every?: number;
  /**
   * Held-out tasks evaluated per pass@1 measurement (null: all).
   */
  eval_limit?: number | null;
  /**
   * auto, cpu, cuda, cuda:N.
   */
  device?: string;
  /**
   * Put the goal state at the hole in the prompt (null: when the tasks carry a goal).
   */
  goal_in_prompt?: boolean | null;
  /**
   * Sampling temperature for rollouts. Default: by what is trained (the embedded model, full fine-tuning or LoRA of a model path: trainer/README.md, TrainConfig).
   */
  temperature?: number;
  /**
   * Nucleus sampling threshold for rollouts.
   */
  top_p?: number;
  /**
   * AdamW learning rate of the SFT warm start. Default: by what is trained (the embedded model, full fine-tuning or LoRA of a model path: trainer/README.md, TrainConfig).
   */
  sft_learning_rate?: number;
  /**
   * Examples per SFT step.
   */
  sft_batch_size?: number;
  /**
   * Slack on the wait for a batch, seconds: it counts as unanswered once the verifier made no progress on it for this long plus the longest one check can take (VerifierBudget); it is then sent again once, and a second silence counts its items as the candidates' timeouts (never masked). Also how long a lost service connection is retried.
   */
  verify_timeout_s?: number;
  /**
   * Prompt budget: the prefix is cut from the left and the suffix from the right to fit. Default: by what is trained (the embedded model, full fine-tuning or LoRA of a model path: trainer/README.md, TrainConfig).
   */
  max_prompt_tokens?: number;
  /**
   * LoRA rank (peft); null: full fine-tuning.
   */
  lora_r?: number | null;
  /**
   * LoRA alpha (null: twice lora_r).
   */
  lora_alpha?: number | null;
  /**
   * Module names LoRA adapts (null: every linear layer but the output head, peft's "all-linear").
   */
  lora_targets?: string[] | null;
  /**
   * Dropout on the LoRA branch.
   */
  lora_dropout?: number;
  /**
   * QLoRA: load the base model in 4-bit NF4 through bitsandbytes (CUDA only; needs lora_r).
   */
  load_in_4bit?: boolean;
  /**
   * Recompute activations in the backward pass (less memory, about a third more compute).
   */
  gradient_checkpointing?: boolean;
  /**
   * Train in bfloat16 (null: on CUDA GPUs that support it).
   */
  bf16?: boolean | null;
  /**
   * Load the model through Unsloth (null: when Unsloth is importable, on CUDA, with LoRA).
   */
  unsloth?: boolean | null;
  /**
   * What generates rollouts: vllm, transformers, or auto (vLLM when importable, on CUDA, with a model path).
   */
  rollout_backend?: "auto" | "transformers" | "vllm";
  /**
   * colocate: a vLLM engine in the trainer process, asleep while the trainer optimises; server: a `trl vllm-serve` at vllm_server_url.
   */
  vllm_mode?: "colocate" | "server";
  /**
   * The vLLM server's base URL (vllm_mode server), e.g. http://localhost:8000.
   */
  vllm_server_url?: string | null;
  /**
   * Share of GPU memory the colocated vLLM engine may take.
   */
  vllm_gpu_memory_utilization?: number;
  /**
   * How a timeout the candidate caused is scored: failure (reward 0, kept in the group statistics; default) or mask (left out of training, which lets the policy drift toward hanging).
   */
  timeout_reward?: "failure" | "mask";
  /**
   * Evaluate the validation split every N RL steps (greedy pass@1, sampled pass@k); 0: never.
   */
  validation_every?: number;
  /**
   * Completions sampled per validation task at the training temperature for the unbiased pass@k.
   */
  validation_samples?: number;
  /**
   * Repair turns in RL rollouts: a sample whose check failed gets up to this many more turns, prompted with its last attempt and the verifier's diagnostics (the prompt of `fim-rlvr eval --repair`); each turn is a sample of its own in its task's group. 0 (default): none.
   */
  repair_turns?: number;
  /**
   * A repair turn's reward is the verifier's reward times repair_discount ** turn (turn 1 is the first repair; default 0.5).
   */
  repair_discount?: number;
  /**
   * Instead of RL, one compute-matched baseline arm from the same warm start: sft continues SFT for as many sequences through forward and backward passes as the RL steps would train on; sft_data does the same on the reference proofs plus the fixed portfolio's verified proofs of the training open goals; rft is expert iteration (RL's draws, samples and checks, trained on the run's own verified proofs); null: the RL run.
   */
  baseline?: BaselineArm | null;
  /**
   * Compute-matched baseline arms run after RL, each from the SFT warm start's weights, evaluated like RL (default [sft] for the embedded model, [] for a model path; ignored with baseline).
   */
  compare?: BaselineArm[];
  /**
   * Held-out pass@k besides greedy pass@1: completions sampled per test task at the training temperature (0: greedy only).
   */
  eval_samples?: number;
  /**
   * The held-out split the run's evaluations measure (validation: to choose settings without looking at the test split).
   */
  eval_split?: "test" | "validation";
  /**
   * The fixed portfolio of tactics, in order (bench/portfolio.ts tries `first | ...` of them): the data-matched SFT arm (sft_data) checks them one by one on the training split's open goals with the run's verifier, and the first that proves a goal by itself is that goal's proof to imitate. The default is the source of bench/portfolio.ts' PORTFOLIO.
   */
  portfolio?: string[];
  /**
   * auto (FIM for a base model with FIM tokens, chat when the tokenizer has a chat template, else instruction), fim, chat or instruction.
   */
  prompt_style?: "auto" | "fim" | "chat" | "instruction";
  /**
   * The prompt's text with {prefix} {suffix} {goal} {hole} {kind}: the whole prompt for fim and instruction, the user's message for chat (null: the style's own).
   */
  prompt_template?: string | null;
  /**
   * The model reasons before answering: nothing pre-filled, the candidate is the answer's last ```lean block.
   */
  prompt_thinking?: boolean;
  /**
   * Completions per forward/backward pass; gradients accumulate with batch-wide normalisers (null: one pass). Default: by what is trained (the embedded model, full fine-tuning or LoRA of a model path: trainer/README.md, TrainConfig).
   */
  micro_batch_size?: number | null;
  /**
   * Optimiser passes over each generated batch (TRL's num_iterations).
   */
  num_iterations?: number;
  /**
   * Optimiser steps each generated batch is split into, by groups (TRL's name).
   */
  steps_per_generation?: number;
  /**
   * Learning-rate schedule over the optimiser steps, after the warm-up.
   */
  lr_scheduler?: "constant" | "linear" | "cosine";
  /**
   * Share of the optimiser steps over which the learning rate rises linearly from 0.
   */
  warmup_ratio?: number;
  /**
   * AdamW weight decay for RL (default 0.01).
   */
  weight_decay?: number;
  /**
   * The gradient is clipped to this global norm before every optimiser step, of RL and of the SFT warm start (default 1.0, TRL's); 0 or less: no clipping.
   */
  max_grad_norm?: number;
  /**
   * The memory bound, in MiB, of one pass that recomputes old log-probs after sampling: each pass takes as many completions as keep their logits ((longest + 1) positions x vocabulary x 16 bytes each) within it, one at least (default 4096).
   */
  logprob_memory_mb?: number;
  /**
   * Where each metrics line also goes: none, tensorboard (RUN/runs), wandb, trackio, or a list of them.
   */
  report_to?: ReportTarget | ReportTarget[];
}

/**
 * Host -> trainer, request `initialize`: the run to do. The trainer starts it right after answering.
 */
export interface InitializeParams {
  /**
   * This protocol's version; a trainer that speaks another answers with an error.
   */
  protocolVersion: 2;
  /**
   * The run's TrainConfig (snake_case keys).
   */
  config: TrainConfig;
  /**
   * Absolute path of the dataset folder (holds tasks.jsonl and files.jsonl).
   */
  datasetDir: string;
  /**
   * Absolute path of the run folder (metrics.jsonl, samples.jsonl, checkpoints/, eval.json, config.json).
   */
  runDir: string;
  /**
   * Continue from runDir/checkpoints/latest instead of starting afresh.
   */
  resume: boolean;
  /**
   * The verifier behind the run's verifier service.
   */
  verifier: VerifierIdentity;
  /**
   * The run's verifier service (the `fim-rlvr serve` protocol, serving the run's dataset by task id): every trainer process checks its candidates there, and only there.
   */
  verifierService: VerifierServiceAddress;
  /**
   * The limits of the verifier behind that service, from which the trainer derives how long a batch may wait without progress.
   */
  verifierBudget: VerifierBudget;
}

/**
 * Where the run's verifier service listens, and the token every request to it must carry.
 */
export interface VerifierServiceAddress {
  /**
   * The address to connect to (the host binds 127.0.0.1).
   */
  host: string;
  /**
   * The TCP port.
   */
  port: number;
  /**
   * The service's token, sent in the `auth` request that opens each connection.
   */
  token: string;
}

/**
 * What the trainer needs of the verifier's limits to tell a slow verifier from one that stopped answering: a batch counts as unanswered once the verifier made no progress on it (`verify/progress`) for the longest one check can take plus the run's `verify_timeout_s`.
 */
export interface VerifierBudget {
  /**
   * Checks the verifier runs at once (its slots).
   */
  slots: number;
  /**
   * The verifier's time limit of one check, ms (`--timeout-ms`).
   */
  checkTimeoutMs: number;
  /**
   * The longest one verification can take on a verifier that works, ms: its time limit on every attempt (a crash is retried once on a fresh worker) and a server restart before each, twice for a proved candidate (the hole is checked once more with `skip` in it).
   */
  checkBoundMs: number;
}

/**
 * Trainer -> host, answer to `initialize`.
 */
export interface InitializeResult {
  /**
   * Name and version, e.g. "fim_rlvr 0.1.0".
   */
  trainer: string;
  /**
   * Where the model runs, e.g. "cpu" or "cuda:0 (NVIDIA H100)".
   */
  device: string;
  /**
   * The checkpoint step the run continues from, or null for a fresh run.
   */
  resumedFromStep: number | null;
  /**
   * RL steps the run will reach.
   */
  totalSteps: number;
}

/**
 * Host -> trainer, request `train/stop`: finish or abandon the current step, checkpoint, answer, then send train/done {status: stopped}.
 */
export interface StopParams {}

/**
 * Trainer -> host, answer to `train/stop`.
 */
export interface StopResult {
  /**
   * Path of the checkpoint written, or null when there was nothing to save.
   */
  checkpoint: string | null;
  /**
   * The last completed step.
   */
  step: number;
}

/**
 * Trainer -> host, answer to `shutdown` (no params): null; the trainer then exits with code 0.
 */
export type ShutdownResult = null;

/**
 * A candidate for a task of the served dataset, by id (what the trainer sends).
 */
export interface VerifyItem {
  /**
   * The task's `id` in the dataset's tasks.jsonl.
   */
  taskId: string;
  /**
   * The cleaned completion (fences, stop tokens removed; re-indented).
   */
  candidate: string;
}

/**
 * A candidate for any hole of the served project, as a verify-batch line gives it.
 */
export interface HoleItem {
  /**
   * Path of the Lean file, relative to the served project's root.
   */
  file: string;
  /**
   * LSP range of the hole (0-based lines, UTF-16 characters).
   */
  hole: Range;
  /**
   * The completion to put in the hole.
   */
  candidate: string;
  /**
   * Echoed in the verdict's taskId (default: `file@L:C-L:C`).
   */
  taskId?: string;
}

/**
 * One item of a service's `verify/batch`: a task by id, or a hole given in full.
 */
export type ServiceItem = VerifyItem | HoleItem;

/**
 * Client -> service, request `verify/batch`.
 */
export interface VerifyBatchParams {
  /**
   * The service's token. The connection's `auth` carries it, so it may be left out; when given it must be the right one.
   */
  token?: string;
  /**
   * Candidates to check; verdicts come back in the same order. A malformed item gets its own `rejected` verdict.
   */
  items: ServiceItem[];
  /**
   * Chosen by the client, unique among its batches in flight: when given, the service sends `verify/progress` naming it while the batch is checked.
   */
  batchId?: string;
}

/**
 * The verdict and reward for one verify/batch item.
 */
export interface BatchVerdict {
  /**
   * The item's taskId.
   */
  taskId: string;
  /**
   * The verdict's kind.
   */
  kind: VerdictKind;
  /**
   * The reward under the service's reward mode (binary or partial): lean-bridge/verify/rewards.ts, the only place rewards are computed.
   */
  reward: number;
  /**
   * The reward's components, for logging.
   */
  rewardMetrics: {
    [k: string]: number;
  };
  /**
   * What the verifier reported about the candidate.
   */
  diagnostics: CandidateDiagnostic[];
  /**
   * Wall time of the check (near 0 when cached).
   */
  elapsedMs: number;
  /**
   * True when answered from the verifier's cache.
   */
  cached: boolean;
  /**
   * The verifier that produced the verdict.
   */
  verifier: VerifierIdentity;
  /**
   * For timeout and crashed only: who caused it (absent means candidate: fail closed).
   */
  cause?: VerdictCause;
  /**
   * For proved only: what confirmed the proof (absent in verdicts of verifiers older than the kernel gate: read as server).
   */
  confirmedBy?: ConfirmedBy;
  /**
   * For rejected only: the rule that refused the candidate (docs/POLICY.md), e.g. kernel-replay-failed.
   */
  rule?: string;
  /**
   * True only when the kernel gate caught a candidate that Lean's server had proved (rule kernel-replay-failed): reward 0, never masked; the host and the trainer count and log it as a hack.
   */
  hack?: boolean;
}

/**
 * Service -> client, answer to `verify/batch`.
 */
export interface VerifyBatchResult {
  /**
   * One verdict per item, in the items' order.
   */
  verdicts: BatchVerdict[];
}

/**
 * Service -> client, notification `verify/progress`, for a batch sent with a `batchId`, while it is checked: sent when any check of the service finished (at once after a quiet second, else at most once a second), so a client can tell a verifier that works, on this batch or on the ones queued before it, from one that stopped.
 */
export interface VerifyProgressParams {
  /**
   * The batch's `batchId`.
   */
  batchId: string;
  /**
   * The batch's items answered so far.
   */
  done: number;
  /**
   * The batch's items.
   */
  total: number;
  /**
   * Checks the service finished since it started, for every client: a queued batch's progress is theirs.
   */
  serviceDone: number;
}

/**
 * Client -> service, request `auth`: the first message of every connection, in a frame of at most 4 KiB; the service reads nothing else of a connection before it, and closes one whose first message is not an accepted `auth`.
 */
export interface AuthParams {
  /**
   * The service's token, when it has one (an open service accepts `auth` without it).
   */
  token?: string;
}

/**
 * Service -> client, answer to `auth`: the connection may send requests, within these bounds.
 */
export interface AuthResult {
  /**
   * The largest frame body the service reads on this connection.
   */
  maxBodyBytes: number;
  /**
   * The service closes the connection after this long with no request in flight and no byte from the client; the client connects again.
   */
  idleTimeoutMs: number;
}

/**
 * Client -> service, request `stats`.
 */
export interface StatsParams {
  /**
   * The service's token. The connection's `auth` carries it, so it may be left out; when given it must be the right one.
   */
  token?: string;
}

/**
 * Service -> client, answer to `stats`: the service's counters since it started.
 */
export interface ServiceStats {
  /**
   * Seconds since the service started.
   */
  uptimeSeconds: number;
  /**
   * Items answered (cache hits and rejections included).
   */
  checks: number;
  /**
   * Items answered per second over the last 10 seconds.
   */
  checksPerSecond: number;
  /**
   * Items answered from the verifier's cache.
   */
  cacheHits: number;
  /**
   * Items accepted and not yet answered.
   */
  queue: number;
  /**
   * The most items the service holds at once; a batch beyond it gets the busy error.
   */
  queueLimit: number;
  /**
   * Times the verifier (Lean server) was restarted.
   */
  restarts: number;
  /**
   * Requests refused for a missing or wrong token.
   */
  refused: number;
  /**
   * Batches refused because the queue was full.
   */
  busy: number;
  /**
   * Clients connected now.
   */
  connections: number;
  /**
   * Tasks the service knows by id.
   */
  tasks: number;
  /**
   * Slots (documents checked in parallel).
   */
  slots: number;
  /**
   * The verifier behind the service.
   */
  verifier: VerifierIdentity;
}

/**
 * Trainer -> host, notification `train/progress`, once per optimiser step.
 */
export interface TrainProgressParams {
  /**
   * The step just completed (1-based).
   */
  step: number;
  /**
   * Steps the run will reach.
   */
  totalSteps: number;
  /**
   * The numeric fields of this step's metrics.jsonl line, snake_case (reward_mean, pass_rate, loss, kl, clip_fraction, tokens_per_second, checks_per_second ...).
   */
  metrics: {
    [k: string]: number;
  };
}

/**
 * Trainer -> host, notification `train/sample`: one verified sample.
 */
export interface TrainSampleParams {
  /**
   * The task's id.
   */
  taskId: string;
  /**
   * The task's Lean file, relative to the workspace root.
   */
  file: string;
  /**
   * LSP range of the hole in that file.
   */
  hole: Range;
  /**
   * The hole's kind.
   */
  kind: HoleKind;
  /**
   * The cleaned candidate that was checked.
   */
  candidate: string;
  /**
   * The verdict's kind.
   */
  verdict: VerdictKind;
  /**
   * The reward it earned.
   */
  reward: number;
  /**
   * The step whose rollouts produced it.
   */
  step: number;
  /**
   * The run's algorithm.
   */
  algorithm: AlgorithmName;
  /**
   * The verifier's messages, when any.
   */
  diagnostics?: CandidateDiagnostic[];
  /**
   * For timeout and crashed only: who caused it (isMaskedVerdict reads it; absent means candidate).
   */
  cause?: VerdictCause;
  /**
   * For a repair turn only (TrainConfig repair_turns): which one, 1 for the first repair; absent for a first attempt.
   */
  turn?: number;
}

/**
 * Trainer -> host, notification `train/checkpoint`: a complete checkpoint was written.
 */
export interface TrainCheckpointParams {
  /**
   * The checkpoint's folder (runDir/checkpoints/step-N).
   */
  path: string;
  /**
   * The step it holds.
   */
  step: number;
}

/**
 * Trainer -> host, notification `train/log`: a message for the user.
 */
export interface TrainLogParams {
  /**
   * Severity.
   */
  level: "debug" | "info" | "warning" | "error";
  /**
   * The text, one line or a few.
   */
  message: string;
}

/**
 * Trainer -> host, notification `train/eval`: held-out pass@1 (greedy) at one stage of the run.
 */
export interface TrainEvalParams {
  /**
   * Before training, after the SFT warm start, after RL (or after the baseline a baseline run trains instead), or after a compute-matched baseline arm run after RL (named by arm).
   */
  stage: "before" | "sft" | "after" | "baseline";
  /**
   * The baseline arm a baseline stage measures.
   */
  arm?: BaselineArm;
  /**
   * The split evaluated ("test", or "validation" when the run measures that).
   */
  split: string;
  /**
   * Share of evaluated tasks proved.
   */
  passAt1: number;
  /**
   * pass@1 per hole kind.
   */
  byKind: {
    [k: string]: number;
  };
  /**
   * Number of tasks evaluated.
   */
  tasks: number;
  /**
   * pass@1 on novel and on memorised test tasks, when the dataset marks its test tasks `novel`.
   */
  byNovelty?: NoveltyScores;
  /**
   * pass@1 on held-out instances and on held-out families, when the dataset says which task is which (`heldOut`).
   */
  byHeldOut?: HeldOutScores;
}

/**
 * Held-out pass@1 split by whether each test task's middle occurs in the training split: only the novel tasks measure learning. Groups without tasks are absent; unknown holds the tasks the dataset does not mark.
 */
export interface NoveltyScores {
  /**
   * Test tasks whose middle occurs nowhere in the training split.
   */
  novel?: GroupScore;
  /**
   * Test tasks whose middle occurs in the training split.
   */
  memorised?: GroupScore;
  /**
   * Test tasks the dataset does not mark (beside marked ones).
   */
  unknown?: GroupScore;
}

/**
 * Held-out pass@1 per held-out set: statements of families training has (instance) and families training never saw (family). Groups without tasks are absent; unknown holds the tasks the dataset does not mark.
 */
export interface HeldOutScores {
  /**
   * Held-out instances: declarations never trained on, of families training has.
   */
  instance?: GroupScore;
  /**
   * Held-out families: declarations of families training never saw.
   */
  family?: GroupScore;
  /**
   * Held-out tasks the dataset does not mark (beside marked ones).
   */
  unknown?: GroupScore;
}

/**
 * A compute-matched baseline arm: sft (SFT on the reference proofs), sft_data (data-matched SFT: the reference proofs plus the fixed portfolio's verified proofs of the training split's open goals) or rft (expert iteration on the run's own verified proofs).
 */
export type BaselineArm = "sft" | "rft" | "sft_data";

/**
 * pass@1 on one group of held-out tasks.
 */
export interface GroupScore {
  /**
   * Share of the group's tasks proved by the greedy completion.
   */
  passAt1: number;
  /**
   * Tasks in the group.
   */
  tasks: number;
}

/**
 * Trainer -> host, notification `train/done`: the run ended (the trainer then waits for shutdown).
 */
export interface TrainDoneParams {
  /**
   * How the run ended.
   */
  status: "completed" | "stopped" | "failed";
  /**
   * The last completed step.
   */
  step: number;
  /**
   * A summary, or for failed runs what happened and what to do.
   */
  message: string;
}

/**
 * Every JSON line the model process writes (one of its answers).
 */
export type ModelAnswer = ModelLoaded | ModelLoadFailed | ModelGenerateResult | ModelGenerateFailed;

/**
 * Host -> model process, JSON line `load` (the first request): load a model and answer ModelLoaded or ModelLoadFailed.
 */
export interface ModelLoadRequest {
  /**
   * The request's kind.
   */
  type: "load";
  /**
   * A run folder (its latest checkpoint), a checkpoint folder (RUN_DIR/checkpoints/step-N: full or LoRA) or a transformers model folder.
   */
  path: string;
  /**
   * CPU threads the model may use (torch.set_num_threads), so Lean keeps its cores.
   */
  threads: number;
}

/**
 * Model process -> host, JSON line `loaded`: the model is ready for generate requests.
 */
export interface ModelLoaded {
  /**
   * The answer's kind.
   */
  type: "loaded";
  /**
   * What samples: vLLM (installed, beside a CUDA GPU, a whole model) or transformers `generate`.
   */
  engine: "vllm" | "transformers";
  /**
   * Where the model runs, e.g. cpu or cuda.
   */
  device: string;
  /**
   * The folder of the model's tokenizer, from which the host builds the prompts (as the trainer does).
   */
  tokenizerDir: string;
}

/**
 * Model process -> host, JSON line `load-failed`: the folder holds no model the trainer can load.
 */
export interface ModelLoadFailed {
  /**
   * The answer's kind.
   */
  type: "load-failed";
  /**
   * What went wrong, naming the folder.
   */
  message: string;
  /**
   * What to do about it.
   */
  hint: string;
}

/**
 * Host -> model process, JSON line `generate`: sample n completions of a prompt the host built (the trainer's prompt); answered by ModelGenerateResult or ModelGenerateFailed with the same id. Requests are answered one at a time, in order.
 */
export interface ModelGenerateRequest {
  /**
   * The request's kind.
   */
  type: "generate";
  /**
   * Echoed in the answer.
   */
  id: string;
  /**
   * The prompt text, special tokens included as text (tokenized with add_special_tokens=False, as the trainer tokenizes).
   */
  prompt: string;
  /**
   * Completions to sample.
   */
  n: number;
  /**
   * Sampling temperature; 0 is greedy (every sample the same one).
   */
  temperature: number;
  /**
   * Nucleus sampling threshold.
   */
  topP: number;
  /**
   * Longest completion, in tokens.
   */
  maxNewTokens: number;
  /**
   * Sampling seed.
   */
  seed: number;
  /**
   * Text that ends a completion (the prompt style's stops): vLLM stops there; the host's cleaning cuts there whatever the engine did.
   */
  stop: string[];
}

/**
 * One sampled completion, decoded with special tokens kept (the host cleans it as the trainer does).
 */
export interface ModelSample {
  /**
   * The completion's text.
   */
  text: string;
  /**
   * Its length in tokens.
   */
  completionTokens: number;
  /**
   * stop: the model ended it (end of sequence or a stop); length: maxNewTokens did.
   */
  finish: "stop" | "length";
}

/**
 * Model process -> host, JSON line `result`: the samples of one generate request.
 */
export interface ModelGenerateResult {
  /**
   * The answer's kind.
   */
  type: "result";
  /**
   * The request's id.
   */
  id: string;
  /**
   * The prompt's length in tokens.
   */
  promptTokens: number;
  /**
   * n samples, in order.
   */
  samples: ModelSample[];
}

/**
 * Model process -> host, JSON line `failed`: a request it could not answer (no model loaded, out of memory, a prompt longer than the model takes, a line that is not a request).
 */
export interface ModelGenerateFailed {
  /**
   * The answer's kind.
   */
  type: "failed";
  /**
   * The request's id ("" when the line had none).
   */
  id: string;
  /**
   * What went wrong, one line.
   */
  message: string;
}
