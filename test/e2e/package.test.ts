/**
 * `npm run package`'s .vsix (scripts/package-vsix.mjs, for this machine's platform), made offline with
 * @vscode/vsce: it holds only what .vscodeignore allows (the bundles, media, the trainer's Python sources,
 * package.json, README, LICENSE, and onnxruntime-node with this platform's binaries only, which load from the
 * unpacked layout), no model weights, and installs into code-server with --install-extension (that part skips,
 * with the reason, without code-server).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers";
import { CODE_SERVER } from "./codeServer";
import { toolSkip } from "../toolSkip";
import { tempDir } from "../tempDirs";

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
  /^extension\/dist\/node_modules\/onnxruntime-(node|common)\/(package\.json|README\.md|dist\/([\w-]+\/)*[\w-]+\.(js|json))$/,
  new RegExp(
    `^extension/dist/node_modules/onnxruntime-node/bin/napi-v6/${process.platform}/${process.arch}/[\\w.-]+$`,
  ),
  /^extension\/media\/[\w-]+\.(svg|css|png)$/,
  /^extension\/trainer\/(pyproject\.toml|README\.md)$/,
  /^extension\/trainer\/fim_rlvr\/([\w]+\/)*[\w]+\.py$/,
];

test(
  "npm run package: an offline .vsix with only the allowed files, which installs into code-server",
  { skip, timeout: 180_000 },
  () => {
    const out = join(tempDir("fim-vsix-"), "fim-rlvr.vsix");
    const packed = spawnSync(process.execPath, [join(REPO, "scripts", "package-vsix.mjs"), "--out", out], {
      cwd: REPO,
      encoding: "utf8",
    });
    assert.equal(packed.status, 0, `vsce package failed:\n${packed.stdout}\n${packed.stderr}`);
    assert.ok(!existsSync(join(REPO, "dist", "node_modules")), "the staging folder is removed");
    const size = statSync(out).size;
    // onnxruntime's CPU binaries for one platform are most of it (~17 MB zipped for linux-x64).
    assert.ok(size < 30 * 1024 * 1024, `the .vsix stays small (${(size / 1024).toFixed(0)} KiB)`);
    const files = spawnSync("unzip", ["-Z1", out], { encoding: "utf8" }).stdout.trim().split("\n");
    process.stderr.write(`.vsix: ${files.length} entries, ${(size / 1024).toFixed(0)} KiB\n`);
    const unexpected = files.filter((f) => !ALLOWED.some((pattern) => pattern.test(f)));
    assert.deepEqual(unexpected, [], "nothing outside .vscodeignore's allow-list");
    for (const needed of [
      "extension/package.json",
      "extension/LICENSE.txt",
      "extension/dist/extension.js",
      "extension/dist/cli.js",
      "extension/dist/onnxWorker.js",
      "extension/dist/node_modules/onnxruntime-node/dist/index.js",
      "extension/dist/node_modules/onnxruntime-common/dist/cjs/index.js",
      "extension/dist/dashboard.js",
      "extension/dist/uplot.css",
      "extension/media/proved-light.svg",
      "extension/media/timeout-dark.svg",
      "extension/media/dashboard.css",
      "extension/trainer/pyproject.toml",
      "extension/trainer/fim_rlvr/core/protocol.py",
    ])
      assert.ok(files.includes(needed), `${needed} is packed`);
    assert.ok(
      !files.some((f) => /\.venv|__pycache__|\.map$|\/tests?\//.test(f)),
      "no venv, caches, maps or tests",
    );
    assert.ok(
      files.every(
        (f) => !f.includes("node_modules") || f.startsWith("extension/dist/node_modules/onnxruntime-"),
      ),
      "no node_modules but onnxruntime's",
    );
    assert.ok(
      files.some((f) => f.endsWith("onnxruntime_binding.node")),
      "this platform's onnxruntime binding is packed",
    );
    assert.ok(!files.some((f) => /\.(onnx|onnx_data|safetensors|gguf)$/.test(f)), "never model weights");
    // The worker's require("onnxruntime-node") resolves inside the unpacked extension and loads its binary.
    const unpacked = tempDir("fim-vsix-unpacked-");
    assert.equal(spawnSync("unzip", ["-q", out, "-d", unpacked]).status, 0);
    const dist = join(unpacked, "extension", "dist");
    const loaded = spawnSync(
      process.execPath,
      [
        "-e",
        "const p = require.resolve('onnxruntime-node', { paths: [process.argv[1]] }); " +
          "const ort = require(p); process.stdout.write(p + ' ' + typeof ort.InferenceSession.create);",
        dist,
      ],
      { encoding: "utf8", cwd: unpacked },
    );
    assert.equal(loaded.status, 0, loaded.stderr);
    assert.ok(loaded.stdout.startsWith(join(dist, "node_modules", "onnxruntime-node")), loaded.stdout);
    assert.match(loaded.stdout, / function$/);
    assert.equal(pkg.license, "Apache-2.0");
    assert.match(
      readFileSync(join(REPO, "LICENSE"), "utf8"),
      /Apache License\s+Version 2\.0/,
      "LICENSE matches package.json",
    );

    if (installSkip) return;
    const extensions = tempDir("fim-ext-");
    const installed = spawnSync(
      CODE_SERVER,
      ["--extensions-dir", extensions, "--user-data-dir", tempDir("fim-ud-"), "--install-extension", out],
      {
        encoding: "utf8",
      },
    );
    assert.equal(installed.status, 0, `install failed:\n${installed.stdout}\n${installed.stderr}`);
    const folder = join(extensions, `${pkg.publisher}.${pkg.name}-${pkg.version}`);
    for (const file of [
      "package.json",
      "dist/extension.js",
      "dist/cli.js",
      "trainer/fim_rlvr/core/protocol.py",
    ])
      assert.ok(existsSync(join(folder, file)), `installed ${file}`);
  },
);
