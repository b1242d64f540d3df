#!/usr/bin/env bash
# test.sh: set up, build and install, then run every test (the driver's C++ tests included).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 -m pytest -q tests "$@"
