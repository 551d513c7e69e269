#!/usr/bin/env python3
"""Writes small transformer encoders and a decoder prefill in the subgraph spellings real exporters
write, other than gen_bert.py's, gen_decoder.py's and gen_vit.py's, one case folder per variant
(OUT/<variant>/model.onnx, OUT/<variant>/test_data_set_0/input_<i>.pb), seeded random weights:

  t5          HF T5 encoder (v1.1): T5LayerNorm as Pow -> ReduceMean -> Add eps -> Sqrt -> Div(1, .)
              (torch's rsqrt) -> Mul(x, .) -> Mul(weight, .); no bias anywhere; unscaled scores plus a
              relative position bias (Gather from a bucket table -> Transpose -> Unsqueeze) to which
              the mask is added once; gated GELU (tanh form, constants on the left) FFN.
  distilbert  DistilBERT: q / sqrt(d) before the product, masked_fill as Where(mask == 0, finfo.min,
              scores) (the scores Where's third input), GELU as cdf * x with cdf = 0.5 * (1 + erf).
  roberta     RoBERTa through torch 2.x's scaled_dot_product_attention: q and K^T each multiplied
              by d^-0.25, the mask (1 - mask) * finfo.min added, LayerNormalization written out.
  whisper     Whisper-tiny-shaped encoder: Conv1d + GELU twice (stride 2), a sinusoidal position
              Add, pre-LN blocks, k projection without bias, q and K^T each scaled by d^-0.25 after
              the split into heads (openai-whisper), LayerNormalization with eps 1e-5.
  whisper_hf  the same encoder as transformers before 4.48 exports it with dynamic axes (optimum): the
              bmm form below, its shapes read at run time (bsz = Shape(x)[0], rows bsz * N), no mask.
  neox        GPT-NeoX / Phi-style prefill without a cache: one LayerNorm feeding attention and
              MLP in parallel, packed qkv per head, partial rotary (first half of the head dim,
              Slice-based rotate_half, Concat with the rest) on Q and K already in heads, the causal
              mask a constant buffer Sliced to the sequence length used by Where(mask, scores,
              finfo.min), scores Div by sqrt(d) after the product.
  bart        BART / Marian / HF Whisper as transformers before 4.48 write them, exported with static
              shapes (sizes as numbers): q_proj(x) * d^-0.5 before the split into heads, heads flattened to (B * N, S, D)
              for bmm, scores Reshaped to (B, N, S, T) to add the mask and back to (B * N, S, T)
              for Softmax, the inverted mask as masked_fill(inverted.bool(), finfo.min).
  deit        DeiT: patch Conv, class and distillation tokens Concat, LayerNormalization eps 1e-6,
              qkv as one Linear unbound, two heads averaged.

usage: gen_variants.py OUT_DIR [--only t5,whisper,...] [--seed 0]
Expected outputs: node tools/gen_models/ort_expected.js OUT_DIR/<variant> (tools/gen_models/README.md).
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_writer import GraphWriter  # noqa: E402

FINFO_MIN = float(np.finfo(np.float32).min)


class Writer(GraphWriter):
    """GraphWriter plus the pieces every variant spells the same way."""

    def const(self, name, value, dtype=np.float32):
        if not any(i.name == name for i in self.inits):
            self.init(name, np.array(value, dtype=dtype))
        return name

    def ints(self, *v):
        return self.const("i64_" + "_".join(str(x).replace("-", "m") for x in v), list(v), np.int64)

    def linear(self, x, prefix, n_in, n_out, bias=True):
        w = self.weight(prefix + ".weight", (n_in, n_out), std=1.0 / math.sqrt(n_in))
        y = self.node("MatMul", [x, w], [prefix + ".mm"])
        if bias:
            y = self.node("Add", [y, self.weight(prefix + ".bias", (n_out,))], [prefix + ".out"])
        return y

    def heads(self, x, p, n, d, perm=(0, 2, 1, 3)):
        r = self.node("Reshape", [x, self.ints(0, 0, n, d)], [p + "_r"])
        return self.node("Transpose", [r], [p + "_t"], perm=list(perm))

    def merge(self, ctx, p, h):
        t = self.node("Transpose", [ctx], [p + ".ctx_t"], perm=[0, 2, 1, 3])
        return self.node("Reshape", [t, self.ints(0, 0, h)], [p + ".ctx_r"])

    def layer_norm_written(self, x, p, size, eps):
        """LayerNorm as torch exports it below opset 17."""
        g = self.init(p + ".gamma", (1.0 + 0.1 * self.rng.standard_normal(size)).astype(np.float32))
        b = self.init(p + ".beta", (0.1 * self.rng.standard_normal(size)).astype(np.float32))
        mean = self.node("ReduceMean", [x], [p + ".mean"], axes=[-1])
        d = self.node("Sub", [x, mean], [p + ".d"])
        var = self.node("ReduceMean", [self.node("Pow", [d, self.const("two", 2.0)], [p + ".sq"])], [p + ".var"],
                        axes=[-1])
        rs = self.node("Sqrt", [self.node("Add", [var, self.const(f"eps{eps:g}", eps)], [p + ".ve"])], [p + ".rs"])
        n = self.node("Div", [d, rs], [p + ".n"])
        return self.node("Add", [self.node("Mul", [n, g], [p + ".scaled"]), b], [p + ".out"])

    def attention(self, q, k, v, p, mask_add=None):
        """Softmax(q k^T + mask) v of (B, N, S, D) heads, k given as K^T."""
        sc = self.node("MatMul", [q, k], [p + ".scores"])
        if mask_add is not None:
            sc = self.node("Add", [sc, mask_add], [p + ".masked"])
        pr = self.node("Softmax", [sc], [p + ".probs"], axis=-1)
        return self.node("MatMul", [pr, v], [p + ".ctx"])


def additive_mask(w, minimum):
    """(1 - mask) * minimum, (B, 1, 1, S), from the int64 attention_mask input."""
    m = w.node("Cast", [w.node("Unsqueeze", ["attention_mask", w.ints(1, 2)], ["mask.unsq"])], ["mask.float"],
               to=TensorProto.FLOAT)
    inv = w.node("Sub", [w.const("one", 1.0), m], ["mask.inv"])
    return w.node("Mul", [inv, w.const("mask_min", minimum)], ["mask.add"])


def gelu_erf_form1(w, x, p):
    """nn.functional.gelu as torch exports it: Mul(Mul(x, Add(Erf(Div(x, sqrt2)), 1)), 0.5)."""
    e = w.node("Erf", [w.node("Div", [x, w.const("sqrt2", math.sqrt(2.0))], [p + ".g_div"])], [p + ".g_erf"])
    a = w.node("Add", [e, w.const("one", 1.0)], [p + ".g_add"])
    return w.node("Mul", [w.node("Mul", [x, a], [p + ".g_mul"]), w.const("half", 0.5)], [p + ".gelu"])


def ids_io(S, vocab, rng, pad):
    ids = rng.integers(0, vocab, size=(1, S), dtype=np.int64)
    mask = np.ones((1, S), dtype=np.int64)
    mask[:, S - pad:] = 0
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"])]
    return inputs, [ids, mask]


def t5(w, S=64, H=256, N=4, L=3, F=512, vocab=1024, buckets=32, max_distance=128):
    D = H // N
    inputs, data = ids_io(S, vocab, w.rng, pad=6)
    x = w.node("Gather", [w.weight("shared", (vocab, H), std=1.0), "input_ids"], ["emb"], axis=0)
    # The bidirectional relative position buckets (HF's _relative_position_bucket), folded to a table
    # as a static-shape export folds its arange arithmetic.
    rel = np.arange(S)[None, :] - np.arange(S)[:, None]
    nb = buckets // 2
    bucket = (rel > 0).astype(np.int64) * nb
    n = np.abs(rel)
    exact = nb // 2
    large = exact + (np.log(np.maximum(n, 1) / exact) / math.log(max_distance / exact) * (nb - exact)).astype(np.int64)
    bucket += np.where(n < exact, n, np.minimum(large, nb - 1))
    w.init("position_buckets", bucket.astype(np.int64))
    table = w.weight("relative_attention_bias", (buckets, N), std=1.0)
    pb = w.node("Gather", [table, "position_buckets"], ["pos_bias.values"], axis=0)  # (S, S, N)
    pb = w.node("Transpose", [pb], ["pos_bias.t"], perm=[2, 0, 1])
    pb = w.node("Unsqueeze", [pb, w.ints(0)], ["pos_bias.u"])  # (1, N, S, S)
    bias = w.node("Add", [pb, additive_mask(w, FINFO_MIN)], ["position_bias"])

    def rms(x, p):
        var = w.node("ReduceMean", [w.node("Pow", [x, w.const("two", 2.0)], [p + ".sq"])], [p + ".var"], axes=[-1])
        rs = w.node("Sqrt", [w.node("Add", [var, w.const("eps1e-06", 1e-6)], [p + ".ve"])], [p + ".rs"])
        inv = w.node("Div", [w.const("one", 1.0), rs], [p + ".rsqrt"])  # torch's rsqrt
        y = w.node("Mul", [x, inv], [p + ".n"])
        g = w.init(p + ".weight", (1.0 + 0.1 * w.rng.standard_normal(H)).astype(np.float32))
        return w.node("Mul", [g, y], [p + ".out"])

    def gelu_new(x, p):  # 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), constants left
        cube = w.node("Mul", [w.const("c044715", 0.044715), w.node("Pow", [x, w.const("three", 3.0)], [p + ".x3"])],
                      [p + ".cx3"])
        inner = w.node("Mul", [w.const("sqrt_2_pi", math.sqrt(2.0 / math.pi)), w.node("Add", [x, cube], [p + ".s"])],
                       [p + ".in"])
        t = w.node("Add", [w.const("one", 1.0), w.node("Tanh", [inner], [p + ".tanh"])], [p + ".t1"])
        return w.node("Mul", [w.node("Mul", [w.const("half", 0.5), x], [p + ".hx"]), t], [p + ".gelu"])

    for l in range(L):
        p = f"l{l}"
        h = rms(x, p + ".ln1")
        q = w.heads(w.linear(h, p + ".q", H, H, bias=False), p + ".q", N, D)
        k = w.heads(w.linear(h, p + ".k", H, H, bias=False), p + ".k", N, D)
        v = w.heads(w.linear(h, p + ".v", H, H, bias=False), p + ".v", N, D)
        kt = w.node("Transpose", [k], [p + ".kT"], perm=[0, 1, 3, 2])
        ctx = w.attention(q, kt, v, p, bias)
        x = w.node("Add", [x, w.linear(w.merge(ctx, p, H), p + ".o", H, H, bias=False)], [p + ".res1"])
        h = rms(x, p + ".ln2")
        g = gelu_new(w.linear(h, p + ".wi0", H, F, bias=False), p)
        u = w.linear(h, p + ".wi1", H, F, bias=False)
        f = w.linear(w.node("Mul", [g, u], [p + ".gated"]), p + ".wo", F, H, bias=False)
        x = w.node("Add", [x, f], [p + ".res2"])
    y = rms(x, "final_ln")
    return inputs, data, y, [1, S, H]


def distilbert(w, S=128, H=384, N=6, L=3, vocab=2048):
    D, F = H // N, 4 * H
    inputs, data = ids_io(S, vocab, w.rng, pad=10)
    e = w.node("Add", [w.node("Gather", [w.weight("word", (vocab, H)), "input_ids"], ["emb.word"], axis=0),
                       w.node("Gather", [w.weight("pos", (512, H)), w.init("pos_ids", np.arange(S).reshape(1, S))],
                              ["emb.pos"], axis=0)], ["emb.sum"])
    x = w.layer_norm(e, "emb.ln", H, 1e-12)
    # mask = (attention_mask == 0).view(B, 1, 1, S): masked_fill's condition.
    eq = w.node("Equal", ["attention_mask", w.const("zero_i64", 0, np.int64)], ["mask.eq"])
    hidden = w.node("Reshape", [eq, w.ints(1, 1, 1, -1)], ["mask.hidden"])
    for l in range(L):
        p = f"l{l}"
        q = w.heads(w.linear(x, p + ".q", H, H), p + ".q", N, D)
        q = w.node("Div", [q, w.const("sqrt_d", math.sqrt(D))], [p + ".q_scaled"])
        k = w.heads(w.linear(x, p + ".k", H, H), p + ".k", N, D)
        v = w.heads(w.linear(x, p + ".v", H, H), p + ".v", N, D)
        kt = w.node("Transpose", [k], [p + ".kT"], perm=[0, 1, 3, 2])
        sc = w.node("MatMul", [q, kt], [p + ".scores"])
        sc = w.node("Where", [hidden, w.const("finfo_min", FINFO_MIN), sc], [p + ".filled"])
        pr = w.node("Softmax", [sc], [p + ".probs"], axis=-1)
        ctx = w.node("MatMul", [pr, v], [p + ".ctx"])
        o = w.linear(w.merge(ctx, p, H), p + ".o", H, H)
        x = w.layer_norm(w.node("Add", [o, x], [p + ".res1"]), p + ".ln1", H, 1e-12)
        f = w.linear(x, p + ".ff1", H, F)
        # cdf = 0.5 * (1.0 + erf(x / sqrt(2))); return x * cdf
        e = w.node("Erf", [w.node("Div", [f, w.const("sqrt2", math.sqrt(2.0))], [p + ".g_div"])], [p + ".g_erf"])
        cdf = w.node("Mul", [w.const("half", 0.5), w.node("Add", [w.const("one", 1.0), e], [p + ".g_add"])],
                     [p + ".cdf"])
        g = w.node("Mul", [f, cdf], [p + ".gelu"])
        x = w.layer_norm(w.node("Add", [w.linear(g, p + ".ff2", F, H), x], [p + ".res2"]), p + ".ln2", H, 1e-12)
    return inputs, data, x, [1, S, H]


def roberta(w, S=128, H=384, N=6, L=3, vocab=2048):
    D, F = H // N, 4 * H
    inputs, data = ids_io(S, vocab, w.rng, pad=10)
    word = w.node("Gather", [w.weight("word", (vocab, H)), "input_ids"], ["emb.word"], axis=0)
    pos = w.weight("pos", (514, H))
    pos_ids = w.init("pos_ids", np.arange(2, S + 2).reshape(1, S))  # RoBERTa's positions start after padding_idx
    e = w.node("Add", [word, w.node("Gather", [pos, pos_ids], ["emb.pos"], axis=0)], ["emb.sum"])
    x = w.layer_norm_written(e, "emb.ln", H, 1e-5)
    mask = additive_mask(w, FINFO_MIN)
    root_scale = w.const("sdpa_scale", 1.0 / math.sqrt(math.sqrt(D)))  # sqrt(1 / sqrt(d)), on q and on K^T
    for l in range(L):
        p = f"l{l}"
        q = w.heads(w.linear(x, p + ".q", H, H), p + ".q", N, D)
        k = w.heads(w.linear(x, p + ".k", H, H), p + ".k", N, D)
        v = w.heads(w.linear(x, p + ".v", H, H), p + ".v", N, D)
        kt = w.node("Transpose", [k], [p + ".kT"], perm=[0, 1, 3, 2])
        qs = w.node("Mul", [q, root_scale], [p + ".q_s"])
        ks = w.node("Mul", [kt, root_scale], [p + ".kT_s"])
        ctx = w.attention(qs, ks, v, p, mask)
        o = w.linear(w.merge(ctx, p, H), p + ".o", H, H)
        x = w.layer_norm_written(w.node("Add", [o, x], [p + ".res1"]), p + ".ln1", H, 1e-5)
        g = gelu_erf_form1(w, w.linear(x, p + ".ff1", H, F), p)
        x = w.layer_norm_written(w.node("Add", [w.linear(g, p + ".ff2", F, H), x], [p + ".res2"]), p + ".ln2", H, 1e-5)
    return inputs, data, x, [1, S, H]


def whisper(w, mels=80, frames=200, H=384, N=6, L=2, hf=False):
    D, F, S = H // N, 4 * H, frames // 2
    inputs = [helper.make_tensor_value_info("input_features", TensorProto.FLOAT, [1, mels, frames])]
    data = [w.rng.standard_normal((1, mels, frames)).astype(np.float32)]
    c1 = w.node("Conv", ["input_features", w.weight("conv1.weight", (H, mels, 3), std=1 / math.sqrt(3 * mels)),
                         w.weight("conv1.bias", (H,))], ["conv1"], kernel_shape=[3], pads=[1, 1], strides=[1])
    c1 = gelu_erf_form1(w, c1, "conv1")
    c2_weight = w.weight("conv2.weight", (H, H, 3), std=1 / math.sqrt(3 * H))
    c2 = w.node("Conv", [c1, c2_weight, w.weight("conv2.bias", (H,))], ["conv2"], kernel_shape=[3], pads=[1, 1],
                strides=[2])
    c2 = gelu_erf_form1(w, c2, "conv2")
    x = w.node("Transpose", [c2], ["frames"], perm=[0, 2, 1])
    inv = np.exp(-math.log(10000) / (H // 2 - 1) * np.arange(H // 2))
    t = np.arange(S)[:, None] * inv[None, :]
    w.init("positional_embedding", np.concatenate([np.sin(t), np.cos(t)], axis=1).astype(np.float32))
    x = w.node("Add", [x, "positional_embedding"], ["x0"])
    quarter = w.const("d_m025", D ** -0.25)
    for l in range(L):
        p = f"l{l}"
        h = w.layer_norm(x, p + ".ln1", H, 1e-5)
        if hf:
            x = w.node("Add", [x, whisper_hf_attention(w, h, p, H, N, D)], [p + ".res1"])
        else:
            x = w.node("Add", [x, whisper_attention(w, h, p, H, N, D, quarter)], [p + ".res1"])
        h = w.layer_norm(x, p + ".ln2", H, 1e-5)
        g = gelu_erf_form1(w, w.linear(h, p + ".ff1", H, F), p)
        x = w.node("Add", [x, w.linear(g, p + ".ff2", F, H)], [p + ".res2"])
    return inputs, data, w.layer_norm(x, "ln_post", H, 1e-5), [1, S, H]


def whisper_attention(w, h, p, H, N, D, quarter):
    """openai-whisper: q and K^T each scaled by d^-0.25 after the split into heads."""
    q = w.heads(w.linear(h, p + ".q", H, H), p + ".q", N, D)
    k = w.heads(w.linear(h, p + ".k", H, H, bias=False), p + ".k", N, D, perm=(0, 2, 3, 1))
    v = w.heads(w.linear(h, p + ".v", H, H), p + ".v", N, D)
    ctx = w.attention(w.node("Mul", [q, quarter], [p + ".q_s"]), w.node("Mul", [k, quarter], [p + ".k_s"]), v, p)
    return w.linear(w.merge(ctx, p, H), p + ".o", H, H)


def whisper_hf(w):
    return whisper(w, hf=True)


def whisper_hf_attention(w, h, p, H, N, D):
    """transformers' WhisperAttention before 4.48, exported with dynamic axes: sizes read off shapes."""
    shape = w.node("Shape", [h], [p + ".shape"])
    bsz = w.node("Gather", [shape, w.const("index0", 0, np.int64)], [p + ".bsz"], axis=0)
    tgt = w.node("Gather", [shape, w.const("index1", 1, np.int64)], [p + ".tgt_len"], axis=0)
    ub = w.node("Unsqueeze", [bsz, w.ints(0)], [p + ".bsz_u"])
    ut = w.node("Unsqueeze", [tgt, w.ints(0)], [p + ".tgt_u"])
    rows = w.node("Unsqueeze", [w.node("Mul", [bsz, w.const("num_heads", N, np.int64)], [p + ".rows"]), w.ints(0)],
                  [p + ".rows_u"])
    flat = w.node("Concat", [rows, w.ints(-1), w.ints(D)], [p + ".proj_shape"], axis=0)

    def bmm_heads(x, name, seq):  # _shape(x, seq, bsz).view(*proj_shape)
        heads = w.node("Concat", [ub, seq, w.ints(N), w.ints(D)], [name + ".view"], axis=0)
        t = w.node("Transpose", [w.node("Reshape", [x, heads], [name + "_r"])], [name + "_t"], perm=[0, 2, 1, 3])
        return w.node("Reshape", [t, flat], [name + "_flat"])

    q = bmm_heads(w.node("Mul", [w.linear(h, p + ".q", H, H), w.const("scaling", D ** -0.5)], [p + ".q_scaled"]),
                  p + ".q", ut)
    k = bmm_heads(w.linear(h, p + ".k", H, H, bias=False), p + ".k", w.ints(-1))
    v = bmm_heads(w.linear(h, p + ".v", H, H), p + ".v", w.ints(-1))
    sc = w.node("MatMul", [q, w.node("Transpose", [k], [p + ".kT"], perm=[0, 2, 1])], [p + ".scores"])
    ctx = w.node("MatMul", [w.node("Softmax", [sc], [p + ".probs"], axis=-1), v], [p + ".ctx3"])
    ctx = w.node("Reshape", [ctx, w.node("Concat", [ub, w.ints(N), ut, w.ints(D)], [p + ".ctx_shape"], axis=0)],
                 [p + ".ctx"])
    t = w.node("Transpose", [ctx], [p + ".ctx_t"], perm=[0, 2, 1, 3])
    out = w.node("Reshape", [t, w.node("Concat", [ub, ut, w.ints(H)], [p + ".out_shape"], axis=0)], [p + ".ctx_r"])
    return w.linear(out, p + ".o", H, H)


