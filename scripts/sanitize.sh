#!/usr/bin/env bash
# sanitize.sh: the driver and the backend under sanitizers, in build trees of their own.
#   ThreadSanitizer:  the driver (stream workers, copy engine, events) and its C++ tests.
#   ASan + UBSan:     the driver and the backend; the driver's C++ tests, then the backend's
#                     Python tests against the instrumented libraries.
# Usage: bash scripts/sanitize.sh [pytest arguments]   (default: the whole tests/ folder)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
JOBS=${MAX_JOBS:-$(nproc)}
configure() {  # configure <build dir> <sanitizer flags> [more cmake args]
  local dir=$1 flags=$2; shift 2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPython3_EXECUTABLE="$(command -v "$PYTHON")" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_SHARED_LINKER_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" "$@" >/dev/null
}

echo "== ThreadSanitizer: driver tests"
configure build/tsan "-fsanitize=thread -g"
cmake --build build/tsan --parallel "$JOBS" --target openreg_driver_tests
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 handle_segv=0" build/tsan/bin/openreg_driver_tests

echo "== AddressSanitizer + UndefinedBehaviorSanitizer: driver and backend"
PKG=$PWD/build/asan/pkg
mkdir -p "$PKG/torch_openreg"
configure build/asan "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g" \
  -DOPENREG_LIB_DIR="$PKG/torch_openreg/lib" \
  -DOPENREG_EXT_PATH="$PKG/torch_openreg/$("$PYTHON" -c 'import sysconfig; print("_C" + sysconfig.get_config_var("EXT_SUFFIX"))')"
cmake --build build/asan --parallel "$JOBS"
ASAN_OPTIONS="detect_leaks=0:handle_segv=0" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" build/asan/bin/openreg_driver_tests
# The Python package next to the instrumented libraries; PYTHONPATH puts it ahead of the
# editable install, and torch's autoload imports this copy.
for f in $(cd torch_openreg && find . -name '*.py'); do
  mkdir -p "$PKG/torch_openreg/$(dirname "$f")"
  ln -sf "$PWD/torch_openreg/$f" "$PKG/torch_openreg/$f"
done
# (handle_segv=0: tests provoke SIGSEGV on purpose, a host read of device memory.)
# Python itself is not instrumented: preload the runtimes; Python's own allocations are not
# ours to report (detect_leaks=0). Any ASan or UBSan report aborts the test that caused it.
export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allow_user_segv_handler=1:handle_segv=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export PYTHONPATH="$PKG${PYTHONPATH:+:$PYTHONPATH}"
export OPENREG_SANITIZED=1
"$PYTHON" -c "import torch, torch_openreg; assert torch_openreg.__file__.startswith('$PKG'), torch_openreg.__file__; print('instrumented backend:', torch_openreg.__file__)"
"$PYTHON" -m pytest -q -p no:cacheprovider "${@:-tests}"
