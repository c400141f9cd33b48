"""trainprof flops and trainprof mfu against an independent Python statement
of the formulas in docs/METRICS.md ("FLOPs and MFU"), on the shared toy
configs: the reference's test vectors through the CLI, table/CSV/JSON, mfu
arithmetic, mfu --trace step times recomputed from the trace, bad inputs."""
import csv
import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import GENTRACE, TRAINPROF, SKIP, check, finish, load_exact, run, scratch, steps_of, testdata  # noqa: E402

d = testdata()
CONFIGS = os.path.join(d, "model-configs") if d else None
if not CONFIGS or not os.path.isdir(CONFIGS):
    print("SKIP: ../shared/data/model-configs not found (set TRAINPROF_TESTDATA)")
    sys.exit(SKIP)


def cfg(name):
    return os.path.join(CONFIGS, name, "config.json")


# ---- the formulas, restated ------------------------------------------------

def hd_of(c):
    return c["head_dim"] if c.get("head_dim") is not None else c["hidden_size"] // c["num_attention_heads"]


def sw(s, w):
    return s * (s + 1) // 2 if s <= w else w * (w + 1) // 2 + (s - w) * w


def comp(s, r, topk=None):
    u = s if topk is None else min(s, topk * r - 1)
    qq, rem = divmod(u, r)
    return r * qq * (qq - 1) // 2 + qq * (rem + 1) + (max(0, s - u) * topk if topk else 0)


def dense(c, seqs, llama=False):
    H, nh, nkv, L, V, I = (c[k] for k in ("hidden_size", "num_attention_heads", "num_key_value_heads",
                                          "num_hidden_layers", "vocab_size", "intermediate_size"))
    hd = H // nh if llama else hd_of(c)
    q, kv = nh * hd, nkv * hd
    N = (3 * H * I + H * (2 * q + 2 * kv)) * L + V * H
    return N, 6 * N * sum(seqs), 12 * sum(s * s for s in seqs) * hd * nh * L


def moe(c, seqs):
    H, nh, nkv, L, V = (c[k] for k in ("hidden_size", "num_attention_heads", "num_key_value_heads",
                                       "num_hidden_layers", "vocab_size"))
    hd = hd_of(c)
    q, kv = nh * hd, nkv * hd
    N = (H * c["num_experts"] + 3 * H * c["moe_intermediate_size"] * c["num_experts_per_tok"]
         + H * (2 * q + 2 * kv)) * L + V * H
    return N, 6 * N * sum(seqs), 12 * sum(s * s for s in seqs) * hd * nh * L


def dsv3(c, seqs):
    H, nh, L, V, I = (c[k] for k in ("hidden_size", "num_attention_heads", "num_hidden_layers", "vocab_size",
                                     "intermediate_size"))
    qhd = c["qk_nope_head_dim"] + c["qk_rope_head_dim"]
    ql = c.get("q_lora_rank")
    A = H * nh * qhd if ql is None else H * ql + nh * qhd * ql
    A += H * (c["kv_lora_rank"] + c["qk_rope_head_dim"])
    A += nh * (qhd - c["qk_rope_head_dim"] + c["v_head_dim"]) * c["kv_lora_rank"] + nh * c["v_head_dim"] * H
    Fd = c["first_k_dense_replace"]
    N = (H * c["n_routed_experts"] + 3 * H * c["moe_intermediate_size"] * (c["num_experts_per_tok"]
         + c["n_shared_experts"]) + A) * (L - Fd) + (3 * H * I + A) * Fd + V * H
    return N, 6 * N * sum(seqs), 12 * sum(s * s for s in seqs) * L * qhd * nh


def gpt_oss(c, seqs):
    H, nh, nkv, L, V = (c[k] for k in ("hidden_size", "num_attention_heads", "num_key_value_heads",
                                       "num_hidden_layers", "vocab_size"))
    hd = hd_of(c)
    q, kv = nh * hd, nkv * hd
    N = (H * c["num_local_experts"] + 3 * H * c["intermediate_size"] * c["num_experts_per_tok"]
         + H * (2 * q + 2 * kv)) * L + V * H
    nf, ns = c["layer_types"].count("full_attention"), c["layer_types"].count("sliding_attention")
    att = 12 * (sum(s * s for s in seqs) * nf + sum(sw(s, c["sliding_window"]) for s in seqs) * ns) * hd * nh
    return N, 6 * N * sum(seqs), att


