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
# A copy of the tracked sources, built in place with the sanitizers: the tests run from that
# copy, so every `import torch_openreg` (autoload, subprocesses started in the repository root)
# finds the instrumented libraries, never the normal build of this checkout.
SRC=$PWD/build/asan/src
rm -rf "$SRC" && mkdir -p "$SRC"
git ls-files -z | xargs -0 cp --parents -t "$SRC"
# The copy is a repository of its own (nothing committed, every file staged), so that the tests
# that list the tracked sources with `git ls-files` see the same files there as here.
git -C "$SRC" init -q && git -C "$SRC" add -A
EXT="_C$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
(cd "$SRC" && configure ../build "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g" \
  -DOPENREG_LIB_DIR="$SRC/torch_openreg/lib" -DOPENREG_EXT_PATH="$SRC/torch_openreg/$EXT")
cmake --build build/asan/build --parallel "$JOBS" --target all openreg_driver_tests
# (handle_segv=0: tests provoke SIGSEGV on purpose, a host read of device memory.)
ASAN_OPTIONS="detect_leaks=0:handle_segv=0" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" build/asan/build/bin/openreg_driver_tests
# Python itself is not instrumented: preload the runtimes; Python's own allocations are not
# ours to report (detect_leaks=0). Any ASan or UBSan report aborts the test that caused it.
cd "$SRC"
export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allow_user_segv_handler=1:handle_segv=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export PYTHONPATH="$SRC${PYTHONPATH:+:$PYTHONPATH}"
# The C++ programs the tests build on demand (tests/conftest.py, cpp_program) come from this tree.
export OPENREG_BUILD_DIR="$PWD/../build"
"$PYTHON" -c "import torch, torch_openreg; assert torch_openreg.__file__.startswith('$SRC'), torch_openreg.__file__; print('instrumented backend:', torch_openreg.__file__)"
# Default: every test but the driver binary's wrapper: that binary already ran above.
if (($#)); then args=("$@"); else args=(tests --deselect tests/test_driver.py::test_driver_binary_passes); fi
"$PYTHON" -m pytest -q -p no:cacheprovider "${args[@]}"
