/**
 * Which Lean a project runs, and what that Lean does where its behaviour changed between releases. The
 * version comes from the project's `lean-toolchain` (elan runs exactly that toolchain for `lake serve`);
 * Lean's server does not say (its `serverInfo.version` is the protocol version, "0.3.0", in every release:
 * src/Lean/Server/Watchdog.lean), so the file decides. Each behaviour is one predicate answering
 * "yes" | "no" | "unknown"; every boundary below names the pull request and the first release that has it,
 * read from Lean's release notes (leanprover/reference-manual Manual/Releases/v4_*.lean) and sources.
 * Nightlies are judged by date: before the pull request's merge date "no", from the date of the first
 * release candidate that contains it "yes", in between (and for forks, `stable`, anything unparsed)
 * "unknown", which each caller settles on its own safe side and says so.
 */

export type LeanVersion =
  | { kind: "release"; major: number; minor: number; patch: number; rc?: number; text: string }
  | { kind: "nightly"; date: string; text: string }
  | { kind: "unknown"; text: string; reason: string };

export type Answer = "yes" | "no" | "unknown";

/** Origins whose version numbers mean Lean's releases (`leanprover/lean4-nightly` for nightlies). */
const OFFICIAL_ORIGINS = new Set(["", "leanprover/lean4", "leanprover/lean4-nightly", "lean4"]);

/** Reads a `lean-toolchain` file's text (or its absence). Never throws. */
export function parseToolchain(text: string | undefined): LeanVersion {
  const line = (text ?? "")
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "" && !l.startsWith("#"));
  if (line === undefined)
    return { kind: "unknown", text: "", reason: "the project has no lean-toolchain file" };
  const colon = line.lastIndexOf(":");
  const origin = colon >= 0 ? line.slice(0, colon) : "";
  const name = colon >= 0 ? line.slice(colon + 1) : line;
  if (!OFFICIAL_ORIGINS.has(origin))
    return {
      kind: "unknown",
      text: line,
      reason: `'${origin}' is not Lean's own release channel (a fork or a pull-request build), so its behaviour cannot be read from Lean's release history`,
    };
  const release = /^v?(\d+)\.(\d+)\.(\d+)(?:-rc(\d+))?$/.exec(name);
  if (release) {
    const [major, minor, patch, rc] = release.slice(1).map((s) => (s === undefined ? undefined : Number(s)));
    return {
      kind: "release",
      major: major!,
      minor: minor!,
      patch: patch!,
      ...(rc !== undefined ? { rc } : {}),
      text: line,
    };
  }
  const nightly = /^nightly-(\d{4}-\d{2}-\d{2})(?:-rev\d+)?$/.exec(name);
  if (nightly) return { kind: "nightly", date: nightly[1]!, text: line };
  if (name === "stable" || name === "nightly" || name === "beta")
    return {
      kind: "unknown",
      text: line,
      reason: `'${name}' is whatever elan last installed under that channel, not a fixed version; pin a release (e.g. leanprover/lean4:v4.30.0) to say which`,
    };
  return { kind: "unknown", text: line, reason: `'${line}' is not a Lean version this verifier can read` };
}

/**
 * A change in Lean's behaviour: the first release that has it, the date its pull request was merged (a
 * nightly before it cannot have it) and the date of that first release candidate (a nightly from then on
 * has it, since the release branch was cut from master on or before that day).
 */
interface Boundary {
  release: [number, number];
  merged: string;
  inReleaseFrom: string;
}

function since(version: LeanVersion, b: Boundary): Answer {
  switch (version.kind) {
    case "release": {
      const [major, minor] = b.release;
      if (version.major !== major) return version.major > major ? "yes" : "no";
      return version.minor >= minor ? "yes" : "no";
    }
    case "nightly":
      if (version.date < b.merged) return "no";
      return version.date >= b.inReleaseFrom ? "yes" : "unknown";
    case "unknown":
      return "unknown";
  }
}