def dsv4(c, seqs):
    # the toy config has no layer_types: trainprof's default gives 3 HCA + 1 CSA for 4 layers
    L = c["num_hidden_layers"]
    lt = c.get("layer_types") or ["compressed_sparse_attention" if i >= 2 and i % 2 == 0
                                  else "heavily_compressed_attention" for i in range(L)]
    nhca, ncsa = lt.count("heavily_compressed_attention"), lt.count("compressed_sparse_attention")
    H, nh, hd, V = c["hidden_size"], c["num_attention_heads"], c["head_dim"], c["vocab_size"]
    ql, ol, og, hc = c["q_lora_rank"], c["o_lora_rank"], c["o_groups"], c["hc_mult"]
    di, ni = c["index_head_dim"], c["index_n_heads"]
    attn = H * ql + ql * nh * hd + H * hd + nh * hd * ol + og * ol * H
    moe_p = H * c["n_routed_experts"] + 3 * H * c["moe_intermediate_size"] * (c["num_experts_per_tok"]
                                                                             + c["n_shared_experts"])
    N = ((attn + moe_p + 2 * (2 + hc) * hc * hc * H) * L + 2 * H * hd * nhca
         + (4 * H * hd + 4 * H * di + ql * ni * di + H * ni) * ncsa + hc * hc * H + V * H)
    rc, rh = c["compress_rates"]["compressed_sparse_attention"], c["compress_rates"]["heavily_compressed_attention"]
    T = sum(seqs)
    sc = sum(sw(s, c["sliding_window"]) * L + comp(s, rh) * nhca + comp(s, rc, c["index_topk"]) * ncsa for s in seqs)
    att = 12 * sc * hd * nh + 6 * sum(comp(s, rc) for s in seqs) * di * ni * ncsa
    return N, 6 * N * T + 12 * hc * hc * H * L * T, att


def qwen35(c, seqs):
    H, nh, nkv, L, V = (c[k] for k in ("hidden_size", "num_attention_heads", "num_key_value_heads",
                                       "num_hidden_layers", "vocab_size"))
    hd = hd_of(c)
    nf, nl = c["layer_types"].count("full_attention"), c["layer_types"].count("linear_attention")
    lk = c["linear_num_key_heads"] * c["linear_key_head_dim"]
    nv = c["linear_num_value_heads"]
    lv = nv * c["linear_value_head_dim"]
    attnN = H * (3 * nh * hd + 2 * nkv * hd) * nf + (H * (2 * lk + 2 * lv + 2 * nv + lv)
                                                     + c["linear_conv_kernel_dim"] * (2 * lk + lv)) * nl
    if "num_experts" in c:
        mlp = (H * c["num_experts"] + 3 * H * c["moe_intermediate_size"] * c["num_experts_per_tok"]
               + 3 * H * c["shared_expert_intermediate_size"] + H) * L
    else:
        mlp = 3 * H * c["intermediate_size"] * L
    T = sum(seqs)
    N = mlp + attnN + V * H
    gdn = 15 * c["linear_key_head_dim"] * c["linear_value_head_dim"] * nv * T * nl
    return N, 6 * N * T, 12 * sum(s * s for s in seqs) * hd * nh * nf + gdn


