"""Inputs at the edges of their formats: each read as documented, with a
clear remark (issue 14's smaller findings). Generated data only.

- a duplicate "traceEvents" key: the first array is read, the second skipped
  with a note, in the analyses and in merge alike;
- a NUL (\\u0000) in a kernel name: shown as U+2400, never cutting the name;
- zstd --long=31 (a 2 GiB window): read, not called corrupt;
- a UTF-8 byte-order mark, gzip data or a pickle where JSON is expected: the
  byte in hex and what the file is;
- several files claiming one rank: a warning naming them."""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import TRAINPROF, check, finish, run, scratch  # noqa: E402

tmp = scratch("tprof-edges-")


def write(name, data):
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return p


def kernel(name, ts, dur, stream=7):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": stream}}


first = [kernel("gemm_a", 10 + i * 10, 5) for i in range(6)]
second = [kernel("other_b", 500 + i * 10, 3) for i in range(4)]
doc = ('{"schemaVersion": 1, "traceEvents": ' + json.dumps(first) + ', "distributedInfo": {"rank": 0}, '
       '"traceEvents": ' + json.dumps(second) + '}')
dup = write("dup.json", doc)
rc, out, err = run([TRAINPROF, "kernels", "--format", "json", dup])
check(rc == 0, f"duplicate traceEvents: exit 0 ({rc}: {err})")
rows = {r["key"]: r["count"] for t in json.loads(out)["traces"] for r in t["rows"]} if rc == 0 else {}
check(rows == {"gemm_a": 6}, f"the first traceEvents array is the one read: {rows}")
check('second "traceEvents"' in err and "skipped" in err, f"the skipped array is said: {err.strip()}")
merged = os.path.join(tmp, "dup-merged.json")
rc, out, err = run([TRAINPROF, "merge", dup, "-o", merged])
check(rc == 0 and 'second "traceEvents"' in err, f"merge says it too ({rc}: {err.strip()[-300:]})")
if rc == 0:
    names = [e.get("name") for e in json.load(open(merged))["traceEvents"] if e.get("ph") == "X"]
    check(names.count("gemm_a") == 6 and "other_b" not in names, f"merge writes the first array only: {names}")

# a NUL inside a name
nul = write("nul.json", '{"traceEvents": [' + json.dumps(kernel("gemm\u0000_tail_of_the_name", 1, 5)) + ']}')
rc, out, err = run([TRAINPROF, "kernels", nul])
check(rc == 0 and "gemm\u2400_tail_of_the_name" in out, f"a NUL in a name is shown, not cutting it: {out}")
rc, out, err = run([TRAINPROF, "kernels", "--format", "json", nul])
check(rc == 0 and json.loads(out)["traces"][0]["rows"][0]["key"] == "gemm\u2400_tail_of_the_name",
      f"the same in JSON: {out[-200:]}")

# zstd with a window above 2^27: written from a pipe, the frame asks for 2 GiB. Read when the
# compressed input is large enough to need it (a window at most 1024 times its size) or its size is
# unknown (a pipe); else refused as "window too large", so a tiny file cannot make it reserve 2 GiB.
plain = write("long.json", json.dumps({"traceEvents": first}))
if shutil.which("zstd"):
    import base64

    def zstd_long(src_path, dst_path):
        with open(src_path, "rb") as src, open(dst_path, "wb") as dst:
            subprocess.run(["zstd", "-q", "--long=31", "-c"], stdin=src, stdout=dst, check=True)
    small = os.path.join(tmp, "long.json.zst")
    zstd_long(plain, small)
    rc, out, err = run([TRAINPROF, "kernels", "--format", "json", small])
    check(rc == 3 and "window too large" in err and "zstd -d --long=31" in err,
          f"a small zstd --long=31 file: window too large, with the remedy ({rc}: {err.strip()})")
    with open(small, "rb") as f:
        rc, out, err = run([TRAINPROF, "kernels", "--format", "json", "-"], stdin=f.read())
    check(rc == 0 and '"gemm_a"' in out, f"the same through a pipe is read ({rc}: {err.strip()})")
    # 3 MiB of incompressible text: the compressed file is large enough for a 2 GiB window
    big_doc = json.dumps({"traceName": base64.b64encode(os.urandom(3 << 20)).decode(), "traceEvents": first})
    big_plain = write("long-big.json", big_doc)
    big = os.path.join(tmp, "long-big.json.zst")
    zstd_long(big_plain, big)
    rc, out, err = run([TRAINPROF, "kernels", "--format", "json", big])
    check(rc == 0 and '"gemm_a"' in out, f"a large zstd --long=31 file is read ({rc}: {err.strip()})")
    # the fuzzer's input: 150 bytes declaring a 2 GiB window
    bomb = write("window-bomb.zst", base64.b64decode(
        "KLUv/QSokWNjbOUKAOZVqyRCB/BWIKjGVvTLVxEDMuqeh1lJ0TLyJEHjzGW4AQMlQAIBCAM3ADUAOgAUA26s6VN02Fr83kWeNPZ4Wvb8"
        "f2gBAOBhAADwZuNgIJIjigT2k2l7v1IaV0uLJmnQ7zldRbJFeorCvwkzOjNZ5BD0PuxJBgxxcekYGy9IdonXAt3SEfqwSXgkV5UCnK9tEA=="))
    rc, out, err = run([TRAINPROF, "info", bomb])
    check(rc == 3 and "window too large" in err, f"a tiny frame asking for 2 GiB is refused ({rc}: {err.strip()})")
else:
    print("SKIP (partly): no zstd command")

# a byte-order mark, gzip or a pickle where JSON is expected
cfg = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
       "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 256}
bom = write("bom.json", b"\xef\xbb\xbf" + json.dumps(cfg).encode())
rc, out, err = run([TRAINPROF, "flops", "--config", bom, "--seqlens", "64"])
check(rc == 3 and "0xEF" in err and "byte-order mark" in err, f"a BOM is named: {err.strip()}")
gz = write("config.json.gz", subprocess.run(["gzip", "-c", bom], capture_output=True, check=True).stdout)
rc, out, err = run([TRAINPROF, "flops", "--config", gz, "--seqlens", "64"])
check(rc == 3 and "0x1F" in err and "gzip" in err, f"gzip data is named: {err.strip()}")
pkl = write("snap.pickle", b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00}\x94.")
rc, out, err = run([TRAINPROF, "kernels", pkl])
check(rc == 3 and "0x80" in err and "pickle" in err and "trainprof mem" in err, f"a pickle is named: {err.strip()}")

# several files claiming one rank
copies = []
for i in range(3):
    copies.append(write(f"run{i}.json", json.dumps({"traceEvents": first, "distributedInfo": {"rank": 0}})))
rc, out, err = run([TRAINPROF, "ranks", *copies])
check("3 files claim rank 0" in err and copies[0] in err, f"several files of one rank are said: {err.strip()}")
rc, out, err = run([TRAINPROF, "ranks", copies[0], write("r1.json", json.dumps(
    {"traceEvents": first, "distributedInfo": {"rank": 1}}))])
check("claim rank" not in err, f"distinct ranks give no such warning: {err.strip()}")

finish("input edges: duplicate traceEvents, NUL in names, zstd --long, BOM/gzip/pickle hints, shared ranks")
