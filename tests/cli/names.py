"""Kernel names in tables (issue 16): shortened the way users know them
(template arguments as <...>, no parameter list, no return type), kept
distinct within a table, --wide in full, fitted to a terminal's width; CSV and
JSON keep the full names, byte for byte."""
import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import TRAINPROF, check, finish, run, scratch, testdata  # noqa: E402

tmp = scratch("tprof-names-")
PAD = "at::detail::Array<char*, 3>, " * 4  # long enough that the old middle cut hid the functor
NAMES = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, %s7>(int, float)" % PAD,
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, %s7>(int, float)" % PAD,
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align1>(Params)",
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x4_nn_align1>(Params)",
    # alike in every form within 90 columns: only numbering tells them apart
    "void k<1>(%sint, %sint)" % ("float, " * 20, "float, " * 20),
    "void k<1>(%slong, %sint)" % ("float, " * 20, "float, " * 20),
    "void (anonymous namespace)::softmax_warp_forward<float, float, float, 8, false>(float*, float const*, int)",
    "Memcpy HtoD (Pageable -> Device)",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
]
SHORT = {
    NAMES[2]: "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align1>",
    NAMES[3]: "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x4_nn_align1>",
    NAMES[6]: "(anonymous namespace)::softmax_warp_forward<...>",
    NAMES[7]: "Memcpy HtoD (Pageable -> Device)",
    NAMES[8]: "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
}
events = []
for i, name in enumerate(NAMES):
    for k in range(i + 1):  # distinct totals: a fixed order
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": 1000 * (i * 20 + k),
                       "dur": 100 + 10 * i, "args": {"device": 0, "stream": 7}})
trace = os.path.join(tmp, "names.json")
with open(trace, "w") as f:
    json.dump({"traceEvents": events}, f)


def name_cells(out):
    """The first column's cells of each text table in OUT (as wide as its dashes)."""
    lines, cells = out.splitlines(), []
    for i, line in enumerate(lines):
        if i and re.fullmatch(r"-+(  -+)*", line) and lines[i - 1].startswith("kernel"):
            w = len(line.split("  ")[0])
            for row in lines[i + 1:]:
                if not row.strip() or row.startswith("...") or row.startswith("#N"):
                    break
                cells.append(row[:w].rstrip())
    return cells


# the table: shortened, one row per kernel, all distinct
rc, out, err = run([TRAINPROF, "kernels", trace])
check(rc == 0, f"kernels: exit {rc}: {err}")
cells = name_cells(out)
check(len(cells) == len(NAMES), f"kernels: {len(cells)} rows, not {len(NAMES)}: {cells}")
check(len(set(cells)) == len(cells), f"kernels: names shown alike: {cells}")
for full, short in SHORT.items():
    check(short in cells, f"kernels: {full!r} not shown as {short!r}: {cells}")
check(any(c.startswith("at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<...>,") for c in cells),
      f"kernels: the functor does not tell the two elementwise kernels apart: {cells}")
check(all(len(c) <= 90 for c in cells), f"kernels: a name wider than 90 columns: {cells}")
numbered = [c for c in cells if re.search(r" #\d$", c)]
check(not any(c.startswith("void ") for c in cells if c not in numbered), f"kernels: a return type shown: {cells}")
check(len(numbered) == 2 and numbered[0].endswith(" #2") != numbered[1].endswith(" #2"),
      f"kernels: the two names alike in full are not numbered #1 and #2: {numbered}")
check("#N: different kernels whose shortened names are alike" in out, "kernels: no footnote for the numbers")

# --wide: in full
rc, out, err = run([TRAINPROF, "kernels", "--wide", trace])
check(rc == 0, f"kernels --wide: exit {rc}: {err}")
wide = name_cells(out)
check(sorted(wide) == sorted(NAMES), f"kernels --wide: not the full names: {wide}")
check("#N:" not in out, "kernels --wide: a footnote without numbers")

