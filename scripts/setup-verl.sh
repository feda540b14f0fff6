#!/usr/bin/env bash
# The verl test environment, trainer/.venv-verl: verl 0.9.1 itself, so that the verl integration's test runs verl's
# own RewardLoopManager on a loopback Ray cluster (trainer/tests/test_integrations_verl.py; scripts/run-tests.mjs
# runs that file here with FIM_RLVR_VERL=1 after the main pytest suite).
#
# verl pins transformers < 5.11 while the trainer's environment has a newer one, so verl cannot share trainer/.venv.
# A full second environment would download torch and Ray again (about 1.1 GB); this one is layered instead: a .pth
# file puts trainer/.venv's site-packages on its path *after* its own, so it reuses torch, Ray, datasets and the
# rest, and only what verl adds or pins differently (transformers 5.10, tensordict, hydra, wandb, tensorboard:
# about 390 MB on disk) lands here, taking precedence. Idempotent: an environment that already imports verl at the
# pinned version is kept.
#
# Layering has one trap: a package that only transformers uses, taken from trainer/.venv at the version *its*
# transformers wants. `kernels` is one (transformers 5.10 needs kernels < 0.13; 0.19 made LayerRepository's version
# argument mandatory, and importing verl failed inside transformers). So transformers' own extras are installed here
# at the exact version verl pulled, and pip brings what that version declares.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=trainer/.venv
VENV=trainer/.venv-verl
VERL=verl==0.9.1
# The marker's content: an environment made by an older version of this script is made again.
RECIPE="$VERL with transformers[kernels] at verl's version"
if [ ! -x "$BASE/bin/python" ]; then
  echo "verl setup: $BASE does not exist; run \`npm run test:setup\` (it makes $BASE first)" >&2
  exit 1
fi
# Written last: an environment without it is one a crash left half-made, and is made again.
DONE="$VENV/.fim-rlvr-setup-done"
if [ -f "$DONE" ] && [ "$(cat "$DONE")" = "$RECIPE" ] && "$VENV/bin/python" -c 'import verl' 2>/dev/null; then
  echo "verl setup: $VENV already has $VERL"
  exit 0
fi
trap 'echo "verl setup failed at: $BASH_COMMAND" >&2; echo "Fix the above (access to PyPI), then run: bash scripts/setup-verl.sh" >&2' ERR
rm -rf "$VENV"
"$(readlink -f "$BASE/bin/python")" -m venv "$VENV"
purelib() { "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
purelib "$BASE" >"$(purelib "$VENV")/fim-rlvr-trainer-venv.pth"
"$VENV/bin/python" -m pip install --disable-pip-version-check -q "$VERL"
TRANSFORMERS=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("transformers"))')
"$VENV/bin/python" -m pip install --disable-pip-version-check -q "transformers[kernels]==$TRANSFORMERS"
echo "$RECIPE" >"$DONE"
echo "verl setup: $VENV has $VERL ($("$VENV/bin/python" -c 'import transformers; print("transformers", transformers.__version__)'); the rest is shared with $BASE)"
