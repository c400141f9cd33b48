#!/usr/bin/env bash
# The recording library's GPU check, for a session with a GPU: builds with
# -DTPROF_CUDA=ON (CUPTI) and runs the recording tests, cuda_smoke included
# (tests/cli/record_cuda.py: kernels, memcpys, memsets, their launches and
# ranges). About a minute on 16 cores. Output: the ctest log, and the trace
# cuda_smoke wrote, under $OUT when set.
set -euo pipefail
BUILD=${1:-build-cuda}
cmake -S . -B "$BUILD" -DTPROF_CUDA=ON -DTPROF_WERROR=ON -DTPROF_TESTS=ON >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target trainprof tiny_gpt cuda_smoke unit_record json_dump path_diff \
  trainprof-gentrace cupti_fake_smoke >/dev/null
rc=0
ctest --test-dir "$BUILD" -R 'record' --output-on-failure -V | tee "${OUT:-/tmp}/gpu-check.log" || rc=$?
"$BUILD/examples/cuda_smoke" "${OUT:-/tmp}/cuda_trace" || rc=$?
exit $rc
