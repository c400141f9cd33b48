"""The reader's fast event path and its generic token path agree, event by
event, on every real trace, a generated trace and malformed variants."""
import glob
import os
import tempfile

from common import GENTRACE, check, finish, run, testdata

PATH_DIFF = os.environ.get("PATH_DIFF", "build/tests/path_diff")
tmp = tempfile.mkdtemp(prefix="tprof_fast_")
files = []
gen = os.path.join(tmp, "gen.json")
rc, _, err = run([GENTRACE, "--size", "3M", "--seed", "7", "-o", gen])
check(rc == 0, f"gentrace failed: {err}")
files.append(gen)
text = open(gen, "rb").read()
# malformed and unusual variants: escapes in keys and values, odd types, cuts
variants = {
    "esc_key.json": text.replace(b'"name"', b'"n\\u0061me"', 50),
    "esc_val.json": text.replace(b'"cat": "kernel"', b'"cat": "k\\u0065rnel"', 20),
    "types.json": text.replace(b'"dur": ', b'"dur": [1], "x": ', 30).replace(b'"ts": ', b'"ts": true, "y": ', 10),
    "nums.json": text.replace(b'"pid": ', b'"pid": 1.5e2, "z": -0.0e-0, "w": ', 40),
    "cut.json": text[: len(text) // 3],
    "bad.json": text[: len(text) // 2] + b"}}" + text[len(text) // 2:],
}
for name, data in variants.items():
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(data)
    files.append(p)
data = testdata()
if data:
    files += sorted(glob.glob(os.path.join(data, "traces", "**", "*.json*"), recursive=True))
else:
    print("SKIP (visible): real traces not compared, ../shared/data absent")
rc, out, err = run([PATH_DIFF] + files)
for line in out.splitlines():
    check(line.startswith("same "), line)
check(len(out.splitlines()) == len(files), f"path_diff reported {len(out.splitlines())} of {len(files)} files")
finish(f"fast and generic paths agree on {len(files)} files")
