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
# a few KiB in Kineto's layout, so that reads in parallel chunks are exercised too,
# with repeated args values (the skip cache)
{ printf '{"schemaVersion": 1, "traceEvents": [\n'
  for i in $(seq 1 40); do
    printf '  {"ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": 7, "ts": %d.5, "dur": 3, "args": {"device": 0, "stream": 7, "correlation": %d, "grid": [%d, 1, 1], "Input Dims": [[8, 2048], []]}},\n' $((i % 4)) $((1000 + i * 10)) "$i" $((i % 3 * 100))
  done
  printf '  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 900, "dur": 900}\n],\n"distributedInfo": {"rank": 1}}\n'; } > "$work/trace/seed4"
if command -v zstd >/dev/null; then zstd -q -c "$work/trace/seed0" > "$work/trace/seed3"; fi
# merge: the first byte picks options, 0xFF splits two inputs
mkdir -p "$work/merge"
for f in seed0 seed4 seed5; do
  { printf '\x21'; cat "$work/trace/$f"; printf '\xff'; sed 's/"rank":[ ]*[01]/"rank": 1/' "$work/trace/$f"; } > "$work/merge/$f"
done
# logs: one line of each format, with NaN, ANSI and tqdm carriage returns
mkdir -p "$work/log"
printf '\x07{"step": 5, "loss": 2.5e-1, "mfu": NaN}\nstep=6: {'"'"'flops_achieved(T)'"'"': 1.5, '"'"'x'"'"': {'"'"'y'"'"': inf}}\n' > "$work/log/seed0"
printf '\x10 12%%|#  | 120/1000 [01:23<10:12, 1.44it/s, loss=2.31, lr=3e-4]\r 13%%|#  | 121/1000 [01:24<10:12, 3.50s/it, total_loss: 1.2]\n' > "$work/log/seed1"
printf '\x20step    5/74 | loss 10.98 (+0.00z)| norm 1.5 | lr 6.00e-06 | 1234.56 ms | 45.1%% bf16 MFU | 123456 tok/s\n\x1b[32mINFO\x1b[0m step 7 loss=inf time=1.2s\n iteration 100/ 1000 | lm loss: 2.3E+00 | elapsed time per iteration (ms): 12.5 |\n' > "$work/log/seed2"
# pickle: small memory snapshots in protocols 2-5 written by Python's pickle
# (when python3 is there), a few hand-made ones, and a refused GLOBAL
mkdir -p "$work/pickle"
printf '\x80\x04]\x94(K\x01\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00G?\xf8\x00\x00\x00\x00\x00\x00e.' > "$work/pickle/seed0"
printf '\x80\x02cos\nsystem\nX\x02\x00\x00\x00ls\x85R.' > "$work/pickle/seed1"
if command -v python3 >/dev/null; then
  python3 - "$work/pickle" <<'PY'
import pickle, sys
fr = [{"name": "forward", "filename": "/w/model.py", "line": 54}, {"name": "f", "filename": "??", "line": 2**64 - 1}]
tr = [{"action": "segment_alloc", "addr": 4096, "size": 2 << 20, "stream": 0, "time_us": 1, "frames": fr},
      {"action": "alloc", "addr": 4096, "size": 1000, "stream": 0, "time_us": 2, "frames": fr},
      {"action": "free_requested", "addr": 4096, "size": 1000, "stream": 0, "time_us": 3, "frames": fr},
      {"action": "free_completed", "addr": 4096, "size": 1000, "stream": 0, "time_us": 4, "frames": fr},
      {"action": "free_completed", "addr": 8192, "size": 77, "stream": 0, "time_us": 5, "frames": []},
      {"action": "oom", "addr": 0, "size": 1 << 40, "stream": 0, "time_us": 6, "device_free": 5, "frames": fr}]
seg = {"device": 0, "address": 4096, "total_size": 2 << 20, "allocated_size": 512, "active_size": 512,
       "requested_size": 500, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
       "frames": fr, "blocks": [{"address": 4096, "size": 512, "requested_size": 500, "state": "active_allocated",
                                 "frames": fr}, {"address": 4608, "size": (2 << 20) - 512, "requested_size": 0,
                                                 "state": "inactive", "frames": []}]}
snap = {"segments": [seg], "device_traces": [tr, []], "allocator_settings": {},
        "external_annotations": [{"stage": "START", "name": "fwd", "device": 0, "time_us": 1}]}
old = {"segments": [{"device": 0, "address": 0, "total_size": 1024, "stream": 0, "segment_type": "small",
                     "blocks": [{"size": 1024, "requested_size": 1000, "state": "active_allocated",
                                 "history": [{"addr": 0, "real_size": 1000, "frames": fr}]}]}],
       "device_traces": [[{"action": "snapshot", "addr": 0, "size": 0, "stream": 0}]]}
for i, p in enumerate((2, 3, 4, 5)):
    open(f"{sys.argv[1]}/py{p}", "wb").write(pickle.dumps(snap, protocol=p))
open(f"{sys.argv[1]}/old", "wb").write(pickle.dumps(old, protocol=4))
open(f"{sys.argv[1]}/list", "wb").write(pickle.dumps([seg], protocol=4))
PY
fi
# config: YAML files and command lines (NUL-separated)
mkdir -p "$work/config"
cp "$here/../../configs/tiny.yaml" "$work/config/seed0"
printf 'train:\n  profile:\n    enable: yes\n    start_step: 3\n    end_step: 5\n    trace_dir: "/t"\n' > "$work/config/seed1"
printf -- '--train.profile.enable\0--train.profile.start_step\0005\0x.yaml\0--train.profile.end_step=9\0--a.b\0c' > "$work/config/seed2"
for t in fuzz_json fuzz_trace fuzz_merge fuzz_log fuzz_pickle fuzz_config; do
  corpus="$work/${t#fuzz_}"
  echo "fuzz: $t for ${secs}s"
  "$build/tests/fuzz/$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$work/" "$corpus" 2>"$work/$t.log" || { tail -50 "$work/$t.log"; mkdir -p "$build/fuzz-artifacts"; cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$build/fuzz-artifacts/" 2>/dev/null; exit 1; }
  grep -E "stat::number_of_executed_runs|cov:" "$work/$t.log" | tail -2 || true
done
echo "fuzz: no crash"
