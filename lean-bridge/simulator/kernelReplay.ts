/**
 * The simulator's model of the kernel gate (verify/kernelGate.ts; real Lean: verify/leanKernelGate.ts): the
 * check document compiled afresh (its header loaded, every declaration elaborated, with the simulator's judge
 * and costs), then the checked declaration and the document's declarations it depends on replayed (the header
 * loaded again, each declaration re-checked at a tenth of its elaboration's cost: SIM_KERNEL_SHARE, a modelled
 * figure, not a measured one). What the kernel would refuse, the model knows from the text, since it cannot
 * type-check: a declaration added without the kernel (under `debug.skipKernelTC`, the option Lean's `addDecl`
 * reads before it sends a declaration to the kernel, src/Lean/AddDecl.lean; or through
 * `addDeclWithoutChecking`), which the model takes to be one the kernel refuses (the worst case: it cannot
 * tell a well-typed one from `cheat : False := True.intro`). A declaration a metaprogram adds (`addDecl` with a
 * name literal) is a declaration of the document like any other. Axioms: those the simulator's `#print
 * axioms` gives the checked declaration (the oracle's, native computations'), the document's own `axiom`s and
 * metaprogram-added axioms (`axiomDecl`) it cites, which its `#print axioms` omits as a hacked answer would.
 * It names itself a simulator in every message it makes up.
 */
import { parseFile, type Command, type ParsedFile } from "../lean/commands";
import { TokenKind, isCommentKind, tokenText } from "../lean/tokens";
import { LineIndex, normalizeLineEndings } from "../text/positions";
import type { GateAxiom, GateReport, GateRequest, GateStage, KernelGateBackend } from "../verify/kernelGate";
import { parseAxiomsOutput } from "../verify/classify";
import { nameParts } from "../verify/policyWords";
import type { JudgeContext, JudgedDeclaration } from "./judge";
import { simulatedLean, projectToolchain, type SimulatedLean } from "./leanVersion";
import { ReferenceIndex, type OracleFile } from "./reference";
import { elaborate, planReuse, type SimDocument } from "./snapshots";
import { headerFailure } from "./workspaceView";

/** The kernel's re-check of a declaration, as a share of its elaboration's time (modelled). */
export const SIM_KERNEL_SHARE = 0.1;

/** Words by which a declaration enters the environment without the kernel's check. */
const UNCHECKED_WORDS = ["skipKernelTC", "addDeclWithoutChecking"];
/** Words by which a metaprogram adds declarations of its own. */
const ADDING_WORDS = ["addDecl", "addDeclCore", "addAndCompile", "addDeclWithoutChecking"];

