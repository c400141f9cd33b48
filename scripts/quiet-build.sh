#!/usr/bin/env bash
# Builds BUILD_DIR (cmake --build BUILD_DIR ARGS...) with its output kept in
# BUILD_DIR/build.log: nothing is printed when the build succeeds (no "Built
# target" lines); on failure, the log's errors and its last lines, then exit 1.
# Used by `make build` (and so `make run` and `make test`).
set -uo pipefail
if [ $# -lt 1 ]; then
  echo "usage: scripts/quiet-build.sh BUILD_DIR [cmake --build options...]" >&2
  exit 2
fi
build=$1
shift
log="$build/build.log"
if cmake --build "$build" "$@" >"$log" 2>&1; then
  exit 0
fi
{
  echo "build failed: cmake --build $build $*"
  grep -E '(error|warning):|Error [0-9]+|^CMake Error' "$log" | head -n 40
  echo "--- last lines of $log ---"
  tail -n 20 "$log"
} >&2
exit 1
