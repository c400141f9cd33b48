#!/usr/bin/env bash
# Reading an Ascend kernel table: a made kernel_details.csv of ROWS rows
# (default 1.5 M, 338 MB: 23 columns, quoted timestamps with the tab
# torch_npu writes, quoted shapes) read by `trainprof kernels` and, for
# scale, tokenized by Python's csv module; PAIRS alternating rounds.
#
#   bench/ascend_bench.sh [BUILD]     (BENCH_ROWS, BENCH_PAIRS)
set -euo pipefail
build=${1:-build}
rows=${BENCH_ROWS:-1500000}
pairs=${BENCH_PAIRS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
table="$work/kernel_details.csv"
python3 - "$table" "$rows" <<'PY'
import random, sys
random.seed(1)
head = ("Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
        "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
        "Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles\n")
t = 1736413971558972.912
with open(sys.argv[1], "w") as f:
    f.write(head)
    for i in range(int(sys.argv[2])):
        t += random.random() * 20
        f.write(f'{i // 100000},4294967295,{i},2,aclnnMatmul_MatMulV3Common_MatMulV{i % 7},MatMulV3,dynamic,AI_CORE,'
                f'"{t:.3f}\t",{random.random() * 50:.3f},1.087,20,0,NO,"""81920,1536;8192,4096""",DT_BF16;DT_BF16,'
                f'ND;ND,"""1536,4096""",DT_BF16,ND,N/A,478.701,17233251\n')
PY
echo "table: $(du -m "$table" | cut -f1) MB, $rows rows"
for ((r = 0; r < pairs; r++)); do
  /usr/bin/time -f "trainprof kernels: %e s wall, %U s user, %M KB peak" "$build/trainprof" kernels "$table" >/dev/null
  python3 -c "
import csv, sys, time
t = time.time()
with open(sys.argv[1], newline='') as f:
    n = sum(1 for _ in csv.reader(f))
print(f'python csv.reader (tokenizing only): {time.time() - t:.2f} s wall, {n} rows')" "$table"
done
