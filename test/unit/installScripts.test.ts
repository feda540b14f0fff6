/**
 * `npm ci` is quiet and downloads nothing from outside the npm registry (issue 25 item 14): every dependency
 * with an install script is decided in package.json's `allowScripts` (npm 11.16's field: true runs it, false
 * skips it), and no .npmrc holds a key npm does not know (npm 11 warns on every command about such keys).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers";

test("every dependency with an install script is decided in allowScripts, and nothing else is listed there", () => {
  const manifest = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
    allowScripts?: Record<string, boolean>;
  };
  const lock = JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8")) as {
    packages: Record<string, { hasInstallScript?: boolean }>;
  };
  const withScripts = Object.entries(lock.packages)
    .filter(([path, p]) => path && p.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
  assert.deepEqual(Object.keys(manifest.allowScripts ?? {}).sort(), [...new Set(withScripts)].sort());
  // esbuild's script fetches its binary for this platform; onnxruntime-node's would fetch CUDA providers from
  // nuget.org (its CPU binaries ship in the package), keytar's builds a credential store vsce never uses here.
  assert.equal(manifest.allowScripts?.esbuild, true);
  assert.equal(manifest.allowScripts?.["onnxruntime-node"], false);
});

test("no project .npmrc carries a key npm does not know", () => {
  const npmrc = join(REPO, ".npmrc");
  if (!existsSync(npmrc)) return;
  const keys = readFileSync(npmrc, "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#") && !l.startsWith(";"))
    .map((l) => l.split("=")[0]!.trim());
  assert.deepEqual(
    keys.filter((k) => k.includes("onnxruntime")),
    [],
    "package-specific keys are not npm configs: npm 11 warns about them on every command",
  );
});
