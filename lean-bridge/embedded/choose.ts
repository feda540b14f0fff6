/**
 * Whether a verifier runs on the embedded Lean, and everything it needs when it does: the choice (`auto`: only
 * where no `lake` is on PATH and the embedded Lean can judge every file of the workspace, so users with elan
 * keep their toolchain; `embedded`: on request, refusing just the files it cannot judge; `toolchain`: never),
 * then the build of the workspace's modules and the server's launch. The verifier's composition root calls
 * `decideEmbedded` and `startEmbedded`; nothing here knows about verdicts.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { which, type Limits } from "../server/launch";
import type { LaunchSpec } from "../server/leanServer";
import { buildWorkspace, type BuildReport, buildIdentity } from "./build";
import {
  EMBEDDED_LEAN_RELEASE,
  INSTALL_EMBEDDED_LEAN,
  embeddedLabel,
  embeddedLeanVersion,
  locateEmbeddedLean,
} from "./install";
import { embeddedServerLaunch } from "./launch";
import { firstRefusal, viewWorkspace, type Refusal, type WorkspaceView } from "./workspace";

/** Which Lean a command asks for (`--lean`). */
export type LeanRequest = "auto" | "embedded" | "toolchain";

export const LEAN_REQUESTS: readonly LeanRequest[] = ["auto", "embedded", "toolchain"];

export type EmbeddedDecision =
  | { kind: "use"; lean: string; view: WorkspaceView }
  | { kind: "not-used"; reason: string }
  | { kind: "error"; message: string };

/** Decides without running Lean (the CLI asks before it starts anything, to know whether to fall back). */
export function decideEmbedded(
  root: string,
  request: LeanRequest,
  env: NodeJS.ProcessEnv = process.env,
): EmbeddedDecision {
  if (request === "toolchain") return { kind: "not-used", reason: "--lean toolchain asks for lake" };
  if (request === "auto" && which("lake", env))
    return { kind: "not-used", reason: "lake is on PATH: the project's own toolchain checks it" };
  const located = locateEmbeddedLean(env);
  if (located.kind === "missing")
    return request === "embedded"
      ? { kind: "error", message: `--lean embedded: ${located.reason}` }
      : { kind: "not-used", reason: located.reason };
  const view = viewWorkspace(root);
  if (request === "embedded") return { kind: "use", lean: located.lean, view };
  const refused = firstRefusal(view);
  if (refused)
    return {
      kind: "not-used",
      reason: `the embedded Lean cannot judge this workspace: ${refused.refusal.reason}`,
    };
  if (view.modules.length === 0)
    return { kind: "not-used", reason: "the workspace has no Lean files for the embedded Lean to judge" };
  return { kind: "use", lean: located.lean, view };
}

export interface EmbeddedStart {
  kind: "ready";
  launch: LaunchSpec;
  /** The `lean` binary the server runs, which also compiles the check documents' prefixes. */
  lean: string;
  /** `lean --version`'s whole answer: what a compiled module depends on besides its text. */
  versionText: string;
  /** The workspace build's identity (build.ts `buildIdentity`): what a module compiled on top of it depends on. */
  buildIdentity: string;
  /** What must be said before the verifier goes on (the sandbox asked for, and bubblewrap missing). */
  warning?: string;
  /** "4.35.0", from `lean --version`. */
  release: string;
  /** The name verdicts and reports show. */
  label: string;
  /** The toolchain whose behaviours apply (verify/toolchain.ts). */
  toolchain: string;
  /** Why a file (relative to the root) cannot be judged, or undefined when it can. */
  refuse: (file: string) => Refusal | undefined;
  build: BuildReport;
}

/** Time one module's build may take (a workspace's own prelude modules build in well under a second). */
const MODULE_BUILD_TIMEOUT_MS = 300_000;

/**
 * Lean's `-M` for building the workspace's own modules. The checks' limit is for candidates; the workspace is
 * the user's own code, and Lean counts its 230 MB runtime against `-M`, so a small check limit (a test's, a
 * crowded machine's) must not make the workspace itself fail to build.
 */
const MIN_BUILD_MEMORY_MB = 4096;

function launchOf(started: { spec: LaunchSpec; warning?: string }): { launch: LaunchSpec; warning?: string } {
  return { launch: started.spec, ...(started.warning ? { warning: started.warning } : {}) };
}

/** Checks the binary, builds the workspace's modules, and describes the server to start. */
export async function startEmbedded(
  root: string,
  decision: Extract<EmbeddedDecision, { kind: "use" }>,
  limits: Limits,
  env: NodeJS.ProcessEnv = process.env,
): Promise<EmbeddedStart | { kind: "error"; message: string; hint: string }> {
  const version = await embeddedLeanVersion(decision.lean);
  if (version.kind === "error")
    return { kind: "error", message: version.reason, hint: `Reinstall it: ${INSTALL_EMBEDDED_LEAN}` };
  if (version.release !== EMBEDDED_LEAN_RELEASE)
    return {
      kind: "error",
      message: `${decision.lean} is Lean ${version.release}, not the embedded ${EMBEDDED_LEAN_RELEASE} this verifier is built for`,
      hint: `Point FIM_EMBEDDED_LEAN at the embedded Lean, or install it: ${INSTALL_EMBEDDED_LEAN}`,
    };
  const build = await buildWorkspace(root, decision.view.modules, {
    lean: decision.lean,
    versionText: version.text,
    memoryMb: Math.max(limits.memoryMb, MIN_BUILD_MEMORY_MB),
    timeoutMs: MODULE_BUILD_TIMEOUT_MS,
  });
  const { view } = decision;
  const moduleOf = new Map(view.modules.map((m) => [m.file, m]));
  const refuse = (file: string): Refusal | undefined => {
    const rel = isAbsolute(file) ? relative(root, file) : relative(root, resolve(root, file));
    const key = rel.split(sep).join("/");
    const refused = view.refused.get(key);
    if (refused) return refused;
    const module = moduleOf.get(key);
    if (!module) return undefined;
    // The file itself may fail to build below its holes; what it imports must have built for any check.
    for (const imported of module.imports) {
      const result = build.results.get(imported);
      if (result?.kind === "failed")
        return {
          reason: `${key} imports ${imported}, which does not build with the embedded Lean: ${result.message}`,
          action: `fix ${imported.split(".").join("/")}.lean so that it compiles, then start the verifier again`,
        };
    }
    return undefined;
  };
  return {
    kind: "ready",
    lean: decision.lean,
    versionText: version.text,
    buildIdentity: buildIdentity(root, decision.view.modules),
    ...launchOf(embeddedServerLaunch(decision.lean, root, limits, env)),
    release: version.release,
    label: embeddedLabel(version.release),
    toolchain: `leanprover/lean4:v${version.release}`,
    refuse,
    build,
  };
}

/** Decides and, when the embedded Lean is used, starts it: what the verifier's composition root calls. */
export async function prepareEmbedded(
  root: string,
  request: LeanRequest,
  limits: Limits,
  env: NodeJS.ProcessEnv = process.env,
): Promise<
  EmbeddedStart | { kind: "not-used"; reason: string } | { kind: "error"; message: string; hint: string }
> {
  const decision = decideEmbedded(root, request, env);
  if (decision.kind === "error") return { ...decision, hint: `Install it: ${INSTALL_EMBEDDED_LEAN}` };
  if (decision.kind === "not-used") return decision;
  return startEmbedded(root, decision, limits, env);
}
