#!/usr/bin/env bash
# Installs the tools some tests need, from Debian and the npm registry only: bubblewrap (the sandbox test),
# Debian's Chromium and code-server 4.100.3 (the newest that runs on Node 20) into $FIM_E2E_CACHE (the
# real-VS-Code test, test/e2e/vscode.test.ts).
# code-server's @vscode/ripgrep postinstall would download rg from GitHub; its cache is seeded with Debian's rg.
# It never fails the caller: where the tools cannot be installed it says why, and the test skips itself.
set -uo pipefail
trap 'echo "e2e setup: could not install the VS Code test tools (see above); that test will be skipped" >&2; exit 0' ERR
set -e
CACHE=${FIM_E2E_CACHE:-$HOME/.cache/fim-rlvr-e2e}
VERSION=4.100.3
if [ -x "$CACHE/node_modules/.bin/code-server" ] && [ -x /usr/bin/chromium ] && command -v bwrap >/dev/null; then
  echo "e2e setup: code-server and chromium already installed in $CACHE"
  exit 0
fi
if [ -x "$CACHE/node_modules/.bin/code-server" ] && [ -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then apt-get install -y -qq bubblewrap >/dev/null || apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; fi
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq bubblewrap chromium ripgrep build-essential pkg-config python3 libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev >/dev/null
fi
command -v rg >/dev/null || { echo "e2e setup: ripgrep is missing (apt-get install ripgrep)" >&2; exit 1; }
mkdir -p "$CACHE/tmp"
cd "$CACHE"
[ -f package.json ] || npm init -y >/dev/null
export TMPDIR="$CACHE/tmp"
export npm_config_unsafe_perm=true npm_config_yes=true
# code-server's native modules (argon2 through node-gyp) need Node's headers; node-gyp would download them,
# which cannot work without internet. The installed Node ships them (PREFIX/include/node), so point at it.
node_prefix=$(dirname "$(dirname "$(command -v node)")")
if [ -z "${npm_config_nodedir:-}" ] && [ -f "$node_prefix/include/node/node.h" ]; then
  export npm_config_nodedir="$node_prefix"
fi
seed="$TMPDIR/vscode-ripgrep-cache-1.15.11"
mkdir -p "$seed" "$TMPDIR/rg"
cp "$(command -v rg)" "$TMPDIR/rg/rg"
tar czf "$seed/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$TMPDIR/rg" rg
npm install --no-audit --no-fund "code-server@$VERSION" --foreground-scripts > "$CACHE/install.log" 2>&1 || { tail -30 "$CACHE/install.log" >&2; exit 1; }
"$CACHE/node_modules/.bin/code-server" --version
