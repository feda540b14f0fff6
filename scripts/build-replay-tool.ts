// Builds (or finds cached) the kernel gate's native replay tool for an embedded `lean` binary, so an installer
// can build it ahead of the first verification (the gate builds it on first use otherwise):
//   node --import tsx scripts/build-replay-tool.ts [PATH/TO/bin/lean]
// Without an argument it uses FIM_EMBEDDED_LEAN, then the installed embedded Lean. Prints the tool's path;
// on failure says why and what to do, and exits 1.
import { embeddedLeanPath, ensureNativeReplayTool } from "../lean-bridge/verify/nativeReplayTool";

const lean = process.argv[2] ?? embeddedLeanPath();
if (!lean) {
  process.stderr.write(
    "build-replay-tool: no embedded Lean (pass the path of its bin/lean, set FIM_EMBEDDED_LEAN, or install it with npm run setup:lean)\n",
  );
  process.exit(1);
}
const tool = ensureNativeReplayTool(lean);
if (tool.kind === "ok") process.stdout.write(`${tool.path}\n`);
else {
  process.stderr.write(`build-replay-tool: ${tool.message}\nWhat to do: ${tool.action}\n`);
  process.exit(1);
}
