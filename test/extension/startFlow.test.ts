/** Planning "Start/Resume FIM-RLVR Training" with a fake UI: project, algorithm, model, verifier, trust. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  asPreset,
  INSTALL_LEAN,
  MANAGE_TRUST,
  USE_SIMULATOR,
  choosePython,
  planResume,
  planStart,
  type PickItem,
  type StartEnv,
  type StartUi,
} from "../../extension/state/startFlow";
import { ALGORITHM_CHOICES } from "../../extension/state/algorithms";
import { chooseProject } from "../../extension/state/leanProject";
import { ALGORITHM_NAMES } from "../../lean-bridge/protocol/trainer";

function fakeFs(files: Record<string, string>) {
  return {
    exists: (p: string) => p in files,
    readText: (p: string) => files[p],
    subfolders: (dir: string) => [
      ...new Set(
        Object.keys(files)
          .filter((f) => f.startsWith(dir + "/"))
          .map((f) => f.slice(dir.length + 1).split("/"))
          .filter((parts) => parts.length > 1)
          .map((parts) => parts[0]!),
      ),
    ],
  };
}

function fakeUi(answers: { picks?: (string | undefined)[]; error?: string; folder?: string }) {
  const log = {
    titles: [] as string[],
    items: [] as string[][],
    errors: [] as string[],
    warnings: [] as string[],
    urls: [] as string[],
    trust: 0,
    logs: [] as string[],
  };
  const picks = [...(answers.picks ?? [])];
  const ui: StartUi = {
    async pick<T>(title: string, items: PickItem<T>[]) {
      log.titles.push(title);
      log.items.push(items.map((i) => i.label));
      const want = picks.shift();
      return want === undefined ? undefined : items.find((i) => i.label.includes(want))?.value;
    },
    pickFolder: async () => answers.folder,
    warn: async (message) => {
      log.warnings.push(message);
      return undefined;
    },
    error: async (message) => {
      log.errors.push(message);
      return answers.error;
    },
    openUrl: (url) => log.urls.push(url),
    manageTrust: () => log.trust++,
    log: (m) => log.logs.push(m),
  };
  return { ui, log };
}

function env(overrides: Partial<StartEnv> = {}): StartEnv {
  return {
    activeFile: "/ws/lean-env/FimExamples/Basic.lean",
    workspaceFolders: ["/ws"],
    trusted: true,
    fs: fakeFs({
      "/ws/lean-env/lean-toolchain": "leanprover/lean4:v4.19.0",
      "/ws/lean-env/FimExamples/Basic.lean": "",
    }),
    lakeFound: true,
    python: { kind: "managed" },
    lastRun: undefined,
    now: new Date("2026-11-23T03:04:05.678Z"),
    settings: {
      verifierMode: "auto",
      serverCommand: [],
      model: "",
      algorithm: "dapo",
      algoConfig: { epsilon_high: 0.3 },
      extraConfig: { sft_steps: 0, algorithm: "gspo" },
      groupSize: 4,
      steps: null,
      outputDir: "",
      reward: "binary",
      verifierSlots: null,
      verifierTimeoutMs: 30_000,
      memoryBudgetMb: null,
    },
    ...overrides,
  };
}

test("the innermost Lean project around the active file wins; otherwise the workspace's projects", () => {
  const fs = fakeFs({
    "/ws/lean-toolchain": "",
    "/ws/sub/lean-toolchain": "",
    "/ws/sub/A/B.lean": "",
    "/ws/other/lean-toolchain": "",
  });
  assert.deepEqual(chooseProject("/ws/sub/A/B.lean", ["/ws"], fs), { kind: "one", project: "/ws/sub" });
  assert.deepEqual(chooseProject(undefined, ["/ws"], fs), {
    kind: "several",
    projects: ["/ws", "/ws/other", "/ws/sub"],
  });
  assert.deepEqual(chooseProject("/elsewhere/X.lean", ["/ws/other"], fs), {
    kind: "one",
    project: "/ws/other",
  });
  assert.deepEqual(chooseProject(undefined, ["/empty"], fs), { kind: "none" });
});

test("Start: algorithm quick pick with one-line descriptions (the setting first), embedded model, Lean verifier", async () => {
  const { ui, log } = fakeUi({ picks: ["GRPO", "Embedded"] });
  const plan = await planStart(env(), ui);
  assert.equal(plan.kind, "ready");
  if (plan.kind !== "ready") return;
  assert.equal(log.items[0]![0], "DAPO", "the configured algorithm is offered first");
  assert.equal(log.items[0]!.length, 5);
  assert.equal(plan.project, "/ws/lean-env");
  assert.deepEqual(plan.options, {
    target: "/ws/lean-env",
    runDir: join("/ws/lean-env", ".fim-rlvr", "runs", "2026-11-23T03-04-05"),
    config: {
      sft_steps: 0,
      algorithm: "grpo",
      algo_config: { epsilon_high: 0.3 },
      model: null,
      group_size: 4,
    },
    reward: "binary",
    verifier: { kind: "lean", timeoutMs: 30_000 },
    resume: false,
  });
  assert.match(plan.summary, /verifier: Lean; Python: the managed virtual environment/);
  const taken = env({ fs: fakeFs({ "/ws/lean-env/lean-toolchain": "", [plan.options.runDir]: "" }) });
  const second = await planStart(taken, fakeUi({ picks: ["GRPO", "Embedded"] }).ui);
  assert.equal(
    second.kind === "ready" && second.options.runDir,
    `${plan.options.runDir}-2`,
    "no run folder is reused",
  );
});

test("Start without lake: the simulator is used and said loudly in auto mode; offered in lean mode", async () => {
  const auto = fakeUi({ picks: ["GRPO", "Embedded"] });
  const plan = await planStart(env({ lakeFound: false }), auto.ui);
  assert.equal(plan.kind === "ready" && plan.options.verifier.kind, "simulator");
  assert.match(auto.log.warnings[0]!, /uses the simulator \(not Lean\)/);

  const strict = env({ lakeFound: false });
  strict.settings.verifierMode = "lean";
  const refused = fakeUi({ picks: ["GRPO", "Embedded"] });
  assert.deepEqual(await planStart(strict, refused.ui), { kind: "refused", reason: "no-lean" });
  assert.match(refused.log.errors[0]!, /Install Lean with elan/);
  const install = fakeUi({ picks: ["GRPO", "Embedded"], error: INSTALL_LEAN });
  await planStart(strict, install.ui);
  assert.equal(install.log.urls.length, 1, "install instructions open");
  const sim = fakeUi({ picks: ["GRPO", "Embedded"], error: USE_SIMULATOR });
  const simPlan = await planStart(strict, sim.ui);
  assert.equal(simPlan.kind === "ready" && simPlan.options.verifier.kind, "simulator");
});

test("Start in an untrusted workspace is refused with an offer to manage trust", async () => {
  const { ui, log } = fakeUi({ error: MANAGE_TRUST });
  assert.deepEqual(await planStart(env({ trusted: false }), ui), { kind: "refused", reason: "untrusted" });
  assert.match(log.errors[0]!, /not trusted/);
  assert.equal(log.trust, 1);
  assert.equal(log.titles.length, 0, "nothing is asked before trust");
});

test("Start: no Lean project, cancelled pickers, a local model folder, the last run's model, Python choice", async () => {
  const none = fakeUi({});
  assert.deepEqual(await planStart(env({ activeFile: undefined, fs: fakeFs({}) }), none.ui), {
    kind: "refused",
    reason: "no-project",
  });
  assert.match(none.log.errors[0]!, /no Lean project .* Open a Lean 4 project folder/);
  assert.deepEqual(await planStart(env(), fakeUi({ picks: [undefined] }).ui), { kind: "cancelled" });
  assert.deepEqual(await planStart(env(), fakeUi({ picks: ["GRPO", undefined] }).ui), { kind: "cancelled" });

  const local = await planStart(
    env({ python: choosePython(undefined, " /usr/bin/python3 ") }),
    fakeUi({ picks: ["GSPO", "local model"], folder: "/models/m" }).ui,
  );
  assert.equal(local.kind === "ready" && local.options.config.model, "/models/m");
  assert.equal(local.kind === "ready" && local.options.python, "/usr/bin/python3");

  const files = {
    "/ws/lean-env/lean-toolchain": "",
    "/ws/lean-env/FimExamples/Basic.lean": "",
    "/runs/r1/checkpoints/latest": "step-6\n",
    "/runs/r1/checkpoints/step-6/state.json": "{}",
  };
  const last = fakeUi({ picks: ["GRPO", "last run"] });
  const plan = await planStart(
    env({ fs: fakeFs(files), lastRun: { runDir: "/runs/r1", project: "/ws/lean-env" } }),
    last.ui,
  );
  assert.equal(
    plan.kind === "ready" && plan.options.config.model,
    join("/runs/r1", "checkpoints", "step-6", "model"),
  );
  assert.deepEqual(choosePython("/venv/bin/python", "/usr/bin/python3"), {
    kind: "python-extension",
    path: "/venv/bin/python",
  });
  assert.deepEqual(choosePython(undefined, ""), { kind: "managed" });
});

test("Start with a preset (the command's argument) skips the pickers it answers; bad presets are ignored", async () => {
  const { ui, log } = fakeUi({});
  const plan = await planStart(
    env(),
    ui,
    asPreset({ algorithm: "gspo", model: null, project: "/ws/lean-env", steps: 7 }),
  );
  assert.equal(log.titles.length, 0, "no picker shown");
  assert.equal(plan.kind === "ready" && plan.options.config.algorithm, "gspo");
  assert.equal(plan.kind === "ready" && plan.options.config.steps, 7);
  assert.deepEqual(asPreset({ algorithm: "ppo", model: 3, steps: -1 }), {});
  assert.deepEqual(asPreset("grpo"), {});
});

test("Resume continues the last run from its checkpoint with the configuration it was started with", async () => {
  const noRun = fakeUi({});
  assert.deepEqual(await planResume(env(), noRun.ui), { kind: "refused", reason: "no-checkpoint" });
  assert.match(noRun.log.errors[0]!, /no run with a checkpoint/);
  const files = {
    "/runs/r1/checkpoints/latest": "step-6",
    "/runs/r1/checkpoints/step-6/state.json": "{}",
    "/runs/r1/config.json": JSON.stringify({ algorithm: "gspo", steps: 12, model: null }),
  };
  const plan = await planResume(
    env({ fs: fakeFs(files), lastRun: { runDir: "/runs/r1", project: "/ws/lean-env" } }),
    fakeUi({}).ui,
  );
  assert.equal(plan.kind, "ready");
  if (plan.kind !== "ready") return;
  assert.equal(plan.options.resume, true);
  assert.equal(plan.options.runDir, "/runs/r1");
  assert.deepEqual(plan.options.config, { algorithm: "gspo", steps: 12, model: null });
});

test("The memory budget setting reaches the run's options on Start and Resume; unset leaves the pool's default", async () => {
  const settings = { ...env().settings, memoryBudgetMb: 6144 };
  const start = await planStart(env({ settings }), fakeUi({ picks: ["GRPO", "Embedded"] }).ui);
  assert.equal(start.kind === "ready" && start.options.verifier.memoryBudgetMb, 6144);
  const unset = await planStart(env(), fakeUi({ picks: ["GRPO", "Embedded"] }).ui);
  assert.ok(
    unset.kind === "ready" && !("memoryBudgetMb" in unset.options.verifier),
    "no key: the pool uses 3/4 of RAM",
  );
  const files = {
    "/runs/r1/checkpoints/latest": "step-6",
    "/runs/r1/checkpoints/step-6/state.json": "{}",
  };
  const lastRun = { runDir: "/runs/r1", project: "/ws/lean-env" };
  const resume = await planResume(env({ fs: fakeFs(files), lastRun, settings }), fakeUi({}).ui);
  assert.equal(resume.kind === "ready" && resume.options.verifier.memoryBudgetMb, 6144);
});

test("the Start quick pick offers every algorithm the trainer runs, in the protocol's order", () => {
  assert.deepEqual(
    ALGORITHM_CHOICES.map((a) => a.name),
    [...ALGORITHM_NAMES],
  );
});