# CSV and JSON: full names, the same bytes with and without --wide
for fmt in ("csv", "json"):
    a = subprocess.run([TRAINPROF, "kernels", "--format", fmt, trace], capture_output=True)
    b = subprocess.run([TRAINPROF, "kernels", "--format", fmt, "--wide", trace], capture_output=True)
    check(a.returncode == 0 and a.stdout == b.stdout, f"kernels --format {fmt}: --wide changes the output")
    for name in NAMES:
        check(json.dumps(name)[1:-1] in a.stdout.decode() or name in a.stdout.decode(),
              f"kernels --format {fmt}: {name!r} not in full")

# summary's top kernels: the same names
rc, out, err = run([TRAINPROF, "summary", "--top", "20", trace])
check(rc == 0, f"summary: exit {rc}: {err}")
block = out.split("== top kernels (all traces) ==\n")[1].split("\n\n")[0].splitlines()
shown = [re.sub(r"^\s*[\d.]+%\s+\S+ \S+\s+\S+\s+", "", line) for line in block if "%" in line[:10]]
check(len(shown) == len(NAMES) and len(set(shown)) == len(shown), f"summary: names shown alike: {shown}")
check(SHORT[NAMES[2]] in shown, f"summary: cutlass kernel not shortened: {shown}")
check(any(line.lstrip().startswith("#N:") for line in block), "summary: no footnote for the numbers")


def on_terminal(args, cols, env=None):
    """ARGS run with stdout a terminal COLS wide (0: no size, so COLUMNS counts).

    The parent keeps the slave end open: reading the master after the last
    slave closes may lose what the kernel had not yet passed on (seen under
    load), so it drains until the child has exited and a second goes quiet."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    p = subprocess.Popen(args, stdout=slave, stderr=subprocess.DEVNULL, env=env)
    data = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            data += os.read(master, 65536)
        elif p.poll() is not None:
            break
    os.close(slave)
    os.close(master)
    return p.returncode, data.decode().replace("\r\n", "\n")


for cols, env in ((120, None), (0, dict(os.environ, COLUMNS="130")), (200, None)):
    width = cols or 130
    rc, out = on_terminal([TRAINPROF, "kernels", trace], cols, env)
    check(rc == 0, f"kernels on a terminal of {width}: exit {rc}")
    table = [line for line in out.splitlines() if line.startswith(("kernel", "--")) or line[:1].isalpha()]
    check(all(len(line) <= width for line in out.splitlines() if not line.startswith(("==", "GPU", "by class", "#N"))),
          f"kernels on a terminal of {width}: a line wider: {max(map(len, out.splitlines()))}")
    cells = name_cells(out)
    check(len(cells) == len(NAMES) and len(set(cells)) == len(cells), f"terminal {width}: names alike: {cells}")
    dash = [line for line in out.splitlines() if line.startswith("--")][0]
    check(len(dash) == width or max(len(c) for c in cells) < len(dash.split("  ")[0]) + 1,
          f"terminal {width}: the table is not fitted ({len(dash)} columns)")

# real traces: every kernel table over all rows shows distinct names for distinct kernels
data = testdata()
if data:
    for rel in ("HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz",
                "param/et_replay/tests/inputs/resnet_kineto.json.gz",
                "TraceLens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz"):
        path = os.path.join(data, "traces", rel)
        if not os.path.exists(path):
            continue
        rc, out, err = run([TRAINPROF, "kernels", "--top", "0", path])
        rcj, js, _ = run([TRAINPROF, "kernels", "--top", "0", "--format", "json", path])
        rows = json.loads(js)["traces"][0]["rows"]
        cells = name_cells(out)
        check(rc == 0 and len(cells) == len(rows), f"{rel}: {len(cells)} rows shown of {len(rows)}")
        check(len(set(cells)) == len(set(r["key"] for r in rows)), f"{rel}: different kernels shown alike")
else:
    print("note: ../shared/data not found; the real traces are not checked")

finish("kernel names shortened, distinct, --wide in full, fitted to terminals, CSV/JSON whole")
