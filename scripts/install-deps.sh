#!/usr/bin/env bash
# Installs the Debian packages trainprof needs to build, test and benchmark.
# Idempotent and quiet when everything is already there. Needs root (or sudo)
# only when something is missing. `--bench` adds the benchmark peers.
set -euo pipefail

packages=(
  gcc make cmake pkg-config         # build
  zlib1g-dev libzstd-dev            # gzip fallback, zstd
  libsqlite3-dev                    # Ascend's profiler database (.db), read-only
  libisal-dev isal                  # ISA-L fast gzip (library, igzip for benchmarks)
  libyaml-dev                       # ProfileConfig YAML files (recording library)
  libdw-dev                         # recorded frames named with function and file:line (recording library)
  libcmocka-dev                     # unit tests
  clang libclang-rt-14-dev          # libFuzzer targets, sanitizers
  python3 gzip zstd                 # independent checks in tests, fixtures
  time                              # /usr/bin/time: peak RSS in tests and benchmarks
  groff-base                        # the man page rendered in tests/cli/install.py
  libopenmpi-dev openmpi-bin        # trainprof-mpi, tiny_gpt_mpi (data-parallel example) and their tests
  openssh-client                    # mpirun refuses to start, even on one host, without an rsh/ssh agent
  nodejs                            # npm: the report's charting library and its browser test's driver
  chromium                          # the report's test opens it in a real headless browser
)

# `--bench`: also the benchmark peers (bench/run_bench.sh)
if [ "${1:-}" = "--bench" ]; then
  packages+=(g++ libsimdjson-dev)
fi

# The npm packages package.json pins (package-lock.json: the exact tree),
# into node_modules/ beside it, when they are not there at those versions.
npm_packages() {
  local root want
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  want=$(sed -n 's/.*"echarts": *"\([^"]*\)".*/\1/p' "$root/package.json" | head -1)
  if [ -f "$root/node_modules/echarts/package.json" ] && [ -f "$root/node_modules/playwright-core/package.json" ] &&
     grep -q "\"version\": *\"$want\"" "$root/node_modules/echarts/package.json"; then
    return 0
  fi
  echo "install-deps: npm ci (package-lock.json) in $root" >&2
  (cd "$root" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  npm_packages
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
npm_packages
