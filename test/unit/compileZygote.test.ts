/**
 * The compile server's client (compileZygote.ts) against scripted servers that speak its line protocol, without
 * Lean: a server that cannot confine its children (a kernel without the Landlock it needs) is not used, and
 * neither is one whose child could not be confined (the caller then starts Lean itself); a compile past its
 * deadline is killed by asking the server, whose pids are of its own PID namespace, never by signalling that
 * number here. The real tool is tested on the embedded Lean (test/real-lean/embeddedGateConfinement.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CompileZygote } from "../../lean-bridge/verify/compileZygote";

/**
 * A scripted server: `onRequest(fields)` answers a request's line with lines of its own; every line it reads is
 * appended to `heard`. `start` is its first line ("FIMRLVR-ZYGOTE ready" or a refusal).
 */
function scripted(
  start: string,
  onRequest: string,
): { command: string[]; heard: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "fimrlvr-zygote-"));
  const heard = join(dir, "heard");
  writeFileSync(heard, "");
  const script = join(dir, "server.cjs");
  writeFileSync(
    script,
    `const fs = require("fs");
const say = (line) => process.stdout.write(line + "\\n");
say(${JSON.stringify(start)});
if (!${JSON.stringify(start)}.endsWith("ready")) process.exit(3);
require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
  fs.appendFileSync(${JSON.stringify(heard)}, line + "\\n");
  const fields = line.split("\\t");
  for (const answer of (${onRequest})(fields)) say(answer);
});
`,
  );
  return {
    command: [process.execPath, script],
    heard,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

const OPTIONS = { cwd: tmpdir(), env: process.env, cpuSeconds: 0 };

test("a compile server that cannot confine its children is not used", async () => {
  const server = scripted(
    "FIMRLVR-ZYGOTE unconfined this kernel's Landlock ABI is 3; confining a compile needs 6 (Linux 6.12 or later)",
    "() => []",
  );
  const zygote = new CompileZygote(server.command, OPTIONS);
  try {
    assert.equal(await zygote.run(["-o", "x.olean", "X.lean"], tmpdir(), 10_000), undefined);
    assert.match(zygote.confinementRefused ?? "", /Landlock ABI is 3/);
    assert.equal(await zygote.run(["-o", "x.olean", "X.lean"], tmpdir(), 10_000), undefined);
    assert.equal(readFileSync(server.heard, "utf8"), "", "a request reached a server that cannot confine");
  } finally {
    zygote.stop();
    server.remove();
  }
});

test("a child that could not be confined ran nothing, and the server is not used again", async () => {
  // The request's fields: id, CPU seconds, the writable folder, stdout, stderr, then Lean's arguments.
  const server = scripted(
    "FIMRLVR-ZYGOTE ready",
    '(f) => [`unconfined ${f[0]} cannot open ${f[2]}: No such file or directory`, `started ${f[0]} 77`, "exited 77 125"]',
  );
  const zygote = new CompileZygote(server.command, OPTIONS);
  try {
    const dir = join(tmpdir(), "fimrlvr-no-such-folder");
    assert.equal(await zygote.run(["-o", "x.olean", "X.lean"], dir, 10_000), undefined);
    assert.match(zygote.confinementRefused ?? "", /cannot open/);
    const heard = readFileSync(server.heard, "utf8").trim().split("\n");
    assert.deepEqual(
      heard[0]?.split("\t").slice(0, 3),
      ["1", "0", dir],
      "the writable folder is the request's",
    );
    assert.equal(await zygote.run(["-o", "x.olean", "X.lean"], tmpdir(), 10_000), undefined);
    assert.equal(
      readFileSync(server.heard, "utf8").trim().split("\n").length,
      1,
      "the server was used again",
    );
  } finally {
    zygote.stop();
    server.remove();
  }
});

test(
  "a compile past its deadline is killed through the server, by the server's own pid for it",
  { timeout: 30_000 },
  async () => {
    // The child's pid as the server names it; here no process of this number is ours to signal.
    const server = scripted(
      "FIMRLVR-ZYGOTE ready",
      '(f) => f[0] === "kill" ? [`signalled ${f[1]} 9`] : [`started ${f[0]} 999999`]',
    );
    const zygote = new CompileZygote(server.command, OPTIONS);
    const dir = mkdtempSync(join(tmpdir(), "fimrlvr-zygote-run-"));
    try {
      const late = await zygote.run(["--json", "X.lean"], dir, 50);
      assert.equal(late?.kind, "timeout", JSON.stringify(late));
      const heard = readFileSync(server.heard, "utf8").trim().split("\n");
      assert.deepEqual(
        heard.at(-1),
        "kill\t999999",
        `the server was not asked to kill: ${heard.join(" / ")}`,
      );
    } finally {
      zygote.stop();
      server.remove();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
