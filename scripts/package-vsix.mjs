// Packages the .vsix for one platform: `node scripts/package-vsix.mjs [--target linux-x64] [--out FILE]`
// (default: this machine's platform). Everything but onnxruntime is bundled by esbuild; onnxruntime-node is
// native code, so its JavaScript and ONLY the target's binaries are staged in dist/node_modules/ (where
// dist/onnxWorker.js finds them), and `vsce package --target` marks the .vsix for that platform. Model weights
// are never packed (.vscodeignore). The staging folder is removed afterwards, also on failure.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

/** vsce's target names, and where onnxruntime-node keeps each one's binaries. */
const TARGETS = {
  "linux-x64": "linux/x64",
  "linux-arm64": "linux/arm64",
  "darwin-arm64": "darwin/arm64",
  "win32-x64": "win32/x64",
};

const { values } = parseArgs({ options: { target: { type: "string" }, out: { type: "string" } } });
const target = values.target ?? `${process.platform}-${process.arch}`;
const binaries = TARGETS[target];
if (!binaries) {
  process.stderr.write(
    `package-vsix: onnxruntime-node ships no binaries for ${target}; targets: ${Object.keys(TARGETS).join(", ")}\n`,
  );
  process.exit(2);
}
const ort = join("node_modules", "onnxruntime-node");
const common = join("node_modules", "onnxruntime-common");
if (!existsSync(join(ort, "bin", "napi-v6", binaries))) {
  process.stderr.write(`package-vsix: ${join(ort, "bin", "napi-v6", binaries)} is missing; run npm ci\n`);
  process.exit(1);
}
if (!existsSync(join("dist", "onnxWorker.js"))) {
  process.stderr.write("package-vsix: dist/onnxWorker.js is missing; run npm run build first\n");
  process.exit(1);
}

const staged = join("dist", "node_modules");
rmSync(staged, { recursive: true, force: true });
let status;
try {
  const into = (path) => {
    mkdirSync(join(staged, path, ".."), { recursive: true });
    return join(staged, path);
  };
  for (const file of ["package.json", "LICENSE", "README.md"]) {
    if (existsSync(join(ort, file))) cpSync(join(ort, file), into(join("onnxruntime-node", file)));
    if (existsSync(join(common, file))) cpSync(join(common, file), into(join("onnxruntime-common", file)));
  }
  const code = { recursive: true, filter: (path) => !/\.(map|d\.ts)$/.test(path) };
  cpSync(join(ort, "dist"), into(join("onnxruntime-node", "dist")), code);
  cpSync(join(ort, "bin", "napi-v6", binaries), into(join("onnxruntime-node", "bin", "napi-v6", binaries)), {
    recursive: true,
  });
  cpSync(join(common, "dist", "cjs"), into(join("onnxruntime-common", "dist", "cjs")), code);
  const out = values.out ?? `fim-rlvr-lean4-${target}.vsix`;
  const vsce = join("node_modules", ".bin", process.platform === "win32" ? "vsce.cmd" : "vsce");
  const packed = spawnSync(
    vsce,
    ["package", "--target", target, "--no-dependencies", "--allow-missing-repository", "--out", out],
    { stdio: "inherit" },
  );
  status = packed.status ?? 1;
  if (status === 0) {
    const files = readdirSync(join(staged, "onnxruntime-node", "bin", "napi-v6", binaries));
    process.stdout.write(
      `package-vsix: ${out} for ${target} (onnxruntime ${binaries}: ${files.join(", ")})\n`,
    );
  }
} finally {
  rmSync(staged, { recursive: true, force: true });
}
process.exit(status);
