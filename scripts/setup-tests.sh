#!/usr/bin/env bash
# `npm run test:setup`: the tools of the end-to-end tests (test/e2e/setup.sh: bubblewrap, Chromium,
# code-server; skipped with a reason where they cannot be installed), transformers.js for the ONNX export's
# Node test (test/tools/setup-transformers-js.sh), then the trainer's Python environment
# trainer/.venv for its pytest suite, which `npm test` runs after the node tests.
# torch is pinned: `pip install torch==2.13.0` takes the CPU build on this machine kind, while plain `torch`
# would pull a multi-GB CUDA build. FIM_SKIP_TRAINER_SETUP=1 skips the trainer part.
set -uo pipefail
cd "$(dirname "$0")/.."
bash test/e2e/setup.sh
bash test/tools/setup-transformers-js.sh
if [ "${FIM_SKIP_TRAINER_SETUP:-}" = 1 ]; then
  echo "trainer setup: skipped (FIM_SKIP_TRAINER_SETUP=1); the trainer's tests will be skipped"
  exit 0
fi
VENV=trainer/.venv
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import torch, transformers, tokenizers, pylsp_jsonrpc, yaml, pytest, jsonschema" 2>/dev/null; then
  echo "trainer setup: $VENV already has the trainer's dependencies and test tools"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q -e 'trainer[test]' ||
    echo "trainer setup: refreshing the editable install failed; the existing environment is used as is" >&2
  exit 0
fi
set -e
trap 'echo "trainer setup failed at: $BASH_COMMAND" >&2; echo "Fix the above (Python 3.10+ with venv, and access to PyPI), or run with FIM_SKIP_TRAINER_SETUP=1 to skip the trainer tests." >&2' ERR
PY=${PYTHON:-python3}
echo "trainer setup: creating $VENV with $($PY --version)"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --disable-pip-version-check -q torch==2.13.0
"$VENV/bin/python" -m pip install --disable-pip-version-check -q -e 'trainer[test]'
echo "trainer setup: done ($("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)'))"
