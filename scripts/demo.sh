#!/usr/bin/env bash
# The demo `make run` prints: scripts/demo.sh BUILD_DIR DEMO_DIR.
# Each stage starts with a tag line saying what it is and whether it is real:
#   recorded:          the tiny trainer (examples/tiny_gpt) on this CPU
#   recorded over MPI: the same over 2 MPI ranks (when built with MPI)
#   generated:         2 synthetic H100-shaped ranks (trainprof-gentrace)
#   merged:            those 2 ranks in one timeline
# then what trainprof says about it (each command shown with a "$ "), and it
# ends with the next steps: the files written, Perfetto, commands to try.
# The programs' own logs go to files in DEMO_DIR, not to the screen.
# tests/cli/make_run.py checks the tags, the next steps and a line budget.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: scripts/demo.sh BUILD_DIR DEMO_DIR" >&2
  exit 2
fi
B=$1
D=$2
SRC=$(cd "$(dirname "$0")/.." && pwd)
TP=$B/trainprof
# configs/tiny.yaml names its corpus relative to the source folder
CORPUS=(--train.data="$SRC/examples/tiny_gpt/corpus.txt")

for p in "$TP" "$B/examples/tiny_gpt" "$B/bench/trainprof-gentrace"; do
  if [ ! -x "$p" ]; then
    echo "demo: $p is not built (run 'make build', or give the build directory)" >&2
    exit 2
  fi
done

# "$ command", then the command; its output indented under it
show() {
  echo "\$ $*"
  local rc=0
  "$@" 2>&1 | sed 's/^/  /' || rc=$?
  if [ "$rc" -ne 0 ]; then # said, not a silent stop under set -e
    echo "demo: '$1 ${2:-}' failed (exit $rc); its output is above" >&2
    exit "$rc"
  fi
}

# the loss of the first and the last step of a trainer's log
loss_story() {
  awk -F'training/total_loss: ' '/^step [0-9]+:/ { split($2, v, ","); n++; if (n == 1) first = v[1]; last = v[1] }
    END { if (n) printf "%d steps, loss %s -> %s", n, first, last }' "$1"
}

rm -rf "$D/trace" "$D/mpi"
mkdir -p "$D"

# ---- recorded: the tiny trainer on this CPU -------------------------------
echo "recorded: the tiny trainer (examples/tiny_gpt) on this CPU: a real run, CPU only, so no GPU kernels"
log=$D/tiny_gpt.log
if ! "$B/examples/tiny_gpt" "$SRC/configs/tiny.yaml" "${CORPUS[@]}" --train.max_steps=5 --train.profile.enable \
     --train.profile.with_stack=true --train.profile.start_step=2 --train.profile.end_step=4 \
     --train.profile.trace_dir="$D/trace" >"$log" 2>&1; then
  echo "demo: tiny_gpt failed; its log, $log:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
trace=$(ls "$D"/trace/*.pt.trace.json.gz)
snap=$(ls "$D"/trace/*.pkl)
echo "  $(loss_story "$log"); steps 2-3 recorded with call stacks (log: $log)"
show "$TP" info "$trace"
show "$TP" mem --top 3 --depth 3 "$snap"
echo

# ---- recorded over MPI: the same trainer on 2 ranks -------------------------
mpi_traces=()
if [ -x "$B/examples/tiny_gpt_mpi" ] && command -v mpirun >/dev/null; then
  echo "recorded over MPI: the tiny trainer data-parallel over 2 processes (mpirun -np 2), a trace per rank, CPU only"
  log=$D/tiny_gpt_mpi.log
  if ! OMPI_MCA_btl_vader_single_copy_mechanism=none \
       mpirun --allow-run-as-root --oversubscribe -np 2 "$B/examples/tiny_gpt_mpi" "$SRC/configs/tiny.yaml" \
         "${CORPUS[@]}" --train.max_steps=5 --train.profile.enable --train.profile.rank0_only=false \
         --train.profile.trace_dir="$D/mpi" >"$log" 2>&1; then
    echo "demo: tiny_gpt_mpi failed; its log, $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  mapfile -t mpi_traces < <(ls "$D"/mpi/*.pt.trace.json.gz)
  echo "  $(loss_story "$log") (mean over ranks; log: $log)"
  echo "  the two ranks side by side: the time a rank waits in the allreduce for the other is in its 'other' phase"
  show "$TP" summary "${mpi_traces[@]}"
  echo
fi

# ---- generated: synthetic GPU ranks ----------------------------------------
echo "generated: 2 synthetic H100-shaped ranks (trainprof-gentrace): not a real run; what trainprof reads in GPU traces"
"$B/bench/trainprof-gentrace" --size 8M --rank 0 --world 2 --seed 1 -o "$D/demo_rank0.pt.trace.json"
"$B/bench/trainprof-gentrace" --size 8M --rank 1 --world 2 --seed 2 -o "$D/demo_rank1.pt.trace.json"
gzip -1 -f "$D/demo_rank1.pt.trace.json"
gen=("$D/demo_rank0.pt.trace.json" "$D/demo_rank1.pt.trace.json.gz")
show "$TP" summary "${gen[@]}"
echo

# ---- merged: one timeline ----------------------------------------------------
echo "merged: the 2 generated ranks in one timeline (trainprof merge), clocks aligned on a collective"
show "$TP" merge "${gen[@]}" -o "$D/merged.pt.trace.json.gz"
echo

# ---- report: one page ----------------------------------------------------------
echo "report: one HTML page of the generated ranks with the recorded run's memory snapshot and log (trainprof report)"
show "$TP" report "${gen[@]}" "$snap" "$D/tiny_gpt.log" -o "$D/report.html" --title "trainprof demo"
echo

# ---- next steps ----------------------------------------------------------------
echo "next steps"
echo "  files written:"
printf '    %-62s %s\n' "$trace" "recorded trace: CPU ops, steps, memory events, call stacks" \
  "$snap" "its memory snapshot (PyTorch's format, call sites named)"
for t in "${mpi_traces[@]}"; do printf '    %-62s %s\n' "$t" "a rank's trace over MPI"; done
printf '    %-62s %s\n' "${gen[0]}" "generated rank 0" "${gen[1]}" "generated rank 1" \
  "$D/merged.pt.trace.json.gz" "both generated ranks, one timeline" \
  "$D/report.html" "the report: one page, charts, works offline"
echo "  open $D/report.html in a browser: the demo's ranks, memory and log on one page"
echo "  open https://ui.perfetto.dev and load $D/merged.pt.trace.json.gz (or the recorded trace)"
echo "  drag $snap into https://pytorch.org/memory_viz: its blocks show the trainer's call sites"
echo "  try:"
echo "    $TP steps $trace"
echo "    $TP mem --timeline $D/mem $snap"
echo "    $TP ops --by category ${gen[*]}"
echo "    $TP advice ${gen[*]}"
echo "    $TP diff ${gen[*]}"
