#!/usr/bin/env bash
# Compiles FimPrelude's modules in import order into .lake/build/lib/lean, the layout `lake build` uses, with
# the embedded Lean (FIM_EMBEDDED_LEAN) or the `lean` on PATH. Lake does the same for a workspace without
# dependencies; this script is for machines that have only the embedded binary.
set -euo pipefail
root="$(cd "$(dirname "$0")" && pwd)"
lean="${FIM_EMBEDDED_LEAN:-lean}"
out="$root/.lake/build/lib/lean"
mkdir -p "$out/FimPrelude"
export LEAN_PATH="$out"
for m in $(sed -n 's/^import FimPrelude\.\([A-Za-z]*\)$/\1/p' "$root/FimPrelude.lean"); do
  "$lean" -o "$out/FimPrelude/$m.olean" -i "$out/FimPrelude/$m.ilean" "$root/FimPrelude/$m.lean"
done
"$lean" -o "$out/FimPrelude.olean" -i "$out/FimPrelude.ilean" "$root/FimPrelude.lean"
