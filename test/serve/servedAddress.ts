import type { ServiceAddress } from "../../lean-bridge/serve/connection";

/** The `HOST:PORT` that `fim-rlvr serve` prints after "listening on" (formatAddress), as a client's address. */
export function servedAddress(printed: string): ServiceAddress {
  const colon = printed.lastIndexOf(":");
  return {
    host: printed.slice(0, colon).replace(/^\[(.*)\]$/, "$1"),
    port: Number(printed.slice(colon + 1)),
  };
}