export interface SimulatedGateOptions {
  cwd: string;
  oracle?: OracleFile;
  /** Loading the header, ms (the simulator's `--header-ms`); the gate pays it twice. */
  headerMs?: number;
  /** Elaborating one declaration, ms (`--decl-ms`). */
  declMs?: number;
  /** The `lean-toolchain` text whose Lean is played (default: the project's). */
  toolchain?: string;
  /** Honour `sim:gate-hang` and `sim:gate-crash` markers (tests only). */
  faults?: boolean;
  /**
   * How Lean reads the document where it differs from the project's lexer (tests only, as the lean-like
   * server's option of the same name): the gate's processes read the document as Lean does, not as the policy did.
   */
  leanReads?: (text: string) => string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A declaration of the document as the replay sees it. */
interface DocDeclaration {
  /** Its names (full and short); none for a metaprogram's declaration whose name the model cannot read. */
  names: string[];
  /** An axiom: an `axiom` command, or an `axiomDecl` a metaprogram adds. */
  axiom: boolean;
  /** Added by a metaprogram (`addDecl` and kin), not by a declaration command. */
  metaprogram: boolean;
  command: Command;
  /** Code words the command uses (comments left out; a string's text included: its braces may hold code). */
  words: Set<string>;
  text: string;
}

function wordsOf(file: ParsedFile, command: Command): { words: Set<string>; text: string } {
  const ts = file.tokens;
  const words = new Set<string>();
  let text = "";
  for (let i = command.firstToken; i <= command.lastToken; i++) {
    const kind = ts.kinds[i] ?? 0;
    if (isCommentKind(kind)) continue;
    const t = tokenText(ts, i);
    text += ` ${t}`;
    if (kind === TokenKind.String)
      for (const w of t.match(/[\p{L}_][\p{L}\p{N}_.'!?]*/gu) ?? []) add(words, w);
    else add(words, t);
  }
  return { words, text };
}

/** A word and every dotted suffix and prefix of it (`cheat.elim` cites `cheat`; `N.x` cites `x`). */
function add(words: Set<string>, word: string): void {
  const bare = word.replace(/^[`@]+/, "");
  const parts = bare.split(".");
  for (let a = 0; a < parts.length; a++)
    for (let b = a + 1; b <= parts.length; b++) words.add(parts.slice(a, b).join("."));
}

/** `A.B.c`, `B.c` and `c`: the ways a name can be written inside its namespaces. */
function suffixes(name: string): string[] {
  const parts = name.split(".");
  return parts.map((_, k) => parts.slice(k).join("."));
}

/**
 * What a metaprogram in this text adds: the name literals of a command that calls `addDecl` and kin, each an
 * axiom when the declaration it names is an `axiomDecl`; one unnamed entry when it adds but no name can be read.
 */
function addedDeclarations(text: string): { name: string | undefined; axiom: boolean }[] {
  if (!ADDING_WORDS.some((w) => text.includes(w))) return [];
  const found = [...text.matchAll(/name\s*:=\s*`+\s*([\p{L}_][\p{L}\p{N}_.']*)/gu)].map((m) => {
    const kinds = [...text.slice(0, m.index).matchAll(/\b(\w+Decl)\b/g)];
    return { name: m[1], axiom: kinds.at(-1)?.[1] === "axiomDecl" };
  });
  return found.length > 0 ? found : [{ name: undefined, axiom: text.includes("axiomDecl") }];
}

export class SimulatedKernelGate implements KernelGateBackend {
  readonly name = "kernel-replay" as const;
  private readonly reference: ReferenceIndex;
  private readonly lean: SimulatedLean;
  /** Work done, for tests and benchmarks. */
  readonly stats = { runs: 0, elaborated: 0, replayed: 0, headerLoads: 0 };

  constructor(private readonly options: SimulatedGateOptions) {
    this.reference = new ReferenceIndex(options.cwd, options.oracle ?? {});
    this.lean = simulatedLean(options.toolchain ?? projectToolchain(options.cwd));
  }

  async run(request: GateRequest, timeoutMs: number): Promise<GateReport> {
    this.stats.runs++;
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
    const text = normalizeLineEndings((this.options.leanReads ?? ((t: string) => t))(request.documentText));
    const file = parseFile(text);
    const declarations = file.commands.filter((c) => c.declaration).length;
    const headerMs = this.options.headerMs ?? 0;
    const declMs = this.options.declMs ?? 0;
    // Time runs out where the modelled work passes the limit.
    let spent = 0;
    const spend = async (ms: number, stage: GateStage): Promise<GateReport | undefined> => {
      if (spent + ms > timeoutMs) {
        await sleep(Math.max(0, timeoutMs - spent));
        return { kind: "timeout", stage, timeoutMs, elapsedMs: elapsed() };
      }
      spent += ms;
      if (ms > 0) await sleep(ms);
      return undefined;
    };
    if (this.options.faults && text.includes("sim:gate-hang"))
      return (await spend(Number.POSITIVE_INFINITY, "compile"))!;
    // Compiling: the header, then every declaration of the document, fresh.
    this.stats.headerLoads++;
    const compiling = await spend(headerMs + declMs * declarations, "compile");
    if (compiling) return compiling;
    const index = new LineIndex(text);
    const header = headerFailure({ text, file }, index, this.options.cwd, this.options.faults === true);
    if (header)
      return {
        kind: "compile-failed",
        message: `simulator: ${header.message}`,
        inHeader: true,
        elapsedMs: elapsed(),
      };
    const compiled = await this.compile(text, file, index);
    this.stats.elaborated += declarations;
    const wanted = request.declaration.join(".");
    const same = (name: string | undefined) =>
      name !== undefined && nameParts(name).join("\u0000") === request.declaration.join("\u0000");
    const checked = file.commands.find((c) => same(c.declaration?.fullName));
    if (!checked)
      return {
        kind: "missing",
        message: `simulator: the compiled module holds no declaration '${wanted}'`,
        elapsedMs: elapsed(),
      };
    const isError = (d: { severity?: number }) => (d.severity ?? 1) === 1;
    // Lean writes no .olean for a file with errors: failing commands above are blanked and the document compiled
    // again (verify/gateDocument.ts), a second compile's cost.
    if (
      compiled.diagnostics.some((d) => isError(d) && d.start >= file.headerEnd && d.start < checked.start)
    ) {
      const again = await spend(headerMs + declMs * declarations, "compile");
      if (again) return again;
    }
    const errors = compiled.diagnostics.filter(
      (d) => isError(d) && d.start >= checked.start && d.start < checked.end,
    );
    if (errors.length > 0)
      return {
        kind: "compile-failed",
        message: `simulator: ${errors[0]!.message.split("\n")[0]}`,
        inHeader: false,
        elapsedMs: elapsed(),
      };
    if (this.options.faults && text.includes("sim:gate-crash"))
      return {
        kind: "crashed",
        stage: "replay",
        message: "simulator: the replay process died (sim:gate-crash)",
        elapsedMs: elapsed(),
      };
    // Replaying: the header again, then the closure through the kernel.
    const closure = this.closure(file, checked);
    this.stats.headerLoads++;
    this.stats.replayed += closure.length;
    const replaying = await spend(headerMs + declMs * SIM_KERNEL_SHARE * closure.length, "replay");
    if (replaying) return replaying;
    const fullName = checked.declaration?.fullName ?? wanted;
    const printed = checked.declaration?.modifiers.includes("private")
      ? `_private.FimRlvrGate.0.${fullName}`
      : fullName;
    const unchecked = closure.find((d) => this.addedWithoutKernel(file, d));
    if (unchecked)
      return {
        kind: "kernel-rejected",
        declaration: printed,
        message: `(kernel) simulator: '${unchecked.names[0] ?? "a declaration a metaprogram added"}' was added without the kernel (debug.skipKernelTC or addDeclWithoutChecking); the simulator cannot type-check, so it takes such a declaration to be one the kernel refuses`,
        elapsedMs: elapsed(),
      };
    return {
      kind: "replayed",
      declaration: printed,
      replayed: closure.length,
      axioms: this.axioms(compiled.printedAxioms, closure),
      elapsedMs: elapsed(),
    };
  }

  /**
   * Whether the kernel never saw this declaration: one whose command (its `set_option … in` prefix included)
   * switches the kernel off, or that follows a `set_option debug.skipKernelTC true` of the file; for one a
   * metaprogram added, the option anywhere in the document (the metaprogram may run where the option is set,
   * in another command than the one that defines it).
   */
  private addedWithoutKernel(file: ParsedFile, d: DocDeclaration): boolean {
    const says = (text: string) => UNCHECKED_WORDS.some((w) => text.includes(w));
    if (says(d.text)) return true;
    const textOf = (c: Command) => wordsOf(file, c).text;
    if (d.metaprogram) return file.commands.some((c) => says(textOf(c)));
    // `set_option NAME VALUE` alone sets it for the rest of the file; `… in CMD` only for CMD.
    const fileWide = (c: Command) =>
      c.keyword === "set_option" && !c.declaration && !/\sin(\s|$)/.test(textOf(c));
    return file.commands.some((c) => c.start < d.command.start && fileWide(c) && says(textOf(c)));
  }

  /** The simulator's elaboration of the whole document, fresh: its diagnostics and its `#print axioms` answer. */
  private async compile(
    text: string,
    file: ParsedFile,
    index: LineIndex,
  ): Promise<{
    diagnostics: { start: number; severity?: number; message: string }[];
    printedAxioms: string[];
  }> {
    const doc: SimDocument = {
      uri: "file:///FimRlvrGate.lean",
      version: 1,
      text,
      file,
      doneVersion: -1,
      results: [],
      crashed: false,
      workerStarted: true,
      generation: 0,
      waiters: [],
    };
    this.reference.refresh();
    const ctx: JudgeContext = {
      file,
      index,
      reference: this.reference,
      judged: new Map<string, JudgedDeclaration>(),
      recorded: [],
      moduleName: "FimRlvrGate",
      lean: this.lean,
    };
    const results =
      (await elaborate(doc, planReuse(doc, 0), ctx, {
        declMs: 0,
        stale: () => false,
        onElaborate: () => {},
      })) ?? [];
    const diagnostics = results.flatMap((r) =>
      r.diagnostics.map((d) => ({
        start: index.offsetAt(d.range.start),
        severity: d.severity,
        message: d.message,
      })),
    );
    const printed = diagnostics.map((d) => parseAxiomsOutput(d.message)).find((o) => o !== undefined);
    return { diagnostics, printedAxioms: printed?.axioms ?? [] };
  }

  /** The checked declaration and the document's declarations it cites, transitively (metaprogram-added ones too). */
  private closure(file: ParsedFile, checked: Command): DocDeclaration[] {
    const all: DocDeclaration[] = [];
    for (const command of file.commands) {
      const { words, text } = wordsOf(file, command);
      const d = command.declaration;
      const own = d ? [d.fullName, d.name].filter((n): n is string => n !== undefined) : [];
      if (own.length > 0)
        all.push({ names: own, axiom: d?.keyword === "axiom", metaprogram: false, command, words, text });
      // What a metaprogram of this command adds is declared by the document too, in this command's context.
      for (const added of addedDeclarations(text))
        all.push({
          names: added.name ? [added.name] : [],
          axiom: added.axiom,
          metaprogram: true,
          command,
          words: new Set(),
          text,
        });
    }
    const start = all.find(
      (d) => d.command === checked && d.names.includes(checked.declaration?.fullName ?? ""),
    );
    if (!start) return [];
    const seen = new Set<DocDeclaration>([start]);
    const queue = [start];
    while (queue.length > 0) {
      const at = queue.shift()!;
      for (const other of all) {
        if (seen.has(other)) continue;
        // Cited by any dotted suffix of its name: the simulator resolves no namespaces, so it errs toward citing.
        const cited = other.names.some((n) => suffixes(n).some((x) => at.words.has(x)));
        // A metaprogram's declaration whose name the model could not read: the worst case, cited.
        const unnamed = other.command === at.command && other.names.length === 0;
        if (cited || unnamed) {
          seen.add(other);
          queue.push(other);
        }
      }
    }
    return [...seen];
  }

  /** The axioms the checked declaration rests on, as the replay reports them. */
  private axioms(printed: string[], closure: DocDeclaration[]): GateAxiom[] {
    const out = new Map<string, GateAxiom>();
    for (const name of printed)
      out.set(name, {
        name,
        // From 4.29 `nativeEqTrue` declares a native computation's axiom in the document itself.
        declaredInDocument: /\._native\./.test(name),
        nativeShape: /\._native\./.test(name),
      });
    for (const d of closure)
      if (d.axiom) {
        const name = d.names[0] ?? "(an axiom a metaprogram added, simulator: name not read)";
        out.set(name, { name, declaredInDocument: true, nativeShape: false });
      }
    return [...out.values()];
  }
}
