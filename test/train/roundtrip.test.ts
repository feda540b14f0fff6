/**
 * TypeScript <-> Python protocol round trip with the real trainer (`python -m fim_rlvr --stdio`, run with
 * trainer/.venv/bin/python): every message in both directions is checked against trainer.schema.json, from
 * initialize through the notifications to shutdown and a clean exit, and so is every request its service client
 * sends to a verifier service (a schema-checking stand-in on loopback TCP, the trainer's only road to a verifier). Skipped, with the
 * reason printed, where that environment is missing (`npm run test:setup` creates it).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { createMessageConnection, SocketMessageReader, SocketMessageWriter } from "vscode-jsonrpc/node";
import { exportDataset } from "../../lean-bridge/dataset/exporter";
import type { TaskRecord } from "../../lean-bridge/dataset/records";
import {
  Initialize,
  Shutdown,
  TRAINER_MESSAGES,
  TRAINER_PROTOCOL_VERSION,
  Auth,
  VerifyBatch,
  type BatchVerdict,
  type InitializeParams,
  type TrainDoneParams,
} from "../../lean-bridge/protocol/trainer";
import { TrainerProcess } from "../../lean-bridge/train/trainerProcess";
import { REPO } from "../helpers";
import { exportOptions } from "../dataset/exampleExport";
import { toolSkip } from "../toolSkip";

const PYTHON = join(REPO, "trainer", ".venv", "bin", "python");
const TRAINER_ROOT = join(REPO, "trainer");
const missing = !existsSync(PYTHON)
  ? `${PYTHON} is missing (npm run test:setup creates it)`
  : !existsSync(join(TRAINER_ROOT, "fim_rlvr", "__main__.py"))
    ? "trainer/fim_rlvr/__main__.py is missing"
    : undefined;
toolSkip("roundtrip", missing);

const schema = JSON.parse(
  readFileSync(join(REPO, "lean-bridge", "protocol", "trainer.schema.json"), "utf8"),
) as object;
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema(schema, "trainer");

test(
  "the real trainer speaks the schema's protocol in both directions",
  { skip: missing ?? false, timeout: 240_000 },
  async () => {
    const violations: string[] = [];
    const valid = (def: string, value: unknown, where: string) => {
      const validate = ajv.getSchema(`trainer#/$defs/${def}`)!;
      if (!validate(value))
        violations.push(
          `${where}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value).slice(0, 300)}`,
        );
    };
    const work = mkdtempSync(join(tmpdir(), "fim-roundtrip-"));
    const datasetDir = join(work, "dataset");
    const exported = await exportDataset(exportOptions(datasetDir, { kinds: ["tactic"] }));
    assert.equal(exported.kind, "ok");
    const tasks = new Map(
      readFileSync(join(datasetDir, "tasks.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => {
          const t = JSON.parse(l) as TaskRecord;
          return [t.id, t] as const;
        }),
    );

    const spawned = await TrainerProcess.spawn({ python: PYTHON, trainerRoot: TRAINER_ROOT, cwd: work });
    assert.equal(spawned.kind, "ok");
    if (spawned.kind !== "ok") return;
    const trainer = spawned.trainer;
    const c = trainer.connection;
    const seen = new Map<string, number>();
    const count = (method: string) => seen.set(method, (seen.get(method) ?? 0) + 1);
    let resolveDone!: (d: TrainDoneParams) => void;
    const done = new Promise<TrainDoneParams>((r) => (resolveDone = r));
    const verifier = {
      kind: "simulator" as const,
      version: "roundtrip",
      label: "exact match (test double, not Lean)",
    };

    const token = "roundtrip-token";
    const service = createServer((socket) => {
      const rpc = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
      socket.on("error", () => rpc.dispose());
      // As the real service: every connection opens with `auth`, carrying the token.
      rpc.onRequest(Auth, (params) => {
        count(Auth.method);
        valid("AuthParams", params, "auth params");
        if (params.token !== token) violations.push(`auth without the service's token`);
        return { maxBodyBytes: 1 << 20, idleTimeoutMs: 600_000 };
      });
      rpc.onRequest(VerifyBatch, (params) => {
        count(VerifyBatch.method);
        valid("VerifyBatchParams", params, "verify/batch params");
        if (params.token !== token) violations.push(`verify/batch without the service's token`);
        const verdicts: BatchVerdict[] = params.items.map((item) => {
          const taskId = "taskId" in item && item.taskId !== undefined ? item.taskId : "";
          const proved = tasks.get(taskId)?.middle.trim() === item.candidate.trim();
          return {
            taskId,
            kind: proved ? "proved" : "failed",
            reward: proved ? 1 : 0,
            rewardMetrics: { proved: proved ? 1 : 0 },
            diagnostics: proved
              ? []
              : [{ severity: 1, message: "not the reference proof", candidateRange: null }],
            elapsedMs: 0,
            cached: false,
            verifier,
          };
        });
        valid("VerifyBatchResult", { verdicts }, "our own verify/batch result");
        return { verdicts };
      });
      rpc.listen();
    });
    await new Promise<void>((resolveListen) => service.listen(0, "127.0.0.1", resolveListen));
    const port = (service.address() as AddressInfo).port;
    for (const message of TRAINER_MESSAGES) {
      if (message.type !== "notification") continue;
      c.onNotification(message.method, (params: unknown) => {
        count(message.method);
        valid(message.params, params, message.method);
        if (message.method === "train/done") resolveDone(params as TrainDoneParams);
      });
    }
    c.onUnhandledNotification((n) => violations.push(`undeclared notification ${n.method}`));
    c.listen();

    const params: InitializeParams = {
      protocolVersion: TRAINER_PROTOCOL_VERSION,
      config: {
        steps: 1,
        group_size: 2,
        batch_size: 1,
        sft_steps: 0,
        eval_limit: 2,
        max_new_tokens: 8,
        kinds: ["tactic"],
        checkpoint_every: 1,
        curriculum: false,
      },
      datasetDir,
      runDir: join(work, "run"),
      resume: false,
      verifier,
      verifierService: { host: "127.0.0.1", port, token },
      verifierBudget: { slots: 1, checkTimeoutMs: 1_000, checkBoundMs: 2_000 },
    };
    valid("InitializeParams", params, "our initialize params");
    const init = await c.sendRequest(Initialize, params);
    valid("InitializeResult", init, "initialize result");
    assert.equal(init.totalSteps, 1);
    const finished = await done;
    assert.equal(finished.status, "completed", finished.message);
    assert.equal(await c.sendRequest(Shutdown), null);
    const exit = await trainer.dispose(30_000);
    assert.deepEqual(exit, { code: 0, signal: null }, trainer.stderrTail);
    service.close();
    assert.deepEqual(violations, []);
    for (const method of [
      "auth",
      "verify/batch",
      "train/progress",
      "train/sample",
      "train/checkpoint",
      "train/eval",
      "train/done",
    ])
      assert.ok((seen.get(method) ?? 0) > 0, `saw ${method}`);
    for (const file of ["metrics.jsonl", "samples.jsonl", "eval.json", "config.json", "checkpoints/latest"])
      assert.ok(existsSync(join(work, "run", file)), file);
  },
);
