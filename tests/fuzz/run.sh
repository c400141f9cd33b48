#!/usr/bin/env bash
# Runs each fuzz target for SECONDS (default 30) from a seed corpus of small
# generated traces and JSON snippets. Fails on any crash, leak or UB report.
set -euo pipefail
build=${1:-build-fuzz}
secs=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/json" "$work/trace"
i=0
for s in '{"a":[1,2.5e3,-0,"x\u00e9\ud83d\ude00"],"b":{"c":null,"d":true}}' '[]' '"\\"' '[1e-3,{"":false}]'; do
  printf '%s' "$s" > "$work/json/seed$i"; i=$((i+1))
done
cat > "$work/trace/seed0" <<'J'
{"schemaVersion":1,"distributedInfo":{"rank":0,"world_size":2,"backend":"nccl"},"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100.5,"dur":50},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":101,"dur":2,"args":{"correlation":7}},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,"tid":7,"ts":110,"dur":5.25,"args":{"device":0,"stream":7,"correlation":7}},
{"ph":"s","id":7,"pid":1,"tid":1,"ts":101,"cat":"ac2g","name":"ac2g"},
{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":102,"args":{"Bytes":4}}],
"deviceProperties":[{"id":0,"name":"H100","numSms":132}]}
J
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":100,"dur":50,"args":{"Collective name":"allreduce","dtype":"Float","In msg nelems":1000,"Out msg nelems":1000,"Group size":4}},{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":120,"dur":2,"args":{"correlation":11}},{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":9,"ts":200,"dur":10,"args":{"device":0,"stream":9,"correlation":11}}]}' > "$work/trace/seed5"
printf '[{"ph":"X","name":"k","pid":800,"tid":3,"ts":"1704161511420306.491","dur":1.35,"args":{"Task Type":"AI_CORE","Stream Id":3}}]' > "$work/trace/seed1"
gzip -c "$work/trace/seed0" > "$work/trace/seed2"
# a few KiB in Kineto's layout, so that reads in parallel chunks are exercised too
{ printf '{"schemaVersion": 1, "traceEvents": [\n'
  for i in $(seq 1 40); do
    printf '  {"ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": 7, "ts": %d.5, "dur": 3, "args": {"device": 0, "stream": 7, "correlation": %d}},\n' $((i % 4)) $((1000 + i * 10)) "$i"
  done
  printf '  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 900, "dur": 900}\n],\n"distributedInfo": {"rank": 1}}\n'; } > "$work/trace/seed4"
if command -v zstd >/dev/null; then zstd -q -c "$work/trace/seed0" > "$work/trace/seed3"; fi
# merge: the first byte picks options, 0xFF splits two inputs
mkdir -p "$work/merge"
for f in seed0 seed4 seed5; do
  { printf '\x21'; cat "$work/trace/$f"; printf '\xff'; sed 's/"rank":[ ]*[01]/"rank": 1/' "$work/trace/$f"; } > "$work/merge/$f"
done
# config: YAML files and command lines (NUL-separated)
mkdir -p "$work/config"
cp "$here/../../configs/tiny.yaml" "$work/config/seed0"
printf 'train:\n  profile:\n    enable: yes\n    start_step: 3\n    end_step: 5\n    trace_dir: "/t"\n' > "$work/config/seed1"
printf -- '--train.profile.enable\0--train.profile.start_step\0005\0x.yaml\0--train.profile.end_step=9\0--a.b\0c' > "$work/config/seed2"
for t in fuzz_json fuzz_trace fuzz_merge fuzz_config; do
  corpus="$work/${t#fuzz_}"
  echo "fuzz: $t for ${secs}s"
  "$build/tests/fuzz/$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$work/" "$corpus" 2>"$work/$t.log" || { tail -50 "$work/$t.log"; mkdir -p "$build/fuzz-artifacts"; cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$build/fuzz-artifacts/" 2>/dev/null; exit 1; }
  grep -E "stat::number_of_executed_runs|cov:" "$work/$t.log" | tail -2 || true
done
echo "fuzz: no crash"
