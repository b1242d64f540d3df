#!/usr/bin/env bash
# main.sh: set up, build and install, run the quick start (nothing but `import torch`), build the guide.
set -euo pipefail
cd "$(dirname "$0")/.."
# PYTHON picks the interpreter for every step (default python3).
export PYTHON=${PYTHON:-python3}
bash scripts/setup.sh
"$PYTHON" examples/quickstart.py
"$PYTHON" -m sphinx -W --keep-going -q -b html docs docs/_build/html
echo "The guide is built: open docs/_build/html/index.html in a browser."
