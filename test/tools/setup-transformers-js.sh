#!/usr/bin/env bash
# transformers.js (@huggingface/transformers) for the test that loads an `fim-rlvr export-model --format onnx`
# folder in Node. It is kept out of the project's dependencies: with onnxruntime it weighs about 450 MB, which
# every `npm ci` (the README's quick start included) would otherwise download for one test. It goes into a cache
# folder, once per machine; the test skips, saying why, where it is missing.
# ONNXRUNTIME_NODE_INSTALL=skip: onnxruntime-node's CPU binaries ship in its package; without it its install
# script downloads CUDA providers from nuget.org. (An environment variable, which its script reads, rather than
# npm's `--onnxruntime-node-install` flag, which npm 11 warns about as an unknown config.)
set -uo pipefail
TOOLS=${FIM_TEST_TOOLS:-$HOME/.cache/fim-rlvr-test-tools}
VERSION=4.3.1
if [ -f "$TOOLS/node_modules/@huggingface/transformers/package.json" ] &&
  node -e "process.exit(require('$TOOLS/node_modules/@huggingface/transformers/package.json').version === '$VERSION' ? 0 : 1)"; then
  echo "test tools: transformers.js $VERSION already in $TOOLS"
  exit 0
fi
mkdir -p "$TOOLS"
if ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$TOOLS" --no-save --no-audit --no-fund --loglevel=error \
  "@huggingface/transformers@$VERSION"; then
  echo "test tools: transformers.js $VERSION installed in $TOOLS"
else
  echo "test tools: installing transformers.js failed; the ONNX export's Node test will be skipped" >&2
fi
