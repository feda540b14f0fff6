/**
 * `--verifier kimina:URL` through the bundled CLI against the stub (stub.ts, not Lean): `import` runs its
 * sorry pre-check through Kimina, `verify-batch` scores candidates on the imported dataset, `serve` answers a
 * client from Kimina's verdicts, and `train theorems.jsonl --project --algorithm dapo` runs end to end with
 * every check going to the stub (that last one needs trainer/.venv; see test/toolSkip.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerifierClient } from "../../lean-bridge/serve/client";
import { servedAddress, startServe } from "../serve/serveProcess";
import { runCli } from "../helpers";
import { toolSkip } from "../toolSkip";
import {
  CLI,
  ENV,
  assertStatementRun,
  lines,
  missing,
  statementProject,
  trainOnStatements,
} from "../statements/statementRun";
import { startStub, type Stub } from "./stub";
import { answer } from "./theoremsAnswer";

async function withStub(body: (stub: Stub) => Promise<void>): Promise<void> {
  const stub = await startStub({ answer });
  try {
    await body(stub);
  } finally {
    await stub.close();
  }
}

interface Task {
  id: string;
  decl: string;
  kind: string;
}

test("import, verify-batch and serve with --verifier kimina:URL (stub)", { timeout: 120_000 }, () =>
  withStub(async (stub) => {
    const { dir, theorems } = statementProject();
    const dataset = join(dir, "ds");
    const kimina = `kimina:${stub.url}`;
    // No Lean here to run the kernel gate on: Kimina starts only with the gate off, said explicitly.
    const refused = await runCli(
      CLI,
      ["import", theorems, "--project", dir, "--out", dataset, "--verifier", kimina],
      ENV,
    );
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /no kernel gate here[\s\S]*--kernel-gate off/);
    const off = ["--kernel-gate", "off"];
    const imported = await runCli(
      CLI,
      ["import", theorems, "--project", dir, "--out", dataset, "--verifier", kimina, ...off],
      ENV,
    );
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stderr, /Kimina Lean Server/);
    assert.match(imported.stderr, /4 statements kept/);
    assert.ok(stub.requests.length > 0, "the pre-check went to Kimina");

    const proofs = lines<Task>(join(dataset, "tasks.jsonl")).filter((t) => t.kind === "proof");
    const trueIntro = proofs.find((t) => t.decl.endsWith(".true_intro"))!;
    const addZero = proofs.find((t) => t.decl.endsWith(".add_zero'"))!;
    const candidates = join(dir, "candidates.jsonl");
    writeFileSync(
      candidates,
      [
        { id: trueIntro.id, candidate: "trivial" },
        { id: addZero.id, candidate: "simp" },
        { id: addZero.id, candidate: "sorry" },
      ]
        .map((l) => JSON.stringify(l))
        .join("\n") + "\n",
    );
    const verdictsPath = join(dir, "verdicts.jsonl");
    const batch = await runCli(
      CLI,
      [
        "verify-batch",
        "--project",
        dir,
        "--input",
        dataset,
        "--candidates",
        candidates,
        "--out",
        verdictsPath,
        "--verifier",
        kimina,
        ...off,
      ],
      ENV,
    );
    assert.equal(batch.code, 0, batch.stderr);
    const verdicts = lines<{ verdict: { kind: string; verifierKind: string; verifier: string } }>(
      verdictsPath,
    );
    assert.deepEqual(
      verdicts.map((v) => v.verdict.kind),
      // Kimina's messages carry no Lean tags, so "unsolved goals" cannot be confirmed as the hole's own: the
      // verifier fails closed (failed, not incomplete) and Kimina never earns partial credit.
      ["proved", "failed", "rejected"],
      JSON.stringify(verdicts),
    );
    for (const v of verdicts) {
      assert.equal(v.verdict.verifierKind, "kimina");
      assert.match(v.verdict.verifier, /^Kimina Lean Server \(/);
    }

    const serve = await startServe(
      ["--project", dir, "--dataset", dataset, "--port", "0", "--verifier", kimina, ...off],
      ENV,
    );
    try {
      for (const line of serve.lines) assert.doesNotMatch(line, /\(not Lean\)|simulator/);
      const token = serve.lines.map((l) => /token[: ]+([A-Za-z0-9_-]{16,})/.exec(l)?.[1]).find(Boolean);
      assert.ok(serve.printedAddress, "serve printed its address");
      const client = new VerifierClient([servedAddress(serve.printedAddress)], token ? { token } : {});
      try {
        const result = await client.verifyBatch([
          { taskId: trueIntro.id, candidate: "trivial" },
          { taskId: addZero.id, candidate: "decide" },
        ]);
        assert.equal(result.kind, "ok", JSON.stringify(result));
        if (result.kind === "ok")
          assert.deepEqual(
            result.verdicts.map((v) => [v.kind, v.verifier.kind]),
            [
              ["proved", "kimina"],
              ["failed", "kimina"],
            ],
          );
      } finally {
        client.close();
      }
      serve.child.kill("SIGINT");
      assert.equal(await serve.exited, 130);
    } finally {
      serve.child.kill("SIGKILL");
    }
  }),
);

toolSkip("train with --verifier kimina:URL", missing);

test(
  "train theorems.jsonl --project --algorithm dapo --verifier kimina:URL: every check goes to the stub",
  { skip: missing ?? false, timeout: 300_000 },
  () =>
    withStub(async (stub) => {
      const r = await trainOnStatements(["--verifier", `kimina:${stub.url}`, "--kernel-gate", "off"]);
      assert.doesNotMatch(r.stderr, /SIMULATOR/);
      assertStatementRun(r.runDir, r.project, "kimina");
      const sampled = lines<{ verdict: string }>(join(r.runDir, "samples.jsonl")).length;
      assert.ok(
        stub.requests.reduce((n, q) => n + q.ids.length, 0) >= 4 + 1,
        `pre-check and ${sampled} samples`,
      );
    }),
);
