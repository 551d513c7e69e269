#!/usr/bin/python3
"""Seeded generator of the decoder test models with a key-value cache (issue 22).

Writes, under OUT_DIR, one folder per model, each with model.onnx and four cases:
test_data_set_0 the prefill (no cached tokens, 8 new ones), test_data_set_1..3 one new token after
1, 128 and 1024 cached ones (the cache filled with seeded random keys and values).

  gpt2/         a GPT-2-small-shaped decoder as torch.onnx / Optimum export it: 12 layers, hidden 768,
                12 heads of 64, LayerNorm, GELU-tanh MLP of 3072 (projections
                as GPT-2's Conv1D exports: Reshape, Gemm, Reshape), learned positions (1024 + 8);
                vocabulary reduced to 8192 to keep the file at ~370 MB; the LM head is its own
                initializer holding the transposed token embedding (tied values, untied storage, as
                exports write it). Inputs input_ids [1, S], attention_mask [1, P+S],
                past_key_values.{i}.key/value [1, 12, P, 64]; outputs logits [1, S, V] and
                present.{i}.key/value [1, 12, P+S, 64]. Attention: MatMul, Div by sqrt(64), Add of
                the additive mask (causal, from the shapes, joined with attention_mask by Where),
                Softmax, MatMul, with K and V the Concat of the cache and the new heads.
  llama/        a LLaMA-shaped decoder block stack, plain ONNX: --llama-layers (4) layers, hidden 2048,
                32 query heads and 8 KV heads of 64 (grouped-query: K and V repeated by
                Unsqueeze/Expand/Reshape), RMSNorm written out (Pow, ReduceMean, Add, Sqrt, Div, Mul;
                onnx 1.12 has no opset-23 RMSNormalization), RoPE from cos/sin caches gathered by
                position_ids (Slice, Neg, Concat, Mul, Add), SwiGLU MLP; the MLP width is 2816 (half
                of TinyLlama's 5632) and the vocabulary 4096, so the file stays ~480 MB. Extra input
                position_ids [1, S].
  llama_ms/     the same weights in the com.microsoft form ONNX Runtime's transformer optimizer
                writes: SimplifiedLayerNormalization / SkipSimplifiedLayerNormalization, and
                GroupQueryAttention (past_key, past_value, seqlens_k, total_sequence_length) with
                RotaryEmbedding nodes before it in even layers and do_rotary=1 (cos/sin caches as
                GQA inputs) in odd ones.
--causal-where writes gpt2_where: the causal mask as transformers' GPT-2 applies it,
Where(causal, scaled scores, float32 min), then the padding mask added. Expected outputs come from
ONNX Runtime (tools/gen_models/README.md). --tiny writes a 2-layer,
hidden-64 GPT-2 (4 heads) for the unit test's shape. The weights are random but seeded: a rerun
rebuilds the same bytes, so nothing here is committed.

  python3 tools/gen_models/gen_decoder.py OUT_DIR [--only gpt2,llama,llama_ms] [--llama-layers 4]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quant_models import Builder  # noqa: E402  (the shared naming node/constant builder)

SEED = 22
PREFILL = 8
CACHED = [1, 128, 1024]  # cached tokens of the single-token cases
F32_MIN = np.finfo(np.float32).min


def named(b, op_type, inputs, outputs, domain=None, **attrs):
    """A node whose outputs carry given names (graph outputs); Builder.op numbers its own."""
    b.nodes.append(helper.make_node(op_type, inputs, outputs, name=b.name(op_type), domain=domain, **attrs))
    return outputs[0]


def scalar(b, v, dtype=np.float32):
    return b.const(np.array(v, dtype), "k")


def ints(b, *v):
    return b.const(np.array(v, np.int64), "i")


def shape_dim(b, x, axis):
    """Shape(x)[axis] as a 1-element int64 tensor."""
    return b.op("Gather", [b.op("Shape", [x]), ints(b, axis)], axis=0)


def additive_mask(b, past_key, seq_input, causal_where=False):
    """The (1, 1, S, P+S) additive mask an export builds from the shapes: 0 where key j is visible
    to query i (j <= P + i and attention_mask[j] = 1), float32 min elsewhere. P is the cache length
    read from past_key's shape, S from the new tokens'. With causal_where, (causal, padding): the
    (S, P+S) boolean causal mask transformers' GPT-2 applies with Where(causal, scores, min), and the
    (1, 1, 1, P+S) additive padding mask (1 - attention_mask) * min added after it."""
    p = shape_dim(b, past_key, 2)
    s = shape_dim(b, seq_input, 1)
    t = b.op("Add", [p, s])
    sq = lambda v: b.op("Squeeze", [v, ints(b, 0)])  # noqa: E731
    q_pos = b.op("Unsqueeze", [b.op("Range", [sq(p), sq(t), scalar(b, 1, np.int64)]), ints(b, 1)])  # (S, 1)
    k_pos = b.op("Range", [scalar(b, 0, np.int64), sq(t), scalar(b, 1, np.int64)])  # (T)
    causal = b.op("LessOrEqual", [k_pos, q_pos])  # (S, T)
    mask4 = b.op("Unsqueeze", ["attention_mask", ints(b, 1, 2)])  # (1, 1, 1, T)
    if causal_where:
        inv = b.op("Sub", [scalar(b, 1.0), b.op("Cast", [mask4], to=TensorProto.FLOAT)])
        return causal, b.op("Mul", [inv, scalar(b, F32_MIN)])
    visible = b.op("And", [causal, b.op("Cast", [mask4], to=TensorProto.BOOL)])  # (1, 1, S, T)
    return b.op("Where", [visible, scalar(b, 0.0), scalar(b, F32_MIN)])


def kv_io(layers, kv_heads, head):
    ins, outs = [], []
    for i in range(layers):
        for kind in ("key", "value"):
            ins.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kind}", TensorProto.FLOAT,
                                                     [1, kv_heads, "past_sequence_length", head]))
            outs.append(helper.make_tensor_value_info(f"present.{i}.{kind}", TensorProto.FLOAT,
                                                      [1, kv_heads, "total_sequence_length", head]))
    return ins, outs


def finish(b, name, inputs, outputs, ms=False):
    graph = helper.make_graph(b.nodes, name, inputs, outputs, b.inits)
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("com.microsoft", 1)] if ms else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="onnxflow gen_decoder")
    model.ir_version = 8
    if not ms:  # the checker knows no com.microsoft ops (nor ONNX Runtime's SimplifiedLayerNormalization)
        onnx.checker.check_model(model)
    return model


def gpt2(rng, layers=12, hidden=768, heads=12, vocab=8192, positions=1024 + PREFILL, causal_where=False):
    b = Builder(rng)
    head, ffn = hidden // heads, 4 * hidden

    def w(k, n):
        return b.const((rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32), "w")

    def bias(n):
        return b.const((0.02 * rng.standard_normal(n)).astype(np.float32), "b")

    def linear(x, k, n):  # GPT-2's Conv1D is addmm: exported as Reshape, Gemm, Reshape
        y = b.op("Gemm", [b.op("Reshape", [x, ints(b, -1, k)]), w(k, n), bias(n)])
        return b.op("Reshape", [y, ints(b, 1, -1, n)])

    def layer_norm(x):
        g = b.const((1.0 + 0.1 * rng.standard_normal(hidden)).astype(np.float32), "ln_g")
        return b.op("LayerNormalization", [x, g, bias(hidden)], axis=-1, epsilon=1e-5)

    wte = (0.1 * rng.standard_normal((vocab, hidden))).astype(np.float32)
    wpe = (0.02 * rng.standard_normal((positions, hidden))).astype(np.float32)
    past0 = "past_key_values.0.key"
    p = shape_dim(b, past0, 2)
    t = b.op("Add", [p, shape_dim(b, "input_ids", 1)])
    sq = lambda v: b.op("Squeeze", [v, ints(b, 0)])  # noqa: E731
    pos = b.op("Unsqueeze", [b.op("Range", [sq(p), sq(t), scalar(b, 1, np.int64)]), ints(b, 0)])
    x = b.op("Add", [b.op("Gather", [b.const(wte, "wte"), "input_ids"]), b.op("Gather", [b.const(wpe, "wpe"), pos])])
    mask = additive_mask(b, past0, "input_ids", causal_where)
    heads_shape, merge_shape = ints(b, 0, 0, heads, head), ints(b, 0, 0, hidden)
    split = ints(b, hidden, hidden, hidden)
    for i in range(layers):
        qkv = linear(layer_norm(x), hidden, 3 * hidden)
        q, k, v = b.op("Split", [qkv, split], n_out=3, axis=2)
        q, k, v = (b.op("Transpose", [b.op("Reshape", [y, heads_shape])], perm=[0, 2, 1, 3]) for y in (q, k, v))
        pk = named(b, "Concat", [f"past_key_values.{i}.key", k], [f"present.{i}.key"], axis=-2)
        pv = named(b, "Concat", [f"past_key_values.{i}.value", v], [f"present.{i}.value"], axis=-2)
        scores = b.op("MatMul", [q, b.op("Transpose", [pk], perm=[0, 1, 3, 2])])
        scores = b.op("Div", [scores, scalar(b, np.sqrt(head))])
        if causal_where:
            scores = b.op("Add", [b.op("Where", [mask[0], scores, scalar(b, F32_MIN)]), mask[1]])
        else:
            scores = b.op("Add", [scores, mask])
        ctx = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), pv])
        ctx = b.op("Reshape", [b.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merge_shape])
        x = b.op("Add", [x, linear(ctx, hidden, hidden)])
        h = linear(layer_norm(x), hidden, ffn)
        # gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), constants second as torch writes them.
        inner = b.op("Add", [h, b.op("Mul", [b.op("Pow", [h, scalar(b, 3.0)]), scalar(b, 0.044715)])])
        th = b.op("Tanh", [b.op("Mul", [inner, scalar(b, np.sqrt(2.0 / np.pi))])])
        h = b.op("Mul", [b.op("Mul", [h, scalar(b, 0.5)]), b.op("Add", [th, scalar(b, 1.0)])])
        x = b.op("Add", [x, linear(h, ffn, hidden)])
    named(b, "MatMul", [layer_norm(x), b.const(np.ascontiguousarray(wte.T), "lm_head")], ["logits"])
    kv_in, kv_out = kv_io(layers, heads, head)
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "total_sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "sequence_length", vocab])]
    return finish(b, "gpt2_like", inputs + kv_in, outputs + kv_out), dict(layers=layers, kv_heads=heads, head=head,
                                                                          vocab=vocab, position_ids=False)


class LlamaWeights:
    """One set of seeded weights both LLaMA forms read."""

    def __init__(self, rng, layers, hidden, heads, kv_heads, ffn, vocab, positions):
        self.layers, self.hidden, self.heads, self.kv_heads = layers, hidden, heads, kv_heads
        self.head, self.ffn, self.vocab = hidden // heads, ffn, vocab

        def w(k, n):
            return (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)

        def norm():
            return (1.0 + 0.1 * rng.standard_normal(hidden)).astype(np.float32)

        kv = kv_heads * self.head
        self.embed = (rng.standard_normal((vocab, hidden))).astype(np.float32)
        self.blocks = [dict(n1=norm(), q=w(hidden, hidden), k=w(hidden, kv), v=w(hidden, kv), o=w(hidden, hidden),
                            n2=norm(), gate=w(hidden, ffn), up=w(hidden, ffn), down=w(ffn, hidden))
                       for _ in range(layers)]
        self.final = norm()
        self.lm_head = w(hidden, vocab)
        inv = 1.0 / (10000.0 ** (np.arange(0, self.head, 2, dtype=np.float64) / self.head))
        ang = np.outer(np.arange(positions, dtype=np.float64), inv)  # (positions, head / 2)
        self.cos_half, self.sin_half = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)

    def io(self):
        kv_in, kv_out = kv_io(self.layers, self.kv_heads, self.head)
        inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "sequence_length"]),
                  helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "total_sequence_length"]),
                  helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "sequence_length"])]
        outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "sequence_length", self.vocab])]
        return inputs + kv_in, outputs + kv_out


EPS = 1e-5


def llama_plain(wt):
    b = Builder(None)
    H, D, N, NKV = wt.hidden, wt.head, wt.heads, wt.kv_heads

    def rms(x, g):
        var = b.op("ReduceMean", [b.op("Pow", [x, scalar(b, 2.0)])], axes=[-1], keepdims=1)
        y = b.op("Div", [x, b.op("Sqrt", [b.op("Add", [var, scalar(b, EPS)])])])
        return b.op("Mul", [y, b.const(g, "norm")])

    full = lambda c: np.concatenate([c, c], axis=1)  # noqa: E731  (HF's caches repeat the half)
    gathered = lambda c: b.op("Unsqueeze", [b.op("Gather", [b.const(full(c), "rope"), "position_ids"]),  # noqa: E731
                                            ints(b, 1)])  # (1, 1, S, D)
    cos, sin = gathered(wt.cos_half), gathered(wt.sin_half)
    lo, mid, hi, last = ints(b, 0), ints(b, D // 2), ints(b, D), ints(b, -1)

    def rope(x):
        x1, x2 = b.op("Slice", [x, lo, mid, last]), b.op("Slice", [x, mid, hi, last])
        rot = b.op("Concat", [b.op("Neg", [x2]), x1], axis=-1)
        return b.op("Add", [b.op("Mul", [x, cos]), b.op("Mul", [rot, sin])])

    def heads(x, n):
        return b.op("Transpose", [b.op("Reshape", [x, ints(b, 0, 0, n, D)])], perm=[0, 2, 1, 3])

    def repeat(kv):  # (1, NKV, T, D) -> (1, N, T, D), each KV head serving N / NKV query heads
        e = b.op("Expand", [b.op("Unsqueeze", [kv, ints(b, 2)]), ints(b, 1, 1, N // NKV, 1, 1)])
        return b.op("Reshape", [e, ints(b, 0, N, -1, D)])

    x = b.op("Gather", [b.const(wt.embed, "embed"), "input_ids"])
    mask = additive_mask(b, "past_key_values.0.key", "input_ids")
    for i, blk in enumerate(wt.blocks):
        h = rms(x, blk["n1"])
        q = rope(heads(b.op("MatMul", [h, b.const(blk["q"], "wq")]), N))
        k = rope(heads(b.op("MatMul", [h, b.const(blk["k"], "wk")]), NKV))
        v = heads(b.op("MatMul", [h, b.const(blk["v"], "wv")]), NKV)
        pk = named(b, "Concat", [f"past_key_values.{i}.key", k], [f"present.{i}.key"], axis=2)
        pv = named(b, "Concat", [f"past_key_values.{i}.value", v], [f"present.{i}.value"], axis=2)
        scores = b.op("MatMul", [q, b.op("Transpose", [repeat(pk)], perm=[0, 1, 3, 2])])
        scores = b.op("Add", [b.op("Mul", [scores, scalar(b, 1.0 / np.sqrt(D))]), mask])
        ctx = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), repeat(pv)])
        ctx = b.op("Reshape", [b.op("Transpose", [ctx], perm=[0, 2, 1, 3]), ints(b, 0, 0, H)])
        x = b.op("Add", [x, b.op("MatMul", [ctx, b.const(blk["o"], "wo")])])
        h = rms(x, blk["n2"])
        gate = b.op("MatMul", [h, b.const(blk["gate"], "wg")])
        act = b.op("Mul", [gate, b.op("Sigmoid", [gate])])
        up = b.op("MatMul", [h, b.const(blk["up"], "wu")])
        x = b.op("Add", [x, b.op("MatMul", [b.op("Mul", [act, up]), b.const(blk["down"], "wd")])])
    named(b, "MatMul", [rms(x, wt.final), b.const(wt.lm_head, "lm_head")], ["logits"])
    return finish(b, "llama_like", *wt.io())


def llama_ms(wt):
    b = Builder(None)
    H, D, N, NKV = wt.hidden, wt.head, wt.heads, wt.kv_heads
    ms = "com.microsoft"
    cos, sin = b.const(wt.cos_half, "cos_cache"), b.const(wt.sin_half, "sin_cache")
    # What the optimizer's GQA reads: seqlens_k = sum(attention_mask) - 1 and the total length, int32.
    total = b.op("ReduceSum", ["attention_mask", ints(b, 1)], keepdims=0)
    seqlens = b.op("Cast", [b.op("Sub", [total, scalar(b, 1, np.int64)])], to=TensorProto.INT32)
    total_len = b.op("Cast", [b.op("Gather", [b.op("Shape", ["attention_mask"]), scalar(b, 1, np.int64)], axis=0)],
                     to=TensorProto.INT32)

    x = b.op("Gather", [b.const(wt.embed, "embed"), "input_ids"])
    h = b.op("SimplifiedLayerNormalization", [x, b.const(wt.blocks[0]["n1"], "norm")], axis=-1, epsilon=EPS)
    residual = x

    def skip_norm(out, skip, g):
        """(normalized, sum) of SkipSimplifiedLayerNormalization(out, skip, g)."""
        n, s = b.name("skipnorm"), b.name("residual")
        named(b, "SkipSimplifiedLayerNormalization", [out, skip, b.const(g, "norm")], [n, "", "", s], domain=ms,
              epsilon=EPS)
        return n, s

    for i, blk in enumerate(wt.blocks):
        q = b.op("MatMul", [h, b.const(blk["q"], "wq")])
        k = b.op("MatMul", [h, b.const(blk["k"], "wk")])
        v = b.op("MatMul", [h, b.const(blk["v"], "wv")])
        gqa_in = [q, k, v, f"past_key_values.{i}.key", f"past_key_values.{i}.value", seqlens, total_len]
        rotary_in_gqa = i % 2 == 1
        if rotary_in_gqa:
            gqa_in += [cos, sin]
        else:
            q = b.op("RotaryEmbedding", [q, "position_ids", cos, sin], domain=ms, num_heads=N)
            k = b.op("RotaryEmbedding", [k, "position_ids", cos, sin], domain=ms, num_heads=NKV)
            gqa_in[0], gqa_in[1] = q, k
        ctx = b.name("attn")
        named(b, "GroupQueryAttention", gqa_in, [ctx, f"present.{i}.key", f"present.{i}.value"], domain=ms,
              num_heads=N, kv_num_heads=NKV, do_rotary=int(rotary_in_gqa))
        h, residual = skip_norm(b.op("MatMul", [ctx, b.const(blk["o"], "wo")]), residual, blk["n2"])
        gate = b.op("MatMul", [h, b.const(blk["gate"], "wg")])
        act = b.op("Mul", [gate, b.op("Sigmoid", [gate])])
        up = b.op("MatMul", [h, b.const(blk["up"], "wu")])
        down = b.op("MatMul", [b.op("Mul", [act, up]), b.const(blk["down"], "wd")])
        nxt = wt.blocks[i + 1]["n1"] if i + 1 < len(wt.blocks) else wt.final
        h, residual = skip_norm(down, residual, nxt)
    named(b, "MatMul", [h, b.const(wt.lm_head, "lm_head")], ["logits"])
    return finish(b, "llama_like_ms", *wt.io(), ms=True)


def write_cases(out_dir, name, model, meta, rng):
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for set_no, (past, seq) in enumerate([(0, PREFILL)] + [(p, 1) for p in CACHED]):
        data = os.path.join(d, f"test_data_set_{set_no}")
        os.makedirs(data, exist_ok=True)
        feeds = [("input_ids", rng.integers(0, meta["vocab"], size=(1, seq), dtype=np.int64)),
                 ("attention_mask", np.ones((1, past + seq), np.int64))]
        if meta["position_ids"]:
            feeds.append(("position_ids", np.arange(past, past + seq, dtype=np.int64).reshape(1, seq)))
        for i in range(meta["layers"]):
            for kind in ("key", "value"):
                kv = rng.standard_normal((1, meta["kv_heads"], past, meta["head"])).astype(np.float32)
                feeds.append((f"past_key_values.{i}.{kind}", kv))
        for j, (n, t) in enumerate(feeds):
            with open(os.path.join(data, f"input_{j}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(t, n).SerializeToString())
    print("wrote", d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="gpt2,llama,llama_ms")
    ap.add_argument("--llama-layers", type=int, default=4)
    ap.add_argument("--tiny", action="store_true", help="2 layers, hidden 64, 4 heads, vocab 64 (gpt2 only)")
    ap.add_argument("--causal-where", action="store_true",
                    help="gpt2 with transformers' Where(causal, scores, min) then the padding mask (gpt2_where)")
    a = ap.parse_args()
    only = a.only.split(",")
    if "gpt2" in only:
        kw = dict(layers=2, hidden=64, heads=4, vocab=64) if a.tiny else {}
        model, meta = gpt2(np.random.default_rng(SEED), causal_where=a.causal_where, **kw)
        name = "gpt2" + ("_where" if a.causal_where else "") + ("_tiny" if a.tiny else "")
        write_cases(a.out, name, model, meta, np.random.default_rng(SEED + 1))
    if "llama" in only or "llama_ms" in only:
        wt = LlamaWeights(np.random.default_rng(SEED + 2), a.llama_layers, 2048, 32, 8, 2816, 4096, 1024 + PREFILL)
        meta = dict(layers=wt.layers, kv_heads=wt.kv_heads, head=wt.head, vocab=wt.vocab, position_ids=True)
        for name, form in (("llama", llama_plain), ("llama_ms", llama_ms)):
            if name in only:
                write_cases(a.out, name, form(wt), meta, np.random.default_rng(SEED + 3))


if __name__ == "__main__":
    main()
