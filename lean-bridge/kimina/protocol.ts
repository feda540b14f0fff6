/**
 * The Kimina Lean Server's HTTP API, as its sources define it (project-numina/kimina-lean-server:
 * server/routers/check.py, server/routers/backward.py, client/kimina_client/models.py, server/auth.py):
 *
 * - `POST /api/check` {snippets: [{id, code}], timeout (s), debug, reuse, infotree} →
 *   {results: [{id, time, error?, response?: {env, messages?, sorries?}}]}; `error` set instead of
 *   `response` when the check did not finish ("Lean REPL command timed out in N seconds", a header that
 *   timed out); a `response` of the form {message} is an error of the REPL itself;
 * - `POST /verify` (older servers; kept by newer ones): {codes: [{custom_id, proof}], timeout,
 *   infotree_type, disable_cache} → {results: [{custom_id, error?, response?}]};
 * - `Authorization: Bearer <LEAN_SERVER_API_KEY>` when the server has a key (401 otherwise);
 * - 429 "No available REPLs" when every REPL is busy.
 *
 * Message positions are the REPL's: 1-based lines, 0-based columns in code points, counted from the snippet or
 * from what follows its imports depending on the server's version; the client hands them on counted from the
 * snippet (positions.ts).
 */

export interface KiminaPos {
  line: number;
  column: number;
}

export interface KiminaMessage {
  severity: "trace" | "info" | "warning" | "error";
  pos: KiminaPos;
  endPos?: KiminaPos | null;
  data: string;
}

export interface KiminaCommandResponse {
  env?: number | null;
  messages?: KiminaMessage[] | null;
  sorries?: unknown[] | null;
}

export interface KiminaResult {
  id: string;
  time?: number;
  error?: string | null;
  response?: KiminaCommandResponse | { message: string } | null;
}

export interface CheckRequestBody {
  snippets: { id: string; code: string }[];
  timeout: number;
  debug: boolean;
  reuse: boolean;
  infotree: null;
}

export interface VerifyRequestBody {
  codes: { custom_id: string; proof: string }[];
  timeout: number;
  infotree_type: null;
  disable_cache: boolean;
}

/** The environment variable kimina-client reads the key from. */
export const API_KEY_VARIABLE = "LEAN_SERVER_API_KEY";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isPos(v: unknown): v is KiminaPos {
  return isObject(v) && typeof v["line"] === "number" && typeof v["column"] === "number";
}

function isMessage(v: unknown): v is KiminaMessage {
  return (
    isObject(v) &&
    typeof v["data"] === "string" &&
    ["trace", "info", "warning", "error"].includes(String(v["severity"])) &&
    isPos(v["pos"]) &&
    (v["endPos"] === undefined || v["endPos"] === null || isPos(v["endPos"]))
  );
}

/** One result of either endpoint, checked field by field; undefined when it is not of the documented shape. */
export function readResult(raw: unknown): KiminaResult | undefined {
  if (!isObject(raw)) return undefined;
  const id = raw["id"] ?? raw["custom_id"];
  if (typeof id !== "string" && typeof id !== "number") return undefined;
  const error = raw["error"];
  if (error !== undefined && error !== null && typeof error !== "string") return undefined;
  const response = raw["response"];
  const result: KiminaResult = { id: String(id), ...(typeof error === "string" ? { error } : {}) };
  if (typeof raw["time"] === "number") result.time = raw["time"];
  if (response === undefined || response === null) return error ? result : undefined;
  if (!isObject(response)) return undefined;
  if (typeof response["message"] === "string" && response["messages"] === undefined)
    return { ...result, response: { message: response["message"] } };
  const messages = response["messages"];
  if (messages !== undefined && messages !== null && !(Array.isArray(messages) && messages.every(isMessage)))
    return undefined;
  return { ...result, response: { messages: (messages as KiminaMessage[] | null | undefined) ?? [] } };
}
