#!/usr/bin/env bash
# setup.sh: everything a fresh machine needs, then an editable build of torch_openreg.
# Safe to run again: installed pieces are skipped and the build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

# Build tools: the machine image usually has them; PyPI has them otherwise.
for tool in cmake ninja; do
  command -v "$tool" >/dev/null || "$PYTHON" -m pip install --quiet "$tool"
done
# Debian packages: a compiler, GoogleTest for the driver's C++ tests, graphviz for the guide's
# diagrams, Chromium for its browser test.
missing=()
command -v g++ >/dev/null || missing+=(g++)
[[ -f /usr/include/gtest/gtest.h ]] || missing+=(libgtest-dev)
command -v dot >/dev/null || missing+=(graphviz)
command -v chromium >/dev/null || missing+=(chromium)
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# torch is pinned: an unpinned torch pulls gigabytes of CUDA packages.
"$PYTHON" -m pip install --quiet "torch==2.13.0" "setuptools>=77"
# No build isolation: compile against the torch installed above.
"$PYTHON" -m pip install --quiet --no-build-isolation -e ".[test,docs]"
