#!/usr/bin/env bash
# main.sh: set up, build and install, then run the quick start with nothing but `import torch`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 examples/quickstart.py