def neox(w, S=64, H=256, N=4, L=2, vocab=1024, max_positions=256):
    D, F, R = H // N, 4 * H, (H // N) // 2  # rotary on the first R of each head's D
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])]
    data = [w.rng.integers(0, vocab, size=(1, S), dtype=np.int64)]
    x = w.node("Gather", [w.weight("embed_in", (vocab, H), std=1.0), "input_ids"], ["emb"], axis=0)
    # The sequence length read at run time, as a dynamic-axes export reads it.
    seq = w.node("Gather", [w.node("Shape", ["input_ids"], ["ids.shape"]), w.ints(1)], ["seq_len"], axis=0)
    # The causal buffer: bias[:, :, :S, :S] of a (1, 1, P, P) bool constant.
    w.init("causal_bias", np.tril(np.ones((max_positions, max_positions), dtype=bool)).reshape(1, 1, max_positions,
                                                                                               max_positions))
    causal = w.node("Slice", ["causal_bias", w.ints(0, 0), w.node("Concat", [seq, seq], ["seq2"], axis=0),
                              w.ints(2, 3)], ["causal"])
    inv = 1.0 / (10000.0 ** (np.arange(0, R, 2, dtype=np.float64) / R))
    ang = np.outer(np.arange(max_positions, dtype=np.float64), inv)
    emb = np.concatenate([ang, ang], axis=1)
    w.init("cos_cached", np.cos(emb).astype(np.float32))
    w.init("sin_cached", np.sin(emb).astype(np.float32))
    cos = w.node("Slice", ["cos_cached", w.ints(0), seq, w.ints(0)], ["cos"])  # (S, R), broadcast over (B, N)
    sin = w.node("Slice", ["sin_cached", w.ints(0), seq, w.ints(0)], ["sin"])
    big = w.ints(1 << 62)

    def rotary(t, p):  # t (B, N, S, D): rotate the first R dims, keep the rest
        rot = w.node("Slice", [t, w.ints(0), w.ints(R), w.ints(3)], [p + ".rot"])
        keep = w.node("Slice", [t, w.ints(R), big, w.ints(3)], [p + ".pass"])
        x1 = w.node("Slice", [rot, w.ints(0), w.ints(R // 2), w.ints(3)], [p + ".x1"])
        x2 = w.node("Slice", [rot, w.ints(R // 2), big, w.ints(3)], [p + ".x2"])
        half = w.node("Concat", [w.node("Neg", [x2], [p + ".neg"]), x1], [p + ".rotate_half"], axis=-1)
        e = w.node("Add", [w.node("Mul", [rot, cos], [p + ".c"]), w.node("Mul", [half, sin], [p + ".s"])], [p + ".emb"])
        return w.node("Concat", [e, keep], [p + ".rotary"], axis=-1)

    for l in range(L):
        p = f"l{l}"
        h = w.layer_norm(x, p + ".ln", H, 1e-5)  # one LayerNorm for attention and MLP (use_parallel_residual)
        qkv = w.linear(h, p + ".qkv", H, 3 * H)
        qkv = w.node("Reshape", [qkv, w.ints(0, 0, N, 3 * D)], [p + ".qkv_r"])  # per head [q | k | v]
        qkv = w.node("Transpose", [qkv], [p + ".qkv_t"], perm=[0, 2, 1, 3])
        q, k, v = (w.node("Slice", [qkv, w.ints(i * D), w.ints((i + 1) * D), w.ints(3)], [f"{p}.{n}"])
                   for i, n in enumerate("qkv"))
        q, k = rotary(q, p + ".q"), rotary(k, p + ".k")
        sc = w.node("MatMul", [q, w.node("Transpose", [k], [p + ".kT"], perm=[0, 1, 3, 2])], [p + ".scores"])
        sc = w.node("Div", [sc, w.const("sqrt_d", math.sqrt(D))], [p + ".scaled"])
        sc = w.node("Where", [causal, sc, w.const("finfo_min", FINFO_MIN)], [p + ".causal"])
        ctx = w.node("MatMul", [w.node("Softmax", [sc], [p + ".probs"], axis=-1), v], [p + ".ctx"])
        attn = w.linear(w.merge(ctx, p, H), p + ".dense", H, H)
        mlp = w.linear(gelu_erf_form1(w, w.linear(h, p + ".fc_in", H, F), p), p + ".fc_out", F, H)
        x = w.node("Add", [w.node("Add", [attn, mlp], [p + ".parallel"]), x], [p + ".res"])
    y = w.layer_norm(x, "final_ln", H, 1e-5)
    return inputs, data, y, [1, S, H]


def bart(w, S=128, H=384, N=6, L=3, vocab=2048):
    D, F = H // N, 4 * H
    inputs, data = ids_io(S, vocab, w.rng, pad=10)
    word = w.node("Gather", [w.weight("word", (vocab, H)), "input_ids"], ["emb.word"], axis=0)
    pos = w.weight("pos", (S + 2, H))
    pos_ids = w.init("pos_ids", np.arange(2, S + 2).reshape(1, S))  # BART's learned positions are offset by 2
    e = w.node("Add", [word, w.node("Gather", [pos, pos_ids], ["emb.pos"], axis=0)], ["emb.sum"])
    x = w.layer_norm(e, "emb.ln", H, 1e-5)
    # _prepare_4d_attention_mask: 1 - mask[:, None, None, :].expand(B, 1, S, S), then
    # masked_fill(inverted.to(bool), finfo.min).
    m = w.node("Cast", [w.node("Unsqueeze", ["attention_mask", w.ints(1, 2)], ["mask.unsq"])], ["mask.float"],
               to=TensorProto.FLOAT)
    m = w.node("Expand", [m, w.ints(1, 1, S, S)], ["mask.expanded"])
    inv = w.node("Sub", [w.const("one", 1.0), m], ["mask.inv"])
    hidden = w.node("Cast", [inv], ["mask.bool"], to=TensorProto.BOOL)
    mask = w.node("Where", [hidden, w.const("finfo_min", FINFO_MIN), inv], ["mask.add"])
    scaling = w.const("scaling", D ** -0.5)
    flat = w.ints(N, -1, D)  # (B * N, S, D) for B = 1: proj_shape = (bsz * num_heads, -1, head_dim)

    def bmm_heads(p, name):  # _shape(...).view(*proj_shape), the sizes traced as constants (a static export)
        h = w.node("Transpose", [w.node("Reshape", [p, w.ints(1, S, N, D)], [name + "_r"])], [name + "_t"],
                   perm=[0, 2, 1, 3])
        return w.node("Reshape", [h, flat], [name + "_flat"])

    for l in range(L):
        p = f"l{l}"
        q = bmm_heads(w.node("Mul", [w.linear(x, p + ".q", H, H), scaling], [p + ".q_scaled"]), p + ".q")
        k = bmm_heads(w.linear(x, p + ".k", H, H), p + ".k")
        v = bmm_heads(w.linear(x, p + ".v", H, H), p + ".v")
        sc = w.node("MatMul", [q, w.node("Transpose", [k], [p + ".kT"], perm=[0, 2, 1])], [p + ".scores"])
        sc = w.node("Reshape", [sc, w.ints(1, N, S, S)], [p + ".scores4"])
        sc = w.node("Add", [sc, mask], [p + ".masked"])
        sc = w.node("Reshape", [sc, w.ints(N, S, S)], [p + ".scores3"])
        pr = w.node("Softmax", [sc], [p + ".probs"], axis=-1)
        ctx = w.node("Reshape", [w.node("MatMul", [pr, v], [p + ".ctx3"]), w.ints(1, N, S, D)], [p + ".ctx"])
        o = w.linear(w.merge(ctx, p, H), p + ".o", H, H)
        x = w.layer_norm(w.node("Add", [x, o], [p + ".res1"]), p + ".ln1", H, 1e-5)
        g = gelu_erf_form1(w, w.linear(x, p + ".fc1", H, F), p)
        x = w.layer_norm(w.node("Add", [x, w.linear(g, p + ".fc2", F, H)], [p + ".res2"]), p + ".ln2", H, 1e-5)
    return inputs, data, x, [1, S, H]


def deit(w, image=128, patch=16, H=256, N=4, L=3):
    D, F, P = H // N, 4 * H, (image // patch) ** 2
    inputs = [helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, [1, 3, image, image])]
    data = [w.rng.standard_normal((1, 3, image, image)).astype(np.float32)]
    pe = w.node("Conv", ["pixel_values", w.weight("patch.weight", (H, 3, patch, patch)), w.weight("patch.bias", (H,))],
                ["patches"], kernel_shape=[patch, patch], strides=[patch, patch])
    pe = w.node("Transpose", [w.node("Reshape", [pe, w.ints(1, H, -1)], ["patches.flat"])], ["patches.t"],
                perm=[0, 2, 1])
    x = w.node("Concat", [w.weight("cls_token", (1, 1, H)), w.weight("dist_token", (1, 1, H)), pe], ["tokens"], axis=1)
    x = w.node("Add", [x, w.weight("pos_embed", (1, P + 2, H))], ["x0"])
    scale = w.const("scale", D ** -0.5)
    for l in range(L):
        p = f"l{l}"
        h = w.layer_norm(x, p + ".ln1", H, 1e-6)
        qkv = w.node("Reshape", [w.linear(h, p + ".qkv", H, 3 * H), w.ints(1, P + 2, 3, N, D)], [p + ".qkv_r"])
        qkv = w.node("Transpose", [qkv], [p + ".qkv_t"], perm=[2, 0, 3, 1, 4])
        q, k, v = (w.node("Gather", [qkv, w.const(f"part{i}", i, np.int64)], [f"{p}.{n}"], axis=0)
                   for i, n in enumerate("qkv"))
        kt = w.node("Transpose", [k], [p + ".kT"], perm=[0, 1, 3, 2])
        ctx = w.attention(w.node("Mul", [q, scale], [p + ".q_s"]), kt, v, p)
        x = w.node("Add", [x, w.linear(w.merge(ctx, p, H), p + ".proj", H, H)], [p + ".res1"])
        h = w.layer_norm(x, p + ".ln2", H, 1e-6)
        x = w.node("Add", [x, w.linear(gelu_erf_form1(w, w.linear(h, p + ".fc1", H, F), p), p + ".fc2", F, H)],
                   [p + ".res2"])
    x = w.layer_norm(x, "norm", H, 1e-6)
    tok = w.node("Gather", [x, w.ints(0, 1)], ["cls_dist"], axis=1)  # (1, 2, H)
    logits = w.linear(tok, "heads", H, 100)
    y = w.node("ReduceMean", [logits], ["avg"], axes=[1], keepdims=0)  # (head + head_dist) / 2
    return inputs, data, y, [1, 100]


VARIANTS = dict(t5=t5, distilbert=distilbert, roberta=roberta, whisper=whisper, neox=neox, bart=bart, deit=deit,
                whisper_hf=whisper_hf)


def save_case(root, name, w, inputs, outputs, data, producer):
    """Writes root/name/model.onnx (opset 17) of w's nodes and initializers, and its inputs `data`
    as root/name/test_data_set_0/input_<j>.pb."""
    graph = helper.make_graph(w.nodes, name, inputs, outputs, w.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name=producer)
    model.ir_version = 8
    onnx.checker.check_model(model)
    out = os.path.join(root, name)
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    for j, t in enumerate(data):
        with open(os.path.join(out, "test_data_set_0", f"input_{j}.pb"), "wb") as fh:
            fh.write(numpy_helper.from_array(t).SerializeToString())
    print(f"{out}: {len(w.nodes)} nodes")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default=",".join(VARIANTS))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    for name in a.only.split(","):
        w = Writer(np.random.default_rng(a.seed * 100 + list(VARIANTS).index(name)))  # the same with --only
        inputs, data, y, shape = VARIANTS[name](w)
        w.nodes.append(helper.make_node("Identity", [y], ["output"], name="output_node"))
        save_case(a.out, name, w, inputs, [helper.make_tensor_value_info("output", TensorProto.FLOAT, shape)], data,
                  "onnxflow gen_variants")


if __name__ == "__main__":
    main()
