/**
 * Which Lean the simulator plays: the project's `lean-toolchain`, read the way elan picks the toolchain for
 * `lake serve`, with the behaviours of that version from verify/toolchain.ts (the same boundaries the
 * verifier relies on). A toolchain whose version cannot be read is played as the newest behaviour known:
 * every "unknown" answer taken as "yes".
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { featuresOfToolchain, type Answer, type LeanFeatures } from "../verify/toolchain";

export type SimulatedLean = { [K in Exclude<keyof LeanFeatures, "version">]: boolean } & {
  version: LeanFeatures["version"];
};

function played(answer: Answer): boolean {
  return answer !== "no";
}

export function simulatedLean(toolchain: string | undefined): SimulatedLean {
  const f = featuresOfToolchain(toolchain);
  return {
    version: f.version,
    moduleSystem: played(f.moduleSystem),
    printAxiomsInModule: played(f.printAxiomsInModule),
    nativeAxiomNames: played(f.nativeAxiomNames),
    legacyNativeRemoved: played(f.legacyNativeRemoved),
    defPropOption: played(f.defPropOption),
    defPropOnByDefault: played(f.defPropOnByDefault),
    incrementalDiagnostics: played(f.incrementalDiagnostics),
    sorryTermWarning: played(f.sorryTermWarning),
    axiomNamesShortened: played(f.axiomNamesShortened),
  };
}

/** The toolchain of the project the simulator serves (its working directory). */
export function projectToolchain(cwd: string): string | undefined {
  try {
    return readFileSync(join(cwd, "lean-toolchain"), "utf8");
  } catch {
    return undefined;
  }
}

/** src/Lean/AddDecl.lean: the sorry term since 4.24 (lean4#10034), quoted before; never the declaration's name. */
export function sorryWarningText(lean: SimulatedLean): string {
  return lean.sorryTermWarning ? "declaration uses `sorry`" : "declaration uses 'sorry'";
}

/** src/Lean/Elab/Print.lean (4.20 to 4.29), word for word. */
export const MODULE_AXIOMS_REFUSAL =
  "cannot use `#print axioms` in a `module`; consider temporarily removing the `module` header or placing the command in a separate file";

/** src/Lean/Linter/DefProp.lean. */
export function defPropWarning(declName: string): string {
  return `Definition \`${declName}\` is a proposition; use \`theorem\` instead of \`def\``;
}

/** src/Lean/Server/FileWorker.lean, `handleStaleDependency`. */
export const STALE_IMPORTS_INFO =
  'Imports are out of date and should be rebuilt; use the "Restart File" command in your editor.';

/** src/Lean/Server/FileWorker.lean, `setupImports` with `.importsOutOfDate`. */
export const IMPORTS_MUST_REBUILD =
  'Imports are out of date and must be rebuilt; use the "Restart File" command in your editor.';
