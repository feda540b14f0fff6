/**
 * Why a file a user named could not be read, in words. Node's own line (`ENOENT: no such file or directory, open
 * '…'`) names a system call, not what happened; every command says one of these instead and adds what to give.
 */
export function unreadableReason(error: unknown): string {
  const code = error instanceof Error && "code" in error ? String(error.code) : "";
  if (code === "ENOENT") return "no such file";
  if (code === "EISDIR") return "is a folder, not a file";
  if (code === "EACCES") return "cannot be read (permission denied)";
  return `cannot be read (${error instanceof Error ? error.message : String(error)})`;
}
