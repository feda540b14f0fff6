/**
 * `npm run package`'s .vsix, made offline with @vscode/vsce: it holds only what .vscodeignore allows (the
 * bundles, media, the trainer's Python sources, package.json, README, LICENSE), stays small, and installs
 * into code-server with --install-extension (that part skips, with the reason, without code-server).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "../helpers";
import { CODE_SERVER } from "./codeServer";
import { toolSkip } from "../toolSkip";

const VSCE = join(REPO, "node_modules", ".bin", "vsce");
const skip = !existsSync(join(REPO, "dist", "extension.js"))
  ? "dist/extension.js is missing (npm run build)"
  : !existsSync(VSCE)
    ? "@vscode/vsce is not installed (npm ci)"
    : spawnSync("unzip", ["-v"]).status !== 0
      ? "unzip is not installed"
      : false;
toolSkip(".vsix packaging test", skip);
const installSkip = toolSkip(
  "--install-extension of the .vsix",
  existsSync(CODE_SERVER) ? false : `${CODE_SERVER} is not installed (run test/e2e/setup.sh)`,
);

const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
  name: string;
  publisher: string;
  version: string;
  license: string;
};

/** What may be inside: the manifest files vsce adds, and extension/ files that .vscodeignore lets through. */
const ALLOWED = [
  /^\[Content_Types\]\.xml$/,
  /^extension\.vsixmanifest$/,
  /^extension\/(package\.json|readme\.md|LICENSE\.txt)$/i,
  /^extension\/dist\/\w+\.(js|css)$/,
  /^extension\/media\/[\w-]+\.(svg|css|png)$/,
  /^extension\/trainer\/(pyproject\.toml|README\.md)$/,
  /^extension\/trainer\/fim_rlvr\/([\w]+\/)*[\w]+\.py$/,
];

test(
  "npm run package: an offline .vsix with only the allowed files, which installs into code-server",
  { skip, timeout: 180_000 },
  () => {
    const out = join(mkdtempSync(join(tmpdir(), "fim-vsix-")), "fim-rlvr.vsix");
    const packed = spawnSync(
      VSCE,
      ["package", "--no-dependencies", "--allow-missing-repository", "--out", out],
      {
        cwd: REPO,
        encoding: "utf8",
      },
    );
    assert.equal(packed.status, 0, `vsce package failed:\n${packed.stdout}\n${packed.stderr}`);
    const size = statSync(out).size;
    assert.ok(size < 4 * 1024 * 1024, `the .vsix stays small (${(size / 1024).toFixed(0)} KiB)`);
    const files = spawnSync("unzip", ["-Z1", out], { encoding: "utf8" }).stdout.trim().split("\n");
    process.stderr.write(`.vsix: ${files.length} entries, ${(size / 1024).toFixed(0)} KiB\n`);
    const unexpected = files.filter((f) => !ALLOWED.some((pattern) => pattern.test(f)));
    assert.deepEqual(unexpected, [], "nothing outside .vscodeignore's allow-list");
    for (const needed of [
      "extension/package.json",
      "extension/LICENSE.txt",
      "extension/dist/extension.js",
      "extension/dist/cli.js",
      "extension/dist/dashboard.js",
      "extension/dist/uplot.css",
      "extension/media/proved-light.svg",
      "extension/media/timeout-dark.svg",
      "extension/media/dashboard.css",
      "extension/trainer/pyproject.toml",
      "extension/trainer/fim_rlvr/protocol.py",
    ])
      assert.ok(files.includes(needed), `${needed} is packed`);
    assert.ok(
      !files.some((f) => /\.venv|node_modules|__pycache__|\.map$|\/tests?\//.test(f)),
      "no venv, node_modules, caches, maps or tests",
    );
    assert.equal(pkg.license, "Apache-2.0");
    assert.match(
      readFileSync(join(REPO, "LICENSE"), "utf8"),
      /Apache License\s+Version 2\.0/,
      "LICENSE matches package.json",
    );

    if (installSkip) return;
    const extensions = mkdtempSync(join(tmpdir(), "fim-ext-"));
    const installed = spawnSync(
      CODE_SERVER,
      [
        "--extensions-dir",
        extensions,
        "--user-data-dir",
        mkdtempSync(join(tmpdir(), "fim-ud-")),
        "--install-extension",
        out,
      ],
      {
        encoding: "utf8",
      },
    );
    assert.equal(installed.status, 0, `install failed:\n${installed.stdout}\n${installed.stderr}`);
    const folder = join(extensions, `${pkg.publisher}.${pkg.name}-${pkg.version}`);
    for (const file of ["package.json", "dist/extension.js", "dist/cli.js", "trainer/fim_rlvr/protocol.py"])
      assert.ok(existsSync(join(folder, file)), `installed ${file}`);
  },
);
