/**
 * Frames written in one turn of the event loop leave as one write: a version's progress, diagnostics and
 * the answer to its wait reach the client in one read instead of three or four (each a system call on both
 * sides and a wake-up of the client's event loop), which is most of what a check costs at zero simulated
 * cost. Order is kept; `flush` sends what is held at once (before the process exits).
 */
export function coalescingWriter(output: NodeJS.WritableStream): {
  write: (frame: string) => void;
  flush: () => void;
} {
  let held: string[] = [];
  const flush = () => {
    if (held.length === 0) return;
    const data = held.join("");
    held = [];
    output.write(data);
  };
  return {
    write: (frame) => {
      if (held.push(frame) === 1) setImmediate(flush);
    },
    flush,
  };
}
