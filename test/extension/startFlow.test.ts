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
    descriptions: [] as string[][],
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
      log.descriptions.push(items.map((i) => i.description ?? ""));
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
  assert.doesNotMatch(log.descriptions[0]!.join(" "), /\(setting\)/, "no cryptic suffix");
  assert.match(log.descriptions[0]![0]!, /dapo · your default \(setting fimRlvr\.trainer\.algorithm\)/);
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

test("Start with fimRlvr.verifier.kimina set: the Kimina Lean Server verifies; a value that is not a URL is refused", async () => {
  const withKimina = env({ lakeFound: false });
  withKimina.settings.kiminaUrl = " http://127.0.0.1:8000 ";
  const plan = await planStart(withKimina, fakeUi({ picks: ["GRPO", "Embedded"] }).ui);
  // The verifier's limits from the settings apply to Kimina as to any verifier (default time limit: 30 s).
  assert.deepEqual(plan.kind === "ready" && plan.options.verifier, {
    kind: "kimina",
    url: "http://127.0.0.1:8000",
    timeoutMs: 30_000,
  });
  assert.match(plan.kind === "ready" ? plan.summary : "", /verifier: a Kimina Lean Server/);

  const bad = env();
  bad.settings.kiminaUrl = "127.0.0.1:8000";
  const refused = fakeUi({ picks: ["GRPO", "Embedded"] });
  assert.deepEqual(await planStart(bad, refused.ui), { kind: "refused", reason: "no-lean" });
  assert.match(refused.log.errors[0]!, /fimRlvr\.verifier\.kimina .*not an http\(s\) URL/);
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
    "/runs/r1/checkpoints/step-6/model/config.json": "{}",
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
  // No run remembered: the newest run folder of the project with a full model in its checkpoint (a run
  // started from the CLI counts); a LoRA checkpoint (no config.json in model/) and an unfinished run do not.
  const runs = "/ws/lean-env/.fim-rlvr/runs";
  const onDisk = {
    "/ws/lean-env/lean-toolchain": "",
    "/ws/lean-env/FimExamples/Basic.lean": "",
    [`${runs}/2026-11-20T10-00-00/checkpoints/latest`]: "step-3",
    [`${runs}/2026-11-20T10-00-00/checkpoints/step-3/state.json`]: "{}",
    [`${runs}/2026-11-20T10-00-00/checkpoints/step-3/model/config.json`]: "{}",
    [`${runs}/2026-11-21T10-00-00/checkpoints/latest`]: "step-2",
    [`${runs}/2026-11-21T10-00-00/checkpoints/step-2/state.json`]: "{}",
    [`${runs}/2026-11-21T10-00-00/checkpoints/step-2/model/adapter_config.json`]: "{}",
    [`${runs}/2026-11-22T10-00-00/metrics.jsonl`]: "",
  };
  const scanned = fakeUi({ picks: ["GRPO", "last run"] });
  const fromDisk = await planStart(env({ fs: fakeFs(onDisk) }), scanned.ui);
  assert.equal(
    fromDisk.kind === "ready" && fromDisk.options.config.model,
    `${runs}/2026-11-20T10-00-00/checkpoints/step-3/model`,
  );
  const noRuns = fakeUi({ picks: ["GRPO", "Embedded"] });
  await planStart(env(), noRuns.ui);
  assert.ok(
    !noRuns.log.items[1]!.some((label) => label.includes("last run")),
    "offered only when there is one",
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
    // As the trainer writes it: its resolved TrainConfig plus records of its own, which are not options.
    "/runs/r1/config.json": JSON.stringify({
      algorithm: "gspo",
      steps: 12,
      model: null,
      sft_steps: null,
      algo_config_resolved: { beta: 0.04 },
      verifier: { kind: "simulator", version: "4.19.0", label: "simulator (not Lean)" },
      prompt_style: "fim",
    }),
  };
  const plan = await planResume(
    env({ fs: fakeFs(files), lastRun: { runDir: "/runs/r1", project: "/ws/lean-env" } }),
    fakeUi({}).ui,
  );
  assert.equal(plan.kind, "ready");
  if (plan.kind !== "ready") return;
  assert.equal(plan.options.resume, true);
  assert.equal(plan.options.runDir, "/runs/r1");
  // prompt_style is a TrainConfig key (the style the run resolved, so the resumed run prompts the same way);
  // algo_config_resolved and verifier are the trainer's own records and stay behind.
  assert.deepEqual(plan.options.config, {
    algorithm: "gspo",
    steps: 12,
    model: null,
    sft_steps: null,
    prompt_style: "fim",
  });
  // A config.json that is not JSON: the current settings, said in the log.
  const broken = fakeUi({});
  const fallback = await planResume(
    env({
      fs: fakeFs({ ...files, "/runs/r1/config.json": "{" }),
      lastRun: { runDir: "/runs/r1", project: "/ws/lean-env" },
    }),
    broken.ui,
  );
  assert.equal(fallback.kind === "ready" && fallback.options.config.algorithm, env().settings.algorithm);
  assert.match(broken.log.logs.join("\n"), /config\.json is unusable \(not valid JSON/);
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
