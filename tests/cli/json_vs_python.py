"""The tokenizer against Python's json: every real trace and generated edge
cases must decode to the same value; invalid documents must be refused by both."""
import json
import os
import random

from common import scratch, JSON_DUMP, check, finish, run, testdata

tmp = scratch("tprof_json_")


def compare(path, expect):
    rc, out, err = run([JSON_DUMP, path])
    check(rc == 0, f"{path}: json_dump rc={rc} {err.strip()}")
    if rc == 0:
        try:
            got = json.loads(out)
        except ValueError as e:
            check(False, f"{path}: output is not JSON: {e}")
            return
        check(got == expect, f"{path}: decoded value differs from Python's json")


# generated edge cases
rnd = random.Random(1234)
ALPHABET = ["a", "Z", " ", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t", "\u0001", "\u001f", "\u007f",
            "\u00e9", "\u0800", "\uffff", "\U0001F600", "\U0010FFFF", "\u2028", "<", "{", "]"]


def rstr():
    return "".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, 12)))


def rnum():
    k = rnd.randint(0, 6)
    if k == 0: return rnd.randint(-10**18, 10**18)
    if k == 1: return 0
    if k == 2: return rnd.uniform(-1e6, 1e6)
    if k == 3: return rnd.choice([1e-300, 1e300, -2.5e-7, 5e-324, 1.7976931348623157e308])
    if k == 4: return 10**rnd.randint(19, 40)  # big integers
    return rnd.randint(-1000, 1000) / 8


def rval(depth=0):
    k = rnd.randint(0, 9 if depth < 6 else 5)
    if k <= 1: return rstr()
    if k <= 3: return rnum()
    if k == 4: return rnd.choice([True, False, None])
    if k == 5: return rstr()
    if k <= 7: return [rval(depth + 1) for _ in range(rnd.randint(0, 5))]
    return {rstr(): rval(depth + 1) for _ in range(rnd.randint(0, 5))}


for i in range(200):
    v = rval()
    text = json.dumps(v, ensure_ascii=bool(i % 2), indent=(None if i % 3 else rnd.randint(0, 3)))
    if i % 5 == 0:  # exponent and number spellings Python never writes
        text = json.dumps({"n": [1]}).replace("1", "1E+2") if i % 10 == 0 else text
    p = os.path.join(tmp, f"case{i}.json")
    with open(p, "w", encoding="utf-8") as f:
        f.write(text)
    compare(p, json.loads(text))

# hand-written spellings
for text in ['{"a":-0.0e-0,"b":1E2,"c":-12.500e+3,"d":0}', ' [ ] ', '"\\ud83d\\ude00"', '{"":""}',
             '[1,[2,[3,[4,{"k":[{}]}]]]]', '"\\u00e9\\u20ac\\/"', '\t\r\n  true  ']:
    p = os.path.join(tmp, "hand.json")
    with open(p, "w") as f:
        f.write(text)
    compare(p, json.loads(text))

# invalid documents: both refuse
INVALID = ['{"a":1,}', '[1,]', '{"a" 1}', '{1:2}', '[01]', '[1.]', '[.5]', '[-]', '[1e]', '[+1]', '["a\x01"]',
           '["\\x"]', '["\\u12G4"]', '[true false]', '{"a":1}}', '[', '{"a":', 'nul', '[1] [2]', "['a']",
           '[0x10]', '[-01]', '"abc', '']
for i, text in enumerate(INVALID):
    p = os.path.join(tmp, f"bad{i}.json")
    with open(p, "w") as f:
        f.write(text)
    try:
        json.loads(text)
        py_ok = True
    except ValueError:
        py_ok = False
    rc, _, err = run([JSON_DUMP, p])
    check(not py_ok, f"reference accepted {text!r}")
    check(rc != 0 and "byte" in err, f"{text!r}: expected an error with a byte offset, rc={rc} err={err!r}")
# invalid UTF-8 (Python refuses to decode it too)
for i, raw in enumerate([b'["\xc0\x80"]', b'["\xed\xa0\x80"]', b'["\xf5\x80\x80\x80"]', b'["\xe2\x82"]', b'["\xff"]']):
    p = os.path.join(tmp, f"utf{i}.json")
    with open(p, "wb") as f:
        f.write(raw)
    try:
        json.loads(raw.decode("utf-8"))
        py_ok = True
    except (ValueError, UnicodeDecodeError):
        py_ok = False
    rc, _, err = run([JSON_DUMP, p])
    check(not py_ok and rc == 3 and "UTF-8" in err, f"invalid UTF-8 {raw!r}: rc={rc} err={err!r}")

# every real trace
data = testdata()
if data is None:
    print("SKIP (visible): real traces not checked, ../shared/data absent")
else:
    import gzip
    n = 0
    for root, _, files in os.walk(os.path.join(data, "traces")):
        for name in sorted(files):
            if not (name.endswith(".json") or name.endswith(".json.gz")):
                continue
            p = os.path.join(root, name)
            op = gzip.open if name.endswith(".gz") else open
            with op(p, "rb") as f:
                expect = json.load(f)
            compare(p, expect)
            n += 1
    check(n >= 30, f"expected at least 30 real JSON files, found {n}")
    print(f"compared {n} real trace files")

finish("tokenizer agrees with Python's json")
