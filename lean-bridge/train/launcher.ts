/**
 * The trainer's command line after the interpreter: `-m fim_rlvr --stdio` for one process, or the same module
 * under `accelerate launch` (accelerate 1.x's own flags, checked against `accelerate launch --help`).
 *
 * Without a config file, N > 1 processes use accelerate's `--multi_gpu` launcher, which is torchrun: it starts N
 * ranks on this machine whether or not it has GPUs (a rank without CUDA trains on the CPU with gloo; see
 * trainer/fim_rlvr/run/distributed.py). `--cpu` is not used: with it accelerate starts a single process (its
 * multi-CPU mode expects mpirun and a host file). With a config file, the file decides the launcher (DDP,
 * DeepSpeed; FSDP and ZeRO-3 are refused by the trainer) and the rendezvous port; `--num-processes` still
 * overrides its count.
 */
import { createServer } from "node:net";

/** How the trainer is started: one process, or `accelerate launch` (its process count and config file). */
export type TrainerLauncher =
  { kind: "single" } | { kind: "accelerate"; numProcesses?: number; configFile?: string };

const TRAINER_MODULE = ["-m", "fim_rlvr", "--stdio"];

/** A TCP port free on loopback right now (torchrun's rendezvous; two runs on one machine must not share 29500). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The arguments after `<python>`. */
export async function trainerArgs(launcher: TrainerLauncher): Promise<string[]> {
  if (launcher.kind === "single") return TRAINER_MODULE;
  const args = ["-m", "accelerate.commands.launch"];
  if (launcher.configFile !== undefined) {
    args.push("--config_file", launcher.configFile);
    if (launcher.numProcesses !== undefined) args.push("--num_processes", String(launcher.numProcesses));
    return [...args, ...TRAINER_MODULE];
  }
  const processes = launcher.numProcesses ?? 1;
  args.push("--num_processes", String(processes), "--num_machines", "1");
  // The trainer sets its own precision (TrainConfig); accelerate must not add autocast on top.
  args.push("--mixed_precision", "no", "--dynamo_backend", "no");
  if (processes > 1) args.push("--multi_gpu", "--main_process_port", String(await freePort()));
  return [...args, ...TRAINER_MODULE];
}