/**
 * The module system and its `#print axioms` refusal (lean4#8174, merged 2025-04-30, first in v4.20.0):
 * before it, a `module` header does not parse at all. Nightlies are "yes" from the 4.20.0 release (2025-06-02).
 */
const MODULE_REFUSAL: Boundary = { release: [4, 20], merged: "2025-04-30", inReleaseFrom: "2025-06-02" };

/**
 * `#print axioms` answers in `module` files again (lean4#13117, "re-enables `#print axioms` under the
 * module system"; merged after lean4#13142 on 2026-03-27; listed in the v4.30.0 release notes; v4.30.0-rc1
 * is dated 2026-04-01).
 */
const MODULE_AXIOMS: Boundary = { release: [4, 30], merged: "2026-03-27", inReleaseFrom: "2026-04-01" };

/**
 * Native computation asserted by one axiom per computation, named `<decl>._native.<tactic>.ax_…`
 * (lean4#12217, merged 2026-02-03, v4.29.0 release notes; v4.29.0-rc1 is dated 2026-02-17).
 */
const NATIVE_AXIOMS: Boundary = { release: [4, 29], merged: "2026-02-03", inReleaseFrom: "2026-02-17" };

/**
 * `Lean.reduceBool`, `Lean.reduceNat` and the axiom `Lean.trustCompiler` removed (lean4#14953, merged
 * 2026-08-28, v4.35.0 release notes; v4.35.0-rc1 is dated 2026-09-15).
 */
const LEGACY_NATIVE_REMOVED: Boundary = {
  release: [4, 35],
  merged: "2026-08-28",
  inReleaseFrom: "2026-09-15",
};

/**
 * The option `linter.defProp` exists: lean4#13803 turned Batteries' `defLemma` environment linter into the
 * per-command `Lean.Linter.DefProp` (src/Lean/Linter/DefProp.lean, `register_builtin_option
 * linter.defProp`); v4.31.0 release notes, v4.31.0-rc1 dated 2026-05-28, the pull request opened
 * 2026-05-20 (its merge date was not found, so nightlies from that day until the release candidate are
 * "unknown"). Setting an option Lean does not know is an error, so only "yes" may set it.
 */
const DEF_PROP_OPTION: Boundary = { release: [4, 31], merged: "2026-05-20", inReleaseFrom: "2026-05-28" };

/**
 * The `defProp` linter on by default (lean4#13955, opened and reviewed 2026-06-04, "changelog-no", so not in
 * the release notes; Batteries' #1863 of 2026-06-19 says it is enabled by default; v4.32.0-rc1 is dated
 * 2026-06-17). The release is a range (4.32, possibly 4.33); used only by the simulator's warning.
 */
const DEF_PROP_DEFAULT_ON: Boundary = { release: [4, 32], merged: "2026-06-04", inReleaseFrom: "2026-06-17" };

/**
 * `isIncremental` in publishDiagnostics for clients that ask (lean4#13260, v4.31.0 release notes; not in
 * 4.30's, so merged after the v4.30 branch was cut, on or before 2026-04-01). The bridge handles both
 * forms; the simulator models the version.
 */
const INCREMENTAL_DIAGNOSTICS: Boundary = {
  release: [4, 31],
  merged: "2026-04-01",
  inReleaseFrom: "2026-05-28",
};

/**
 * The sorry warning prints the sorry term, "declaration uses `sorry`" (lean4#10034, v4.24.0 release notes);
 * before it "declaration uses 'sorry'" (src/Lean/AddDecl.lean at both). No version names the declaration.
 * Not in 4.23's notes, so merged after that branch was cut (taken as July 2025, before 4.22.0 of
 * 2025-08-14); every nightly from the 4.24.0 release (2025-10-14) has it.
 */
const SORRY_TERM_WARNING: Boundary = { release: [4, 24], merged: "2025-07-01", inReleaseFrom: "2025-10-14" };

