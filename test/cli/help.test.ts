/** The CLI teaches itself (issue #8): version, help pages, --help on every command, unknown flags. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { commandHelp, parseCommandArgs } from "../../lean-bridge/cli/command";
import { COMMANDS } from "../../lean-bridge/cli/main";
import { REPO } from "../helpers";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");
const NAMES = COMMANDS.map((c) => c.name);

/** Every call has a timeout: a help path that waits on stdin fails the test instead of hanging it. */
function run(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 20_000, input: "" });
  assert.notEqual(r.signal, "SIGTERM", `fim-rlvr ${args.join(" ")} did not finish within 20 s`);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("--version prints the package version", () => {
  const { version } = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string };
  for (const flag of ["--version", "-V"]) {
    const r = run([flag]);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `fim-rlvr ${version}\n`);
  }
});

test("fim-rlvr --help and help list every command; no arguments is a usage error with the same page", () => {
  for (const args of [["--help"], ["-h"], ["help"]]) {
    const r = run(args);
    assert.equal(r.code, 0, args.join(" "));
    for (const name of NAMES) assert.match(r.stdout, new RegExp(`^  ${name} `, "m"));
  }
  const bare = run([]);
  assert.equal(bare.code, 2);
  assert.match(bare.stderr, /Commands:/);
});

