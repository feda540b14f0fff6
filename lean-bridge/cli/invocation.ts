/**
 * How to run this CLI again, as a command a user can paste from the current directory: `fim-rlvr` when that name
 * on PATH is this very program (after `npm link`, or inside `npx`), else `node <path to dist/cli.js>`, the way
 * the README's quick start runs it. Hints that print a command to copy (the resume line) start with this.
 */
import { realpathSync } from "node:fs";
import { isAbsolute, relative } from "node:path";
import { which } from "../server/launch";

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

export function invocation(script = process.argv[1], env: NodeJS.ProcessEnv = process.env): string {
  const onPath = which("fim-rlvr", env);
  if (script && onPath && real(onPath) === real(script)) return "fim-rlvr";
  if (!script) return "fim-rlvr";
  const shown = relative(process.cwd(), script);
  return `node ${shellQuote(shown.startsWith("..") || isAbsolute(shown) ? script : shown)}`;
}

/** A word as a POSIX shell reads it back: quoted only when it must be. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'"'"'`)}'`;
}
