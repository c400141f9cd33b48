#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets: tests/fuzz/corpus/<target>/.

The seeds are committed; this script is how they were made, so that they can
be read, changed and made again (python3 tests/fuzz/gen_seeds.py). It writes
only the files named here: seeds that others added by hand stay. Every seed
is at most 4 KiB (run.sh's -max_len) except the log's 5000-deep line, whose
target reads up to 8 KiB.

The first byte of a json, log or merge seed is an option byte (the chunk
size; the merge options), as the targets read it."""
import gzip
import os
import pickle
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")
MAX = 4096


def put(target, name, data, limit=MAX):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > limit:
        sys.exit(f"{target}/{name}: {len(data)} bytes, over {limit}")
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def cut(data, frac):
    return data[: int(len(data) * frac)]


# ---- json: the tokenizer (first byte: chunk size and first window) ----
put("json", "mixed", '{"a":[1,2.5e3,-0,"x\\u00e9\\ud83d\\ude00"],"b":{"c":null,"d":true}}')
put("json", "empty_array", "[]")
put("json", "escaped_quote", '"\\\\"')
put("json", "nested", '[1e-3,{"":false}]')
put("json", "depth_512", "[" * 512 + "]" * 512)  # TPROF_JSON_MAX_DEPTH
put("json", "depth_513", "[" * 513 + "]" * 513)  # one over: refused
put("json", "long_string", '["' + "abcdefghij" * 30 + '\\n\\u00e9\\ud83d\\ude00", "' + "z" * 200 + '"]')
put("json", "numbers", "[0,-0,1.5,-1.5e-300,1E+308,123456789012345678901234567890,0.000001,9007199254740993]")
put("json", "bad_utf8", b'["\xc3\x28", "\xed\xa0\x80", "\xf4\x90\x80\x80"]')
put("json", "cut", '{"traceEvents":[{"ph":"X","name":"k","ts":1.5,"dur')

# ---- trace: the whole reader ----
KINETO = (
    '{"schemaVersion":1,"distributedInfo":{"rank":0,"world_size":2,"backend":"nccl"},"traceEvents":[\n'
    '{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100.5,"dur":50},\n'
    '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":101,"dur":2,"args":{"correlation":7}},\n'
    '{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,"tid":7,"ts":110,"dur":5.25,'
    '"args":{"device":0,"stream":7,"correlation":7}},\n'
    '{"ph":"s","id":7,"pid":1,"tid":1,"ts":101,"cat":"ac2g","name":"ac2g"},\n'
    '{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":102,"args":{"Bytes":4}}],\n'
    '"deviceProperties":[{"id":0,"name":"H100","numSms":132}]}\n'
)
COMMS = (
    '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":100,"dur":50,'
    '"args":{"Collective name":"allreduce","dtype":"Float","In msg nelems":1000,"Out msg nelems":1000,"Group size":4}},'
    '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":120,"dur":2,"args":{"correlation":11}},'
    '{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":9,"ts":200,"dur":10,'
    '"args":{"device":0,"stream":9,"correlation":11}}]}'
)
ALLTOALLV = (  # an all-to-all-v with its split sizes and group ranks (collectives' alltoall_pairs)
    '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":100,"dur":50,'
    '"args":{"Collective name":"all_to_allv","dtype":"BFloat16","In msg nelems":7168,"Out msg nelems":4096,'
    '"Group size":4,"Process Group Name":"ep","Seq":3,"In split size":"[3, 0, 2, 2]","Out split size":"[1, 1, ..., 1, ...]",'
    '"Process Group Ranks":"[4, 5, 6, 7]"}},'
    '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":120,"dur":2,"args":{"correlation":11}},'
    '{"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv","pid":0,"tid":9,"ts":200,"dur":10,'
    '"args":{"device":0,"stream":9,"correlation":11}}],"distributedInfo":{"rank":5}}'
)
ASCEND = '[{"ph":"X","name":"k","pid":800,"tid":3,"ts":"1704161511420306.491","dur":1.35,"args":{"Task Type":"AI_CORE","Stream Id":3}}]'


def kineto_layout(n, rank):
    """N kernels in Kineto's layout (repeated args values: the skip cache and
    the event shapes), then a ProfilerStep; over 2 KiB reads in parallel
    chunks in fuzz_trace (256-byte chunks, from 8 of them)."""
    s = '{"schemaVersion": 1, "traceEvents": [\n'
    for i in range(1, n + 1):
        s += (
            f'  {{"ph": "X", "cat": "kernel", "name": "k{i % 4}", "pid": 0, "tid": 7, "ts": {1000 + i * 10}.5, '
            f'"dur": 3, "args": {{"device": 0, "stream": 7, "correlation": {i}, "grid": [{i % 3 * 100}, 1, 1], '
            f'"Input Dims": [[8, 2048], []]}}}},\n'
        )
    s += '  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 900, "dur": 900}\n'
    s += f'],\n"distributedInfo": {{"rank": {rank}}}}}\n'
    return s


LAYOUT = kineto_layout(17, 1)
put("trace", "kineto", KINETO)
put("trace", "comms", COMMS)
put("trace", "alltoallv", ALLTOALLV)
put("trace", "ascend_string_ts", ASCEND)
put("trace", "kineto.gz", gzip.compress(KINETO.encode(), mtime=0))
put("trace", "kineto.zst", subprocess.run(["zstd", "-q", "-c"], input=KINETO.encode(), stdout=subprocess.PIPE,
                                         check=True).stdout)
put("trace", "layout", LAYOUT)
put("trace", "kineto_cut50", cut(KINETO, 0.5))
put("trace", "kineto_cut90", cut(KINETO, 0.9))
put("trace", "layout_cut70", cut(LAYOUT, 0.7))
put("trace", "kineto.gz_cut50", cut(gzip.compress(KINETO.encode(), mtime=0), 0.5))
# the edges of the format: a second traceEvents, a NUL in a name, a dur out of range
put("trace", "edges",
    '{"traceEvents":[{"ph":"X","cat":"kernel","name":"a\\u0000b","pid":0,"tid":7,"ts":1,"dur":1e30,'
    '"args":{"device":0,"stream":7}}],"traceEvents":[{"ph":"X","name":"x","ts":2,"dur":"abc"}]}')

# ---- merge: option byte (0x21: align by the first step, ...), input, 0xFF, input ----
def two(a, b, flags=0x21):
    return bytes([flags]) + a.encode() + b"\xff" + b.encode()


put("merge", "kineto", two(KINETO, KINETO.replace('"rank":0', '"rank":1')))
put("merge", "layout", two(kineto_layout(8, 0), kineto_layout(8, 1)))
put("merge", "comms", two(COMMS, COMMS))
put("merge", "cut", two(KINETO, cut(KINETO, 0.6), 0x02))
put("merge", "array_and_object", two(ASCEND, KINETO, 0x03))

# ---- log: first byte the chunk size, then the log ----
put("log", "formats",
    b"\x07" + b'{"step": 5, "loss": 2.5e-1, "mfu": NaN}\n'
    b"step=6: {'flops_achieved(T)': 1.5, 'x': {'y': inf}}\n")
put("log", "tqdm",
    b"\x10 12%|#  | 120/1000 [01:23<10:12, 1.44it/s, loss=2.31, lr=3e-4]\r"
    b" 13%|#  | 121/1000 [01:24<10:12, 3.50s/it, total_loss: 1.2]\n")
put("log", "llmc_megatron",
    b"\x20step    5/74 | loss 10.98 (+0.00z)| norm 1.5 | lr 6.00e-06 | 1234.56 ms | 45.1% bf16 MFU | 123456 tok/s\n"
    b"\x1b[32mINFO\x1b[0m step 7 loss=inf time=1.2s\n"
    b" iteration 100/ 1000 | lm loss: 2.3E+00 | elapsed time per iteration (ms): 12.5 |\n")
# deep nesting: a JSON-lines value and a Python-repr value 5000 levels deep
# (the parsers stop at a documented depth; before, they recursed without
# bound and a longer line overflowed the stack)
put("log", "deep_brackets", b"\x40" + b'{"step": 1, "loss": ' + b"[" * 5000 + b"\n", limit=8192)
put("log", "deep_parens", b"\x40" + b"step=2: {'loss': " + b"(" * 3000 + b"\n")

# ---- pickle: memory snapshots written by Python's pickle, hand-made ones,
# a refused GLOBAL, and snapshots cut short ----
put("pickle", "list_ints", b"\x80\x04]\x94(K\x01\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00G?\xf8\x00\x00\x00\x00\x00\x00e.")
put("pickle", "global_refused", b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00ls\x85R.")
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
for p in (2, 3, 4, 5):
    put("pickle", f"snapshot_p{p}", pickle.dumps(snap, protocol=p))
put("pickle", "snapshot_old", pickle.dumps(old, protocol=4))
put("pickle", "list_of_segments", pickle.dumps([seg], protocol=4))
# a snapshot whose bytes are mostly device_traces (alloc/free pairs on one
# device, as torch writes them), cut at 50% and 90%: both cuts fall inside
# the history, whose complete entries must be kept
hist = []
for i in range(14):
    a = 4096 + 512 * i
    hist.append({"action": "alloc", "addr": a, "size": 512, "stream": 0, "time_us": 10 + 2 * i, "frames": fr})
    if i % 3:
        hist.append({"action": "free_completed", "addr": a, "size": 512, "stream": 0, "time_us": 11 + 2 * i,
                     "frames": fr})
big = {"segments": [seg], "device_traces": [hist], "allocator_settings": {}}
full = pickle.dumps(big, protocol=4)
put("pickle", "history", full)
put("pickle", "history_cut50", cut(full, 0.5))
put("pickle", "history_cut90", cut(full, 0.9))
put("pickle", "snapshot_p4_cut50", cut(pickle.dumps(snap, protocol=4), 0.5))
put("pickle", "snapshot_p4_cut90", cut(pickle.dumps(snap, protocol=4), 0.9))

# ---- config: YAML files, and command lines (NUL-separated) ----
with open(os.path.join(HERE, "..", "..", "configs", "tiny.yaml"), "rb") as f:
    put("config", "tiny.yaml", f.read())
put("config", "profile.yaml", 'train:\n  profile:\n    enable: yes\n    start_step: 3\n    end_step: 5\n    trace_dir: "/t"\n')
put("config", "argv", b"--train.profile.enable\0--train.profile.start_step\0005\0x.yaml\0--train.profile.end_step=9\0--a.b\0c")
put("config", "anchors.yaml", "a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\ntrain: {profile: {enable: *c}}\n")
put("config", "deep_flow.yaml", "train: " + "[" * 200 + "]" * 200 + "\n")

# ---- op_cost: an op name, Input Dims, Input type, Concrete Inputs (NUL-separated) ----
BF = '"c10::BFloat16"'
put("op_cost", "addmm", f'aten::addmm\0[[768],[788,768],[768,768],[],[]]\0[{BF},{BF},{BF},"Scalar","Scalar"]\0["","","","1","1"]')
put("op_cost", "flash", f'aten::_flash_attention_forward\0[[8,4096,16,128],[8,4096,16,128],[8,4096,16,128],[],[]]\0[{BF}]'
    '\0["","","","","","4096","4096","0.0","True"]')
put("op_cost", "conv", f'aten::cudnn_convolution\0[[4,3,224,224],[768,3,16,16],[],[],[],[]]\0[{BF},{BF}]'
    '\0["","","[0, 0]","[16, 16]","[1, 1]","1"]')
put("op_cost", "conv_bwd", f'aten::convolution_backward\0[[10,64,56,56],[10,64,56,56],[64,64,3,3],[],[],[],[],[],[],[],[]]'
    f'\0[{BF},{BF},{BF}]\0["","","","[64]","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","1","[True, True, False]"]')
put("op_cost", "layer_norm", f'aten::native_layer_norm\0[[4,197,768],[],[768],[768],[]]\0[{BF},"",{BF},{BF},"Scalar"]'
    '\0["","[768]","","","1e-12"]')
put("op_cost", "mean", f'aten::mean\0[[10,512,7,7],[],[],[]]\0[{BF},"","Scalar",""]\0["","[-1, -2]","True",""]')
put("op_cost", "mul_broadcast", 'aten::mul\0[[8,1,4],[3,1],[]]\0["float","float",""]\0[]')
put("op_cost", "huge", 'aten::bmm\0[[99999999999,99999999999,99999999999],[99999999999,99999999999,99999999999]]\0["float"]\0[]')
