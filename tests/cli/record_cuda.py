"""The CUPTI recorder (TPROF_CUDA builds, on a machine with a GPU; skipped
otherwise): kernels, memcpys and memsets in the window, linked to the runtime
calls that launched them and to the CPU range around those calls.

With CUDA_SMOKE_FAKE=1 the program is tests/cupti_fake's: the same recorder
built against CUPTI's headers with a stand-in for libcupti, so this runs
without a GPU; it also checks the no-driver path (CPU side only)."""
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import SKIP, TRAINPROF, check, finish, run  # noqa: E402

smoke = os.environ.get("CUDA_SMOKE")
if not smoke:
    print("SKIP: not a TPROF_CUDA build")
    sys.exit(SKIP)
d = tempfile.mkdtemp(prefix="tprof_cuda_")
p = subprocess.run([smoke, d], capture_output=True, text=True, timeout=300)
if p.returncode == 77:
    print("SKIP: no GPU")
    sys.exit(SKIP)
check(p.returncode == 0, f"cuda_smoke exit {p.returncode}: {p.stdout} {p.stderr}")
t = glob.glob(os.path.join(d, "*.pt.trace.json.gz"))
check(len(t) == 1, f"one trace: {t}")
if t:
    doc = json.load(gzip.open(t[0]))
    ev = doc["traceEvents"]
    check(doc["deviceProperties"] and "name" in doc["deviceProperties"][0], f"devices {doc['deviceProperties']}")
    kernels = [e for e in ev if e.get("cat") == "kernel" and e["name"].startswith("axpy")]
    if os.environ.get("CUDA_SMOKE_FAKE"):
        # the fake program's last range launches 3 long kernels and does not wait
        steps = [e for e in ev if e.get("name", "").startswith("ProfilerStep#")]
        # (kernels the warm-up step launched that ran inside the window are kept
        # too, as in Kineto's traces, without a launching range: External id 0)
        tail = [e for e in ev if e.get("cat") == "kernel" and e["name"].startswith("tail_kernel")
                and e["args"]["External id"]]
        late = [e for e in tail if e["ts"] > max(s["ts"] + s["dur"] for s in steps)]
        check(len(tail) == 6 and len(late) >= 1,
              f"work launched in the window is kept though it ran after it: {len(tail)} tail kernels, {len(late)} late")
    copies = [e for e in ev if e.get("cat") == "gpu_memcpy"]
    sets = [e for e in ev if e.get("cat") == "gpu_memset"]
    rt = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "cuda_runtime"}
    check(len(kernels) == 20, f"10 kernels in each of the 2 recorded steps: {len(kernels)}")
    check(len(copies) == 4 and len(sets) == 2, f"memcpys {len(copies)}, memsets {len(sets)}")
    check(all(k["args"]["correlation"] in rt for k in kernels), "every kernel has its launch")
    ranges = {e["args"]["External id"]: e["name"] for e in ev if e.get("cat") == "user_annotation"}
    check(all(ranges.get(k["args"]["External id"]) == "compute" for k in kernels), "kernels belong to the compute range")
    check(len(kernels) == 20 and all(k["args"]["device"] == 0 for k in kernels), "the kernels' device")
    check({k["name"] for k in kernels} == {"axpy(float, float const*, float*, int)"},
          f"kernel names demangled: {sorted({k['name'] for k in kernels})}")
    check(all(ranges.get(c["args"]["External id"]) in ("copy_in", "copy_out") for c in copies), "copies to their ranges")
    rt_names = sorted({e["name"] for e in rt.values()})
    check(set(rt_names) <= {"cudaLaunchKernel", "cudaMemcpy", "cudaMemset", "cudaMemcpyAsync", "cudaMemsetAsync",
                            "cudaStreamSynchronize", "cudaDeviceSynchronize"} and "cudaLaunchKernel" in rt_names,
          f"runtime calls named as Kineto names them (no CUPTI version suffix): {rt_names}")
    check(all(k["ts"] >= rt[k["args"]["correlation"]]["ts"] for k in kernels), "no kernel starts before its launch")
    check(sorted({c["name"].split(" (")[0] for c in copies}) == ["Memcpy DtoH", "Memcpy HtoD"],
          f"copy names {sorted({c['name'] for c in copies})}")
    flows = {(e["ph"], e["id"]) for e in ev if e.get("cat") == "ac2g"}
    check(all(("s", k["args"]["correlation"]) in flows and ("f", k["args"]["correlation"]) in flows for k in kernels),
          "a launch arrow from every runtime call to its kernel")
    rc, out, err = run([TRAINPROF, "kernels", t[0]])
    check(rc == 0 and "axpy" in out, f"trainprof kernels sees them: {rc} {err}")
if os.environ.get("CUDA_SMOKE_FAKE"):
    d2 = tempfile.mkdtemp(prefix="tprof_cuda_nogpu_")
    p = subprocess.run([smoke, d2, "nogpu"], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"without a GPU the program still runs: {p.returncode} {p.stderr}")
    t2 = glob.glob(os.path.join(d2, "*.pt.trace.json.gz"))
    check(len(t2) == 1, f"and still writes its trace: {t2}")
    if t2:
        ev2 = json.load(gzip.open(t2[0]))["traceEvents"]
        cats = {e.get("cat") for e in ev2}
        check("user_annotation" in cats and not cats & {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime"},
              f"the CPU side only: {sorted(c for c in cats if c)}")
finish("CUPTI recorder")
