"""The tiny trainer learns: over a fixed seed its loss goes down, the run is
deterministic, the step line carries the reference's metric names, and the
hand-written backward pass matches finite differences."""
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import SRC, check, finish  # noqa: E402

TINY = os.environ.get("TINY_GPT", "build/examples/tiny_gpt")
args = [TINY, os.path.join(SRC, "configs/tiny.yaml"), "--model.n_layer=2", "--model.n_embd=64", "--model.n_head=4",
        "--model.intermediate=128", "--model.seq_len=32", "--train.batch_size=8", "--train.max_steps=40",
        "--train.seed=7", "--train.log_json=true", "--train.data=" + os.path.join(SRC, "examples/tiny_gpt/corpus.txt")]


def losses():
    p = subprocess.run(args, capture_output=True, text=True, timeout=900)
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    rows = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    return rows


rows = losses()
check(len(rows) == 40, f"40 step lines, got {len(rows)}")
if rows:
    for k in ("flops_achieved(T)", "flops_promised(T)", "mfu", "tokens_per_second(M)", "consume_tokens(M)",
              "training/avg_effective_len", "training/total_loss", "training/grad_norm"):
        check(k in rows[0], f"metric {k}")
    loss = [r["training/total_loss"] for r in rows]
    first, last = sum(loss[:5]) / 5, sum(loss[-5:]) / 5
    print(f"loss: first 5 steps {first:.3f}, last 5 steps {last:.3f}")
    check(first > 5.0, f"starts near ln(256) = 5.55: {first}")
    check(last < first - 1.5, f"loss goes down by more than 1.5 nats: {first:.3f} -> {last:.3f}")
    check(rows[-1]["consume_tokens(M)"] == 40 * 8 * 32 / 1e6, "tokens consumed")
    # 6*N*T + 12*B*T^2*hd*nh*L with N = (3*H*I + 4*H*H)*L + V*H
    N = (3 * 64 * 128 + 4 * 64 * 64) * 2 + 256 * 64
    flops = 6 * N * 256 + 12 * 8 * 32 * 32 * 16 * 4 * 2
    r = rows[-1]
    dt = r["step_time(s)"]
    check(abs(r["flops_achieved(T)"] - flops / dt / 1e12) <= 1e-5 * r["flops_achieved(T)"] + 1e-9,
          f"the meter's FLOPs are the model's: {r['flops_achieved(T)']} vs {flops / dt / 1e12}")
    again = losses()
    check([r["training/total_loss"] for r in again] == loss, "same seed, same losses")
# the backward pass against finite differences, after 60 steps (attention no longer uniform)
p = subprocess.run([TINY, os.path.join(SRC, "configs/tiny.yaml"), "--model.n_layer=2", "--model.n_embd=32",
                    "--model.n_head=2", "--model.intermediate=48", "--model.seq_len=16", "--train.batch_size=4",
                    "--train.max_steps=60", "--train.gradcheck=true",
                    "--train.data=" + os.path.join(SRC, "examples/tiny_gpt/corpus.txt")],
                   capture_output=True, text=True, timeout=900)
print(p.stdout.splitlines()[-1] if p.stdout else p.stderr)
check(p.returncode == 0 and "gradcheck: 108 of 108 entries agree" in p.stdout, f"gradient check: {p.stdout[-500:]}")

# a trace_dir that cannot take the profile fails at once (exit 2, the path said), not at the window's end
small = [TINY, os.path.join(SRC, "configs/tiny.yaml"), "--model.n_layer=1", "--model.n_embd=32", "--model.n_head=2",
         "--model.intermediate=48", "--model.seq_len=16", "--train.batch_size=2", "--train.max_steps=4",
         "--train.data=" + os.path.join(SRC, "examples/tiny_gpt/corpus.txt"), "--train.profile.enable",
         "--train.profile.start_step=2", "--train.profile.end_step=3"]
for bad in ("/proc", "/proc/no/such", "/etc/hostname", "/dev/null/x"):
    p = subprocess.run(small + ["--train.profile.trace_dir=" + bad], capture_output=True, text=True, timeout=300)
    check(p.returncode == 2 and bad in p.stderr and "step" not in p.stdout,
          f"trace_dir {bad}: exit 2 before training, naming it (got {p.returncode}: {p.stderr.strip()[-200:]})")
# a write that fails during the run (the disk fills: a file-size limit here) makes the run exit non-zero
with tempfile.TemporaryDirectory() as d:
    def full_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))
    p = subprocess.run(small + ["--train.profile.trace_dir=" + d], capture_output=True, text=True, timeout=300,
                       preexec_fn=full_disk)
    check(p.returncode == 3 and "EFBIG" in p.stderr and "could not be written" in p.stderr,
          f"a profile that could not be written: exit 3 with the reason (got {p.returncode}: {p.stderr[-300:]})")
    check(not [f for f in os.listdir(d) if ".pt.trace.json" in f], f"nothing half-written is left: {os.listdir(d)}")
    p = subprocess.run(small + ["--train.profile.trace_dir=" + d], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0 and [f for f in os.listdir(d) if f.endswith(".pt.trace.json.gz")],
          f"the same run with room writes its trace: {p.returncode} {p.stderr[-200:]}")
finish("tiny_gpt learns; its gradients match finite differences; a profile it cannot write fails the run")
