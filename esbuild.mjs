// Bundles the extension (vscode stays external: the editor provides it), the CLI, and (with --bench) the
// benchmarks, so that benchmarks measure the same bundled code users run.
import { build } from "esbuild";
import { chmodSync, readFileSync } from "node:fs";

const { version } = JSON.parse(readFileSync("package.json", "utf8")); // Run from the repository root.

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  sourcemap: true,
  logLevel: "warning",
};
const bench = process.argv.includes("--bench");
// `--bench-only`: the benchmarks alone, leaving dist/cli.js and the rest as they are. A test that needs a bench
// bundle uses it, since other tests run dist/cli.js at the same moment and must never read it half written.
const benchOnly = process.argv.includes("--bench-only");
const app = () => [
  build({
    ...common,
    entryPoints: ["extension/main.ts"],
    outfile: "dist/extension.js",
    external: ["vscode"],
  }),
  // The dashboard webview's script (a browser bundle, uPlot included) and uPlot's stylesheet: no CDN.
  build({
    ...common,
    platform: "browser",
    format: "iife",
    target: "es2022",
    entryPoints: ["extension/webview/dashboard.ts"],
    outfile: "dist/dashboard.js",
  }),
  build({ ...common, entryPoints: ["node_modules/uplot/dist/uPlot.min.css"], outfile: "dist/uplot.css" }),
  build({
    ...common,
    entryPoints: ["lean-bridge/cli/main.ts"],
    outfile: "dist/cli.js",
    banner: { js: "#!/usr/bin/env node" },
    define: { FIM_RLVR_VERSION: JSON.stringify(version) },
  }),
  // The editor's export runs in this child process (extension/exportProcess.ts), off the host's thread.
  build({
    ...common,
    entryPoints: ["lean-bridge/dataset/exportWorker.ts"],
    outfile: "dist/exportWorker.js",
  }),
  // A local ONNX model runs in this child process (lean-bridge/models/onnxBackend.ts): a native crash in
  // onnxruntime ends it, not the editor. onnxruntime-node is native code, so it stays a package beside the bundle.
  build({
    ...common,
    entryPoints: ["lean-bridge/models/onnxWorker.ts"],
    outfile: "dist/onnxWorker.js",
    external: ["onnxruntime-node"],
  }),
];
await Promise.all([
  ...(benchOnly ? [] : app()),
  ...(bench || benchOnly
    ? [
        build({
          ...common,
          entryPoints: [
            "bench/mine.ts",
            "bench/mineExport.ts",
            "bench/mineStart.ts",
            "bench/verify.ts",
            "bench/serve.ts",
            "bench/train.ts",
            "bench/seeds.ts",
            "bench/rlVariants.ts",
            "bench/infer.ts",
            "bench/kimina.ts",
          ],
          outdir: "dist/bench",
        }),
      ]
    : []),
]);
// `npx fim-rlvr` and `npm link` run dist/cli.js directly: it must be executable.
if (!benchOnly) chmodSync("dist/cli.js", 0o755);
