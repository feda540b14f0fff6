// Bundles the extension (vscode stays external: the editor provides it) and the CLI.
import { build } from "esbuild";

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  sourcemap: true,
  logLevel: "warning",
};
await Promise.all([
  build({
    ...common,
    entryPoints: ["extension/main.ts"],
    outfile: "dist/extension.js",
    external: ["vscode"],
  }),
  build({
    ...common,
    entryPoints: ["lean-bridge/cli/main.ts"],
    outfile: "dist/cli.js",
    banner: { js: "#!/usr/bin/env node" },
  }),
]);
