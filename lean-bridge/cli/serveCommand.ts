/** `fim-rlvr serve`: the verifier pool as a TCP service that trainers on this or other machines call. */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { DEFAULT_HOST, tokenPolicy } from "../serve/auth";
import { formatAddress } from "../serve/connection";
import { DEFAULT_QUEUE_LIMIT, VerifierService } from "../serve/service";
import { loadServedDataset, mineServedTasks } from "../serve/tasks";
import { type CliCommand, stringOption } from "./command";
import { stopOnInterrupt } from "./interrupt";
import { SERVER_OPTIONS, WORKERS_OPTION, openPool, requireProject } from "./pool";
import { UsageError, parseCount } from "./usage";
import { rewardMode } from "./verdictOutput";

export const DEFAULT_SERVICE_PORT = 8470;

export const serveCommand: CliCommand = {
  name: "serve",
  summary: "Serve the verifier over TCP (JSON-RPC) to trainers such as TRL and verl",
  synopsis:
    '--project DIR [--port P] [--host H] [--token T] [--workers K] [--simulator|--server "CMD"] [--dataset DIR]',
  description: [
    "Runs the verifier pool behind a TCP port: JSON-RPC 2.0 with LSP framing, method verify/batch (items",
    '{"taskId","candidate"} for tasks of the served dataset, or {"file","hole","candidate"}; the same verdicts',
    "as the trainer protocol) and stats (checks/s, cache hits, queue, restarts, refused). It binds 127.0.0.1",
    "unless --host says otherwise; any other address requires a token, generated and printed when --token is",
    "not given. Every connection opens with the auth request (params.token: the token; none on an open service).",
    "A full queue answers with a busy error.",
    "Prints the address (and token) on stdout, then serves until Ctrl-C. See docs/SERVICE.md.",
  ].join("\n"),
  options: {
    project: {
      type: "string",
      value: "DIR",
      help: "Root of the Lean project the service checks candidates in.",
    },
    port: {
      type: "string",
      value: "P",
      help: "TCP port (0 picks a free one).",
      default: String(DEFAULT_SERVICE_PORT),
    },
    host: {
      type: "string",
      value: "H",
      help: "Address to bind; anything but loopback requires a token.",
      default: DEFAULT_HOST,
    },
    token: {
      type: "string",
      value: "T",
      help: "The token every request must carry (generated off loopback).",
    },
    workers: WORKERS_OPTION,
    dataset: {
      type: "string",
      value: "DIR",
      help: "The dataset whose task ids items may name.",
      default: "the --project mined on start",
    },
    "max-queue": {
      type: "string",
      value: "N",
      help: "Items accepted and not yet answered; beyond it batches get the busy error.",
      default: String(DEFAULT_QUEUE_LIMIT),
      advanced: true,
    },
    ...SERVER_OPTIONS,
  },
  examples: [
    "fim-rlvr serve --project lean-env --simulator",
    "fim-rlvr serve --project lean-env --dataset out/dataset --host 0.0.0.0 --port 8470 --workers 8",
  ],
  async run({ values }) {
    const projectRoot = requireProject(stringOption(values, "project"));
    const host = stringOption(values, "host") ?? DEFAULT_HOST;
    const port = parseCount("--port", stringOption(values, "port"), DEFAULT_SERVICE_PORT);
    if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
    const token = stringOption(values, "token");
    if (token !== undefined && token.length < 8)
      throw new UsageError("--token must be at least 8 characters (omit it to have one generated)");
    const workers = parseCount("--workers", stringOption(values, "workers"), 4, 1);
    const queueLimit = parseCount("--max-queue", stringOption(values, "max-queue"), DEFAULT_QUEUE_LIMIT, 1);
    const mode = rewardMode(stringOption(values, "reward"));
    const datasetDir = stringOption(values, "dataset");
    if (datasetDir !== undefined && !existsSync(join(datasetDir, "tasks.jsonl")))
      throw new UsageError(
        `--dataset ${datasetDir}: not a dataset written by \`fim-rlvr export\` (no tasks.jsonl in it)`,
      );
    process.stderr.write(
      datasetDir
        ? `serve: reading the dataset ${datasetDir}\n`
        : `serve: mining ${projectRoot} for task ids\n`,
    );
    const loaded = datasetDir
      ? await loadServedDataset(resolve(datasetDir))
      : await mineServedTasks(projectRoot);
    if (loaded.kind === "error") throw new UsageError(loaded.message);
    const pool = await openPool(projectRoot, values, workers);
    const policy = tokenPolicy(host, token);
    const started = await VerifierService.start(pool, {
      host,
      port,
      policy,
      queueLimit,
      reward: mode,
      tasks: loaded.tasks,
    });
    if (started.kind === "error") {
      await pool.stop();
      throw new UsageError(started.message);
    }
    const service = started.service;
    let resolveDone: () => void = () => {};
    const done = new Promise<void>((r) => (resolveDone = r));
    stopOnInterrupt("serve", pool, () => {
      void service.stop().finally(resolveDone);
    });
    const where = formatAddress(service.address);
    process.stdout.write(
      `fim-rlvr serve: listening on ${where} (verifier: ${pool.identity.label}, ${pool.slotCount} slot(s), ${loaded.tasks.size} task ids)\n`,
    );
    // A generated token is printed (the user needs it); a given one is not echoed into logs.
    if (policy.kind === "token")
      process.stdout.write(
        policy.generated
          ? `fim-rlvr serve: token ${policy.token} (generated): every connection must send it in its auth request\n`
          : "fim-rlvr serve: every connection must send the --token value in its auth request\n",
      );
    process.stdout.write(`fim-rlvr serve: Ctrl-C to stop\n`);
    await done;
    return 130;
  },
};
