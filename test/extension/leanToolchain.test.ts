/**
 * The editor finds Lean as the user set it up for the Lean 4 extension (`lean4.envPathExtensions`, its older
 * `lean4.toolchainPath`), beside our own `fimRlvr.verifier.lakePath`, and never changes the extension host's shared
 * PATH: the environment it gives is a copy for the processes it starts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { leanToolchain } from "../../extension/state/leanToolchain";
import { REPO } from "../helpers";
import { tempDir } from "../tempDirs";

const NONE = { lakePath: "", envPathExtensions: [], toolchainPath: "" };

function fakeLake(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const lake = join(dir, "lake");
  writeFileSync(lake, "#!/bin/sh\n");
  chmodSync(lake, 0o755);
  return lake;
}

test("lean4.envPathExtensions: lake found there, its folders first on the children's PATH", () => {
  const root = tempDir("fim-toolchain-");
  const lake = fakeLake(join(root, "ws", ".toolchain", "bin"));
  const base = { PATH: "/usr/bin:/bin", HOME: "/home/u" };
  const found = leanToolchain(
    { ...NONE, envPathExtensions: [".toolchain/bin", "/opt/extra"] },
    { base, home: join(root, "home"), workspaceRoot: join(root, "ws") },
  );
  assert.equal(found.lake, lake);
  assert.deepEqual(found.env.PATH!.split(delimiter), [
    join(root, "ws", ".toolchain", "bin"),
    "/opt/extra",
    "/usr/bin",
    "/bin",
  ]);
  assert.equal(found.env.HOME, "/home/u", "the rest of the environment is kept");
  assert.deepEqual(base, { PATH: "/usr/bin:/bin", HOME: "/home/u" }, "the environment given is not changed");
});

test("fimRlvr.verifier.lakePath wins; then lean4.toolchainPath's bin/, PATH, elan's ~/.elan/bin", () => {
  const root = tempDir("fim-toolchain-");
  const own = fakeLake(join(root, "own"));
  const toolchain = fakeLake(join(root, "toolchain", "bin"));
  const onPath = fakeLake(join(root, "path"));
  const elan = fakeLake(join(root, "home", ".elan", "bin"));
  const base = { PATH: join(root, "path") };
  const home = join(root, "home");
  const pick = (settings: Partial<typeof NONE>, env = base) =>
    leanToolchain({ ...NONE, ...settings }, { base: env, home }).lake;
  assert.equal(pick({ lakePath: own, toolchainPath: join(root, "toolchain") }), own);
  assert.equal(pick({ toolchainPath: join(root, "toolchain") }), toolchain);
  assert.equal(pick({}), onPath);
  assert.equal(pick({}, { PATH: "" }), elan);
  const none = leanToolchain(NONE, { base: { PATH: "/nowhere" }, home: join(root, "nobody") });
  assert.equal(none.lake, undefined);
  assert.equal(none.env.PATH, "/nowhere");
});

test("the extension host's process.env.PATH is never assigned: not by the lookup, not in any extension file", () => {
  const before = process.env.PATH;
  const root = tempDir("fim-toolchain-");
  const lake = fakeLake(join(root, "bin"));
  const found = leanToolchain({ ...NONE, lakePath: lake }, { base: process.env, home: root });
  assert.equal(found.env.PATH!.split(delimiter)[0], join(root, "bin"));
  assert.equal(process.env.PATH, before);
  const sources: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".ts")) sources.push(path);
    }
  };
  walk(join(REPO, "extension"));
  const assigning = sources.filter((f) =>
    /process\.env(\.PATH|\[["']PATH["']\])\s*=(?!=)/.test(readFileSync(f, "utf8")),
  );
  assert.deepEqual(assigning, [], "files that change the shared PATH");
});