/**
 * `#print axioms` prints axiom names with `MessageData.ofConstName`, which shortens them under `open`
 * (src/Lean/Elab/Print.lean). The earliest copy read that does so also has `@[instance_reducible]`
 * (lean4#12247, merged 2026-01-30, v4.29), so 4.29 is where it is certain; the change itself was not found
 * in any release notes and may be earlier (nightlies before 4.29's candidate are "unknown"). The verifier
 * sets `pp.fullNames` on every version, so only the simulator uses this.
 */
const AXIOM_NAMES_SHORTENED: Boundary = {
  release: [4, 29],
  merged: "0000-00-00",
  inReleaseFrom: "2026-02-17",
};

export interface LeanFeatures {
  version: LeanVersion;
  /** A `module` header parses (the module system exists). */
  moduleSystem: Answer;
  /** `#print axioms` answers in a file with a `module` header. */
  printAxiomsInModule: Answer;
  /** Native computation shows as `<decl>._native.<tactic>.ax_…` axioms. */
  nativeAxiomNames: Answer;
  /** `Lean.ofReduceBool` / `Lean.trustCompiler` no longer exist. */
  legacyNativeRemoved: Answer;
  /** `set_option linter.defProp …` is accepted. */
  defPropOption: Answer;
  /** The `defProp` linter warns without being asked. */
  defPropOnByDefault: Answer;
  incrementalDiagnostics: Answer;
  /** The sorry warning is "declaration uses `sorry`" (else "declaration uses 'sorry'"). */
  sorryTermWarning: Answer;
  /** Axiom names in `#print axioms` are shortened by `open` unless `pp.fullNames` is set. */
  axiomNamesShortened: Answer;
}

export function leanFeatures(version: LeanVersion): LeanFeatures {
  const moduleSystem = since(version, MODULE_REFUSAL);
  return {
    version,
    moduleSystem,
    printAxiomsInModule: moduleSystem === "no" ? "no" : since(version, MODULE_AXIOMS),
    nativeAxiomNames: since(version, NATIVE_AXIOMS),
    legacyNativeRemoved: since(version, LEGACY_NATIVE_REMOVED),
    defPropOption: since(version, DEF_PROP_OPTION),
    defPropOnByDefault: since(version, DEF_PROP_DEFAULT_ON),
    incrementalDiagnostics: since(version, INCREMENTAL_DIAGNOSTICS),
    sorryTermWarning: since(version, SORRY_TERM_WARNING),
    axiomNamesShortened: since(version, AXIOM_NAMES_SHORTENED),
  };
}

/** The features of the Lean a `lean-toolchain` text names. */
export function featuresOfToolchain(text: string | undefined): LeanFeatures {
  return leanFeatures(parseToolchain(text));
}

/** How to name the version in a message. */
export function describeVersion(version: LeanVersion): string {
  switch (version.kind) {
    case "release":
      return `Lean ${version.major}.${version.minor}.${version.patch}${version.rc !== undefined ? `-rc${version.rc}` : ""}`;
    case "nightly":
      return `Lean nightly-${version.date}`;
    case "unknown":
      return version.text ? `toolchain '${version.text}'` : "an unpinned toolchain";
  }
}

/**
 * Why holes in `module` files of this project cannot be offered as tasks, or undefined when they can: Lean
 * must be known to answer `#print axioms` there, or the dataset would hold tasks its verifier can only
 * reject.
 */
export function moduleFilesUncheckable(features: LeanFeatures): string | undefined {
  switch (features.printAxiomsInModule) {
    case "yes":
      return undefined;
    case "no":
      return `${describeVersion(features.version)} refuses \`#print axioms\` in files with a \`module\` header (Lean 4.20 to 4.29; lean4#13117 lifted it in 4.30), so no proof there can be axiom-checked: use Lean 4.30 or newer to verify them`;
    case "unknown":
      return `whether ${describeVersion(features.version)} answers \`#print axioms\` in files with a \`module\` header is not known${features.version.kind === "unknown" ? ` (${features.version.reason})` : ""}; pin a release in lean-toolchain`;
  }
}