test("help COMMAND, COMMAND --help and COMMAND -h print the same page with options, defaults and an example", () => {
  for (const name of NAMES) {
    const pages = [run(["help", name]), run([name, "--help"]), run([name, "-h"])];
    for (const p of pages) assert.equal(p.code, 0, `${name}: ${p.stderr}`);
    assert.equal(pages[1]!.stdout, pages[0]!.stdout);
    assert.equal(pages[2]!.stdout, pages[0]!.stdout);
    const page = pages[0]!.stdout;
    assert.match(page, new RegExp(`^Usage: fim-rlvr ${name} `));
    assert.match(page, /^Options:$/m);
    assert.match(page, /\(default: /, `${name} shows defaults`);
    assert.match(page, new RegExp(`^Examples?:\\n  fim-rlvr ${name}\\b`, "m"));
  }
});

test("--help wins over missing and malformed options (it never starts a server)", () => {
  const r = run(["verify", "--project", "/nonexistent", "--help"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^Usage: fim-rlvr verify /);
});

test("simulator --help and simulator --bogus return at once instead of waiting on stdin", () => {
  assert.equal(run(["simulator", "--help"]).code, 0);
  const bad = run(["simulator", "--bogus"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown option --bogus/);
});

test("unknown flags and stray arguments are errors on every command, with a hint", () => {
  for (const name of NAMES) {
    const r = run([name, "--bogus-flag"]);
    assert.equal(r.code, 2, name);
    assert.match(r.stderr, /unknown option --bogus-flag/);
    assert.match(r.stderr, new RegExp(`fim-rlvr help ${name}`));
  }
  assert.match(run(["verify", "--projetc", "x"]).stderr, /did you mean --project\?/);
  assert.match(run(["verify", "stray"]).stderr, /unexpected argument "stray"/);
  assert.equal(run(["--bogus"]).code, 2);
  assert.match(run(["help", "frobnicate"]).stderr, /unknown command "frobnicate"/);
});

test("every option a help page names is accepted by that command's parser, and vice versa", () => {
  for (const command of COMMANDS) {
    const page = commandHelp(command);
    const named = new Set([...page.matchAll(/^ {2}(?:-[a-zA-Z], )?--([a-z][a-z0-9-]*)/gm)].map((m) => m[1]!));
    named.delete("help");
    assert.deepEqual([...named].sort(), Object.keys(command.options).sort(), command.name);
    for (const name of named) {
      const def = command.options[name]!;
      const args = def.type === "string" ? [`--${name}`, "v"] : [`--${name}`];
      assert.equal(parseCommandArgs(command, args).kind, "args", `${command.name} --${name}`);
    }
    // Values with commas are spelled as the parser reads them (e.g. --format native,lean-grpo).
    assert.doesNotMatch(page, /--format [a-z-]+\|/, "lists are comma-separated, not alternatives");
  }
});

test("dist/cli.js is executable and runs by itself (what npx and npm link call)", () => {
  assert.ok((statSync(CLI).mode & 0o111) !== 0, "dist/cli.js has the executable bit");
  const r = spawnSync(CLI, ["--version"], { encoding: "utf8", timeout: 20_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^fim-rlvr /);
});

test("`npx fim-rlvr` and `npm link` run the built CLI", () => {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const npx = spawnSync("npx", ["--no-install", "fim-rlvr", "--version"], {
    cwd: REPO,
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(npx.status, 0, npx.stderr);
  assert.match(npx.stdout, /^fim-rlvr \d+\.\d+\.\d+/);
  // npm link into a private prefix (never the machine's global one).
  const prefix = tempDir("fim-link-");
  const env = { ...process.env, npm_config_prefix: prefix };
  const link = spawnSync(npm, ["link", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: REPO,
    env,
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(link.status, 0, link.stderr);
  const linked = spawnSync(join(prefix, "bin", "fim-rlvr"), ["--version"], {
    encoding: "utf8",
    timeout: 20_000,
  });
  assert.equal(linked.status, 0, linked.stderr);
  assert.match(linked.stdout, /^fim-rlvr /);
});

test("the README documents every command: a synopsis line in its CLI section, and for filter its own section", () => {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const cli = readme.slice(readme.indexOf("## The CLI"), readme.indexOf("## Datasets"));
  for (const name of NAMES)
    assert.match(cli, new RegExp(`^fim-rlvr ${name} `, "m"), `the README's CLI section shows ${name}`);
  assert.match(readme, /^## Filtering a dataset by difficulty \(`fim-rlvr filter`\)$/m);
  const architecture = readFileSync(join(REPO, "docs", "ARCHITECTURE.md"), "utf8");
  assert.match(architecture, /filter\/ +runFilter\.ts \(`filter`/);
});

test("every option the README's CLI and dataset sections name is an option of some command", () => {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const start = readme.indexOf("## The CLI");
  const end = readme.indexOf("## Rewards");
  assert.ok(start >= 0 && end > start, "the README has its CLI and dataset sections");
  const known = new Set(["help", "version", ...COMMANDS.flatMap((c) => Object.keys(c.options))]);
  const named = new Set(
    [...readme.slice(start, end).matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!),
  );
  // Options of other tools the README shows (npx, elan's installer).
  const otherTools = new Set(["no-install", "default-toolchain"]);
  const unknown = [...named].filter((n) => !known.has(n) && !otherTools.has(n));
  assert.deepEqual(unknown, [], "options the README names that no command accepts");
});

test("verify's example checks a hole inside the committed example workspace, and proves it with the simulator", () => {
  const verify = COMMANDS.find((c) => c.name === "verify")!;
  const example = verify.examples[0]!;
  const hole = /--hole (\d+):(\d+)-(\d+):(\d+)/.exec(example);
  const file = /--file (\S+)/.exec(example);
  const candidate = /--candidate (\S+)/.exec(example);
  assert.ok(hole && file && candidate, example);
  const lines = readFileSync(join(REPO, "lean-env", file[1]!), "utf8").split("\n");
  const [sl, sc, el, ec] = hole.slice(1).map(Number) as [number, number, number, number];
  assert.equal(sl, el, "the example's hole is one line");
  assert.equal(
    lines[sl]?.slice(sc, ec),
    candidate[1],
    `line ${sl} of ${file[1]} holds the example's candidate`,
  );
  const r = spawnSync(process.execPath, [CLI, ...example.split(" ").slice(1)], {
    cwd: REPO,
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^proved/);
});
