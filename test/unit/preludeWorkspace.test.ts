/**
 * The real-Lean example workspace (lean-env-prelude/): it is what its generator writes, its prelude is an exact
 * copy of lean-prelude/, the embedded Lean can judge every file (each starts with `prelude` and imports only the
 * workspace's modules), no family's name is in any file's text, and the reference proofs cover every
 * declaration. That every proof checks with Lean is the generator's own check (test/real-lean/preludeWorkspace).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { viewWorkspace } from "../../lean-bridge/embedded/workspace";
import { REPO } from "../helpers";

const WS = join(REPO, "lean-env-prelude");
const PRELUDE = join(REPO, "lean-prelude");

interface Reference {
  families: string[];
  declarations: Record<string, { family: string; file: string; proved_in_file: boolean; proof: string }>;
}
const reference = JSON.parse(readFileSync(join(WS, "reference-proofs.json"), "utf8")) as Reference;

function leanFilesUnder(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".lean"))
    .sort();
}

test("the workspace and its reference proofs are what lean-env-prelude/generate.py writes", () => {
  const out = mkdtempSync(join(tmpdir(), "fim-prelude-ws-"));
  try {
    const r = spawnSync("python3", [join(WS, "generate.py"), "--no-check"], {
      env: { ...process.env, FIM_PRELUDE_WS_OUT: out },
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    for (const f of ["FimWork.lean", "reference-proofs.json", "lakefile.toml"])
      assert.equal(readFileSync(join(out, f), "utf8"), readFileSync(join(WS, f), "utf8"), f);
    assert.deepEqual(leanFilesUnder(join(WS, "FimWork")), leanFilesUnder(join(out, "FimWork")));
    for (const f of leanFilesUnder(join(out, "FimWork")))
      assert.equal(
        readFileSync(join(out, "FimWork", f), "utf8"),
        readFileSync(join(WS, "FimWork", f), "utf8"),
        f,
      );
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test("the workspace's FimPrelude is an exact copy of lean-prelude/ (one library, not two)", () => {
  assert.equal(
    readFileSync(join(WS, "FimPrelude.lean"), "utf8"),
    readFileSync(join(PRELUDE, "FimPrelude.lean"), "utf8"),
  );
  const ours = leanFilesUnder(join(WS, "FimPrelude"));
  assert.deepEqual(ours, leanFilesUnder(join(PRELUDE, "FimPrelude")));
  for (const f of ours)
    assert.equal(
      readFileSync(join(WS, "FimPrelude", f), "utf8"),
      readFileSync(join(PRELUDE, "FimPrelude", f), "utf8"),
      `FimPrelude/${f} differs from lean-prelude/: run python3 lean-env-prelude/generate.py`,
    );
});

test("the embedded Lean can judge every file of the workspace", () => {
  const view = viewWorkspace(WS);
  assert.equal(view.workspaceRefusal, undefined);
  assert.deepEqual([...view.refused.keys()], []);
  const names = view.modules.map((m) => m.name);
  assert.ok(names.includes("FimPrelude.Core") && names.includes("FimWork.Defs"), names.join(" "));
  assert.equal(names.filter((n) => n.startsWith("FimWork.")).length, reference.families.length + 1);
});

test("no family's name occurs in the text of any file a prompt is cut from", () => {
  const texts = leanFilesUnder(join(WS, "FimWork")).map((f) => readFileSync(join(WS, "FimWork", f), "utf8"));
  for (const family of reference.families)
    for (const text of texts) assert.ok(!text.includes(family), `${family} is written in a file`);
});

test("families × instances, about a fifth proved, every declaration with a reference proof", () => {
  const decls = Object.entries(reference.declarations);
  assert.ok(reference.families.length >= 15, `${reference.families.length} families`);
  assert.ok(decls.length >= 600, `${decls.length} declarations`);
  const proved = decls.filter(([, d]) => d.proved_in_file).length;
  assert.ok(proved > 0.15 * decls.length && proved < 0.3 * decls.length, `${proved} of ${decls.length}`);
  // Each declaration is in its file once, with `sorry` exactly where the reference says it is open.
  for (const [name, d] of decls) {
    const text = readFileSync(join(WS, d.file), "utf8");
    const short = name.replace(/^FimWork\./, "");
    const at = text.indexOf(`theorem ${short} `);
    assert.ok(at >= 0, name);
    const body = text.slice(
      at,
      text.indexOf("\ntheorem ", at + 1) === -1 ? undefined : text.indexOf("\ntheorem ", at + 1),
    );
    assert.equal(body.includes("sorry"), !d.proved_in_file, name);
    if (d.proved_in_file) assert.ok(body.includes(d.proof), name);
  }
});
