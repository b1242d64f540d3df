#!/usr/bin/env bash
# test.sh: set up, build and install, then run every test: the driver's C++ tests, the
# backend, the anchor checker, the guide's warning-free build and its browser test.
set -euo pipefail
cd "$(dirname "$0")/.."
# PYTHON picks the interpreter for every step (default python3).
export PYTHON=${PYTHON:-python3}
bash scripts/setup.sh
"$PYTHON" -m pytest -q tests "$@"
