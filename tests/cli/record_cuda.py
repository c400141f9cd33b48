"""The CUPTI recorder (TPROF_CUDA builds, on a machine with a GPU; skipped
otherwise): kernels, memcpys and memsets in the window, linked to the runtime
calls that launched them and to the CPU range around those calls."""
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
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    copies = [e for e in ev if e.get("cat") == "gpu_memcpy"]
    sets = [e for e in ev if e.get("cat") == "gpu_memset"]
    rt = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "cuda_runtime"}
    check(len(kernels) == 20, f"10 kernels in each of the 2 recorded steps: {len(kernels)}")
    check(len(copies) == 4 and len(sets) == 2, f"memcpys {len(copies)}, memsets {len(sets)}")
    check(all(k["args"]["correlation"] in rt for k in kernels), "every kernel has its launch")
    ranges = {e["args"]["External id"]: e["name"] for e in ev if e.get("cat") == "user_annotation"}
    check(all(ranges.get(k["args"]["External id"]) == "compute" for k in kernels), "kernels belong to the compute range")
    check(all(ranges.get(c["args"]["External id"]) in ("copy_in", "copy_out") for c in copies), "copies to their ranges")
    rc, out, err = run([TRAINPROF, "kernels", t[0]])
    check(rc == 0 and "axpy" in out, f"trainprof kernels sees them: {rc} {err}")
finish("CUPTI recorder")