def vit3(v, imgs, freeze=False):
    d, m, o, sm, hv, D = (v[k] for k in ("hidden_size", "intermediate_size", "out_hidden_size",
                                         "spatial_merge_size", "num_heads", "depth"))
    patch = d * v["in_channels"] * v["temporal_patch_size"] * v["patch_size"] ** 2
    N = patch + (2 * d * m + 4 * d * d) * D + (o + d * sm * sm) * (d * sm * sm) * (1 + len(v["deepstack_visual_indexes"]))
    return N, (2 if freeze else 6) * N * sum(imgs) + (4 if freeze else 12) * sum(s * s for s in imgs) * (d // hv) * hv * D


def vit2(v, imgs, freeze=False):
    D, hv, sm = v["depth"], v["num_heads"], v["spatial_merge_size"]
    if "embed_dim" in v:
        d, m, o, fac, nfull = v["embed_dim"], int(v["embed_dim"] * v["mlp_ratio"]), v["hidden_size"], 2, D
    else:
        d, m, o, fac, nfull = v["hidden_size"], v["intermediate_size"], v["out_hidden_size"], 3, len(v["fullatt_block_indexes"])
    N = (fac * d * m + 4 * d * d) * D + (o + d * sm * sm) * (d * sm * sm)
    f = 4 if freeze else 12
    att = f * sum(s * s for s in imgs) * (d // hv) * hv * nfull
    if nfull < D:
        w = (v["window_size"] // sm // v["patch_size"]) * sm
        att += (D - nfull) * f * sum(imgs) * w * w * (d // hv) * hv
    return N, (2 if freeze else 6) * N * sum(imgs) + att


def expected(name, seqs, imgs=(), freeze=False):
    """(params_active, linear, attention, params_vision, vision)"""
    c = json.load(open(cfg(name)))
    t = c.get("text_config", c)
    mt = c["model_type"]
    fam = {"llama": lambda: dense(t, seqs, llama=True), "seed_oss": lambda: dense(t, seqs, llama=True),
           "qwen2": lambda: dense(t, seqs), "qwen3": lambda: dense(t, seqs), "qwen2_vl": lambda: dense(t, seqs),
           "qwen2_5_vl": lambda: dense(t, seqs), "qwen3_vl": lambda: dense(t, seqs),
           "qwen3_moe": lambda: moe(t, seqs), "qwen3_vl_moe": lambda: moe(t, seqs),
           "qwen3_5": lambda: qwen35(t, seqs), "qwen3_5_moe": lambda: qwen35(t, seqs),
           "deepseek_v3": lambda: dsv3(t, seqs), "deepseek_v4": lambda: dsv4(t, seqs),
           "gpt_oss": lambda: gpt_oss(t, seqs)}[mt]
    N, lin, att = fam()
    NV, vis = 0, 0
    if "vision_config" in c:
        NV, vis = (vit2 if mt in ("qwen2_vl", "qwen2_5_vl") else vit3)(c["vision_config"], list(imgs), freeze)
        if not imgs:
            vis = 0
    return N, lin, att, NV, vis


def flops_json(name, seqs, imgs=None, extra=()):
    args = [TRAINPROF, "flops", "--config", cfg(name), "--seqlens", ",".join(map(str, seqs)), "--format", "json"]
    if imgs:
        args += ["--images", ",".join(map(str, imgs))]
    rc, out, err = run(args + list(extra))
    check(rc == 0, f"flops {name}: rc {rc}: {err}")
    return json.loads(out) if rc == 0 else None


# ---- the reference's vectors (TFLOP/s at delta_time = 1 s) -----------------
VECTORS = [
    ("qwen3_5_toy", [1024] * 4, None, 106.965220982784),
    ("qwen3_5_toy", [1024] * 4, [256, 512], 109.196454395904),
    ("qwen3_5_moe_toy", [1024] * 4, None, 16.88828116992),
    ("qwen3_5_moe_toy", [1024] * 4, [256, 512], 19.054284767232),
    ("gpt_oss_toy", [12, 5], None, 0.000326931456),
    ("deepseek_v4_toy", [12, 5], None, 0.000264658944),
]
for name, seqs, imgs, want in VECTORS:
    j = flops_json(name, seqs, imgs)
    if j:
        got = j["flops"]["total"] / 1e12
        check(abs(got - want) <= 1e-12 * want, f"{name} {seqs} {imgs}: {got!r} TFLOPs, want {want!r}")
        check(j["flops"]["total"] == round(want * 1e12), f"{name}: total {j['flops']['total']} not exact")

# ---- every toy config against the Python statement --------------------------
for name in sorted(os.listdir(CONFIGS)):
    if not os.path.isfile(cfg(name)):
        continue
    for seqs, imgs, freeze in (([4096, 4096], None, False), ([1000, 37, 1], [256, 512], False),
                               ([512], [64, 1024], True)):
        extra = ["--freeze-vit"] if freeze else []
        j = flops_json(name, seqs, imgs, extra)
        if not j:
            continue
        N, lin, att, NV, vis = expected(name, seqs, imgs or (), freeze)
        f = j["flops"]
        for key, got, want in (("params_active", j["params_active"], N), ("linear", f["linear"], lin),
                               ("attention", f["attention"], att), ("params_vision", j["params_vision"], NV),
                               ("vision", f["vision"], vis), ("total", f["total"], lin + att + vis)):
            check(abs(got - want) <= 1e-12 * max(1, abs(want)), f"{name} {seqs} {imgs} freeze={freeze}: {key} {got} != {want}")
        check(j["tokens"] == sum(seqs) and j["sequences"] == len(seqs), f"{name}: token counts")

# ---- the three formats agree -------------------------------------------------
base = [TRAINPROF, "flops", "--config", cfg("qwen3_5_toy"), "--seqlens", "1024x4", "--images", "256,512"]
rc, tab, err = run(base)
check(rc == 0 and "109.196454" in tab and "linear" in tab and "vision" in tab and "qwen3_5" in tab,
      f"flops table: {rc} {tab} {err}")
rc, out, err = run(base + ["--format", "csv"])
rows = dict(r for r in csv.reader(io.StringIO(out)))
check(rc == 0 and rows.get("key") == "value" and float(rows["flops_total"]) == 109196454395904
      and rows["model_type"] == "qwen3_5" and int(rows["image_tokens"]) == 768, f"flops csv: {out}")
j = flops_json("qwen3_5_toy", [1024] * 4, [256, 512])
check(j and j["flops"]["total"] == float(rows.get("flops_total", 0)), "csv and json totals differ")

# ---- mfu: the arithmetic, recomputed ------------------------------------------
q = cfg("qwen3_toy")
N, lin, att, _, _ = expected("qwen3_toy", [4096, 4096])
fl = lin + att
rc, out, err = run([TRAINPROF, "mfu", "--config", q, "--seqlens", "4096,4096", "--step-time", "2.0",
                    "--device", "H100", "--world-size", "8", "--format", "json"])
check(rc == 0, f"mfu: {rc} {err}")
if rc == 0:
    j = json.loads(out)
    s = j["steps"][0]
    want = {"flops_achieved(T)": fl / 2 / 1e12 * 8, "flops_promised(T)": 989 * 8, "mfu": fl / 2 / 1e12 / 989,
            "tokens_per_second(M)": 8192 * 8 / 2 / 1e6, "tflops_per_gpu": fl / 2 / 1e12,
            "training/avg_sample_seq_len": 4096}
    for k, v in want.items():
        check(abs(s[k] - v) <= 1e-12 * abs(v), f"mfu {k}: {s[k]} != {v}")
    check(j["flops_per_step"] == fl and j["world_size"] == 8 and j["peak_tflops"] == 989, f"mfu header: {j}")
rc, out, err = run([TRAINPROF, "mfu", "--config", q, "--seqlens", "4096x2", "--step-time", "2",
                    "--peak-tflops", "500", "--device", "H100", "--format", "csv"])
r = list(csv.DictReader(io.StringIO(out)))
check(rc == 0 and len(r) == 1 and abs(float(r[0]["mfu"]) - fl / 2 / 1e12 / 500) < 1e-12, f"--peak-tflops wins: {out} {err}")
rc, out, err = run([TRAINPROF, "mfu", "--config", q, "--seqlens", "4096x2", "--step-time", "2", "--device", "NVIDIA H200"])
check(rc == 0 and "MFU" in out and "989" in out, f"mfu table: {out} {err}")

# ---- mfu above 100%: a warning naming the inputs, exit 1 with --strict -----------
fast = fl / 1e12 / 989 / 1.07  # a step time that gives 107%
for extra, code in (([], 0), (["--strict"], 1), (["--strict", "--format", "json"], 1), (["--format", "csv"], 0)):
    rc, out, err = run([TRAINPROF, "mfu", "--config", q, "--seqlens", "4096,4096", "--step-time", repr(fast),
                        "--device", "H100", "--world-size", "8"] + extra)
    check(rc == code and "107.0%" in err and "above 100%" in err and "989 TFLOP/s" in err and "--device H100" in err
          and "8192" in err and "world size 8" in err and "from --step-time" in err and out,
          f"mfu at 107% {extra}: rc {rc} (want {code}), stderr {err!r}")
rc, out, err = run([TRAINPROF, "mfu", "--config", q, "--seqlens", "4096,4096", "--step-time", repr(fast * 1.2),
                    "--device", "H100", "--strict"])
check(rc == 0 and "warning" not in err, f"mfu at 89% --strict: rc {rc}, stderr {err!r}")
rc, out, _ = run([TRAINPROF, "mfu", "--help"])
check("--strict" in out, "mfu --help: no --strict")

# ---- mfu --trace: step times from the ProfilerStep spans ---------------------
tmp = scratch("tprof_flops_")
tr = os.path.join(tmp, "t.json")
rc, _, err = run([GENTRACE, "--size", "4M", "--steps", "3", "--layers", "2", "--rank", "0", "--world", "1", "-o", tr])
check(rc == 0, f"gentrace: {err}")
doc = load_exact(tr)
steps = steps_of(doc["traceEvents"])
check(len(steps) >= 1, "the generated trace has steps")
rc, out, err = run([TRAINPROF, "mfu", "--config", q, "--seqlens", "4096,4096", "--trace", tr, "--format", "json"])
check(rc == 0, f"mfu --trace: {rc} {err}")
if rc == 0:
    j = json.loads(out)
    check(j["device"].startswith("NVIDIA H100") and j["peak_tflops"] == 989, "the trace's device is used")
    check(len(j["steps"]) == len(steps), f"{len(j['steps'])} steps, want {len(steps)}")
    for (ts, dur, nm), s in zip(steps, j["steps"]):
        sec = dur / 1e9
        check(s["step"] == int(nm.split("#")[1]) and abs(s["step_time_s"] - sec) < 1e-12, f"step {nm}: {s}")
        check(abs(s["mfu"] - fl / sec / 1e12 / 989) < 1e-12, f"step {nm} mfu {s['mfu']}")
    mean = sum(d for _, d, _ in steps) / len(steps) / 1e9
    check(abs(j["mean"]["step_time_s"] - mean) < 1e-12, "mean step time")
    check(abs(j["mean"]["tokens_per_second(M)"] - 8192 / mean / 1e6) < 1e-12, "mean tokens/s")
rc, out, err = run([TRAINPROF, "mfu", "--config", q, "--seqlens", "4096", "--trace", tr, tr, "--format", "csv"])
check(rc == 0 and len(out.strip().splitlines()) == 2 + 2 * len(steps), f"two traces in CSV: {out} {err}")

# ---- bad inputs -----------------------------------------------------------------
def bad(args, code, *needles):
    rc, out, err = run([TRAINPROF] + args)
    check(rc == code and all(n in err for n in needles), f"{args}: rc {rc} (want {code}), stderr {err!r}")


bad(["flops", "--config", os.path.join(tmp, "none.json"), "--seqlens", "8"], 3, "none.json", "No such file")
badj = os.path.join(tmp, "bad.json")
open(badj, "w").write('{"model_type": "qwen3",\n "hidden_size": 8,}')
bad(["flops", "--config", badj, "--seqlens", "8"], 3, "bad.json", "byte 42")
unk = os.path.join(tmp, "unk.json")
open(unk, "w").write('{"model_type": "gemma3"}')
bad(["flops", "--config", unk, "--seqlens", "8"], 3, "gemma3", "qwen3_5_moe_text", "llama")
miss = os.path.join(tmp, "miss.json")
open(miss, "w").write('{"model_type": "qwen3", "hidden_size": 8}')
bad(["flops", "--config", miss, "--seqlens", "8"], 3, "intermediate_size", "missing")
bad(["flops", "--config", tmp, "--seqlens", "8"], 3, tmp)
bad(["flops", "--seqlens", "8"], 2, "--config")
bad(["flops", "--config", q], 2, "--seqlens")
bad(["flops", "--config", q, "--seqlens", "8,x"], 2, "--seqlens")
bad(["flops", "--config", q, "--seqlens", "-3"], 2, "--seqlens")
bad(["flops", "--config", q, "--seqlens", "8", "--format", "xml"], 2, "xml")
bad(["mfu", "--config", q, "--seqlens", "8", "--step-time", "1", "--device", "Tesla V100"], 2, "V100", "--peak-tflops")
bad(["mfu", "--config", q, "--seqlens", "8", "--step-time", "1"], 2, "--device")
bad(["mfu", "--config", q, "--seqlens", "8", "--device", "H100"], 2, "--step-time")
bad(["mfu", "--config", q, "--seqlens", "8", "--step-time", "0", "--device", "H100"], 2, "--step-time")
bad(["mfu", "--config", q, "--seqlens", "8", "--step-time", "1", "--peak-tflops", "-1"], 2, "--peak-tflops")
bad(["mfu", "--config", q, "--seqlens", "8", "--device", "H100", "--trace", os.path.join(tmp, "no.json")], 3, "no.json")
bad(["mfu", "--config", unk, "--seqlens", "8", "--step-time", "1", "--device", "H100"], 3, "gemma3")
# LoRA (docs/METRICS.md "LoRA"): the base at 4·N·T, adapters r·(in+out)·layers at 6, attention unchanged
qc = json.load(open(cfg("qwen3_toy")))
seqs = [1024, 512]
N, lin, att = dense(qc, seqs)
H, L, hd = qc["hidden_size"], qc["num_hidden_layers"], hd_of(qc)
qd, kvd = qc["num_attention_heads"] * hd, qc["num_key_value_heads"] * hd
loraP = 16 * (H + qd) * L + 16 * (H + kvd) * L
rc, out, err = run([TRAINPROF, "flops", "--config", cfg("qwen3_toy"), "--seqlens", "1024,512", "--format", "json",
                    "--lora", "r=16,targets=q_proj+v_proj"])
j = json.loads(out) if rc == 0 else {}
check(rc == 0 and j.get("params_lora") == loraP and j["flops"]["linear"] == (4 * N + 6 * loraP) * sum(seqs)
      and j["flops"]["attention"] == att, f"flops --lora: rc {rc} {err} {j}")
bad(["flops", "--config", cfg("qwen3_toy"), "--seqlens", "8", "--lora", "r=16,targets=qkv"], 2, "qkv", "q_proj")
bad(["flops", "--config", cfg("qwen3_toy"), "--seqlens", "8", "--lora", "targets=q_proj"], 2, "--lora")
bad(["flops", "--config", cfg("gpt_oss_toy"), "--seqlens", "8", "--lora", "r=4"], 2, "gpt_oss")
rc, out, err = run([TRAINPROF, "mfu", "--config", cfg("qwen3_toy"), "--seqlens", "1024,512", "--step-time", "1",
                    "--device", "H100", "--format", "json", "--lora", "r=16,targets=q_proj+v_proj"])
j = json.loads(out) if rc == 0 else {}
total = (4 * N + 6 * loraP) * sum(seqs) + att
tf = total / 1e12
got = j["steps"][0]["tflops_per_gpu"] if rc == 0 else None
check(rc == 0 and abs(got - tf) <= 1e-12 * tf and j["flops_per_step"] == total,
      f"mfu --lora: rc {rc} {err} {out[:300]}")

rc, out, _ = run([TRAINPROF, "flops", "--help"])
check(rc == 0 and "--seqlens" in out, "flops --help")
rc, out, _ = run([TRAINPROF, "--help"])
check(" flops " in out and " mfu " in out, "the command list names flops and mfu")

finish("flops and mfu")
