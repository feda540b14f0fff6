/**
 * The kernel gate's compile against a candidate with IO (test/fixtures/attack-lake: a scripted `lake` doing
 * what such a candidate's code would inside the compile): it overwrites the replay program with one that
 * always answers "replayed", rewrites a compiled import, kills the verifier's stand-in and leaves a file in
 * the project. In the sandbox every one of those fails, the kernel's refusal stands, and the next check is
 * unaffected; without it (the control) the same script switches the gate off, which shows the attack is real.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { which } from "../../lean-bridge/server/launch";
import type { GateRequest } from "../../lean-bridge/verify/kernelGate";
import { KERNEL_REPLAY_PROGRAM } from "../../lean-bridge/verify/kernelReplayProgram";
import { LeanKernelGate, gateDir } from "../../lean-bridge/verify/leanKernelGate";
import { REPO } from "../helpers";
import { toolSkip } from "../toolSkip";

const skip = which("bwrap")
  ? false
  : "bubblewrap (bwrap) is not installed: apt-get install bubblewrap, or npm run test:setup";
toolSkip("the gate's sandbox attacks", skip);

const ATTACK_LAKE = join(REPO, "test", "fixtures", "attack-lake");
const IMPORT = join(".lake", "build", "lib", "lean", "Ws.olean");

const request = (documentText: string): GateRequest => ({
  documentText,
  declaration: ["N", "t"],
  mayBePrivate: false,
  headerEndLine: -1,
  declarationLine: 1,
});
/** A proof the kernel refuses (the scripted replay answers kernel-rejected for it). */
const HACK = "namespace N\ntheorem t : True := by\n  trivial -- fake:kernel-reject\nend N\n";
const HONEST = "namespace N\ntheorem t : True := by\n  trivial\nend N\n";

async function withGate(
  sandbox: boolean,
  body: (s: { root: string; gate: LeanKernelGate; target: ReturnType<typeof spawn> }) => Promise<void>,
): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "fim-gate-attack-"));
  mkdirSync(join(root, IMPORT, ".."), { recursive: true });
  writeFileSync(join(root, IMPORT), "compiled module\n");
  // The verifier's stand-in: the process the candidate kills to turn its refutation into a lost service.
  const target = spawn("sleep", ["60"], { stdio: "ignore" });
  writeFileSync(join(root, "attack-target.pid"), String(target.pid));
  const env = {
    ...process.env,
    PATH: `${ATTACK_LAKE}${delimiter}${dirname(process.execPath)}${delimiter}/usr/bin:/bin`,
  };
  const gate = new LeanKernelGate({
    projectRoot: root,
    limits: { memoryMb: 1024, cpuSeconds: 0, sandbox },
    env,
  });
  try {
    await body({ root, gate, target });
  } finally {
    target.kill("SIGKILL");
    rmSync(root, { recursive: true, force: true });
  }
}

function programOf(root: string): string {
  const name = readdirSync(gateDir(root)).find((f) => f.startsWith("FimRlvrKernelReplay"));
  assert.ok(name, "the replay program was written");
  return readFileSync(join(gateDir(root), name), "utf8");
}

test(
  "in the sandbox the compile's IO reaches nothing the judge reads: the refusal stands, the next check is unaffected",
  { skip },
  async () => {
    await withGate(true, async ({ root, gate, target }) => {
      for (let round = 1; round <= 2; round++) {
        const refuted = await gate.run(request(HACK), 30_000);
        assert.equal(refuted.kind, "kernel-rejected", `round ${round}: ${JSON.stringify(refuted)}`);
        assert.equal(programOf(root), KERNEL_REPLAY_PROGRAM, "the replay program is the verifier's own");
        assert.equal(
          readFileSync(join(root, IMPORT), "utf8"),
          "compiled module\n",
          "the import is untouched",
        );
        assert.equal(existsSync(join(root, "pwned")), false, "nothing was left in the project");
        assert.equal(target.exitCode, null, "the verifier's stand-in lives");
        assert.equal(target.signalCode, null);
        const honest = await gate.run(request(HONEST), 30_000);
        assert.equal(honest.kind, "replayed", `round ${round}, the next check: ${JSON.stringify(honest)}`);
        if (honest.kind === "replayed")
          assert.deepEqual(
            honest.axioms.map((a) => a.name),
            ["propext"],
          );
      }
    });
  },
);

test(
  "the control, without the sandbox: the same script switches the gate off (so the test above can fail)",
  { skip },
  async () => {
    await withGate(false, async ({ root, gate, target }) => {
      const first = await gate.run(request(HACK), 30_000);
      // The compile ran before the replay: the program it overwrote answers for the very proof it is checking.
      assert.equal(first.kind, "replayed", JSON.stringify(first));
      assert.match(programOf(root), /FIM-CHEAT/);
      assert.equal(readFileSync(join(root, IMPORT), "utf8"), "cheat : False");
      assert.equal(existsSync(join(root, "pwned")), true);
      await new Promise<void>((resolve) =>
        target.exitCode !== null || target.signalCode !== null
          ? resolve()
          : target.once("exit", () => resolve()),
      );
      assert.equal(target.signalCode, "SIGKILL");
    });
  },
);
