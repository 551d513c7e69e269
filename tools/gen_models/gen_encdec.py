#!/usr/bin/env python3
"""Writes encoder-decoder transformer exports as Hugging Face Optimum (torch.onnx with dynamic_axes)
writes them for translation and summarization models, one case folder per model
(OUT/<model>/model.onnx, OUT/<model>/test_data_set_0/input_<i>.pb), seeded random weights:

  bart_encoder      BART / Marian / mBART encoder as transformers before 4.48 writes it (encoder_model):
                    the bmm form (heads flattened to (bsz * N, -1, D)), every size read at run time
                    (bsz and tgt_len off the hidden states' Shape, src_len off the flattened keys'
                    Shape, as `key_states.size(1)` traces), q_proj(x) * scaling before the split,
                    the padding mask expanded to (bsz, 1, tgt_len, src_len) and inverted by
                    masked_fill(inverted.bool(), finfo.min), added to the scores viewed as
                    (bsz, N, tgt_len, src_len).
  bart_decoder      the decoder without a cache (decoder_model): causal self-attention, its mask built
                    from the shapes (_make_causal_mask: ConstantOfShape(finfo.min), Range, Less,
                    Where, Expand), cross-attention over encoder_hidden_states (another sequence
                    length) with the encoder's padding mask; the heads of k and v are the present
                    outputs (present.{i}.decoder.key, ... .encoder.value).
  bart_decoder_past the decoder with a cache (decoder_with_past_model): one new token, self-attention's
                    keys Concat(past, new) on axis 2 (the present output), cross-attention's keys and
                    values the past encoder keys and values themselves (graph inputs), the causal
                    mask with past_key_values_length zeros before it.
  flan_t5           a flan-T5-shaped encoder stack (T5 v1.1): gen_variants.py's t5 spelling (RMSNorm
                    with torch's rsqrt, relative position bias, gated gelu_new FFN: gelu_new(x W_i0) *
                    (x W_i1)), at flan-t5-small's widths.

The merged decoder (decoder_model_merged: an If on use_cache_branch) is tools/gen_models/
merge_decoder.py over bart_decoder_past. Expected outputs: node tools/gen_models/ort_expected.js
OUT/<model>; ONNX Runtime's saved forms: node /work/shared/tools/ort_optimize.js IN OUT extended.

usage: gen_encdec.py OUT_DIR [--only bart_encoder,...] [--seed 0]
"""
import argparse
import math
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_variants import FINFO_MIN, Writer, gelu_erf_form1, save_case, t5  # noqa: E402

# Marian opus-mt's widths (d_model 512, 8 heads of 64, FFN 2048), 3 layers each side and a small
# vocabulary so that the files stay small.
H, N, F, LAYERS, VOCAB = 512, 8, 2048, 3, 2048
D = H // N
ENC_SEQ, ENC_PAD, DEC_SEQ, PAST = 96, 7, 16, 15


def sizes(w, x, p):
    """bsz and the sequence length read off x's shape, 0-D, and each Unsqueezed to 1-D."""
    shape = w.node("Shape", [x], [p + ".shape"])
    bsz = w.node("Gather", [shape, w.const("index0", 0, np.int64)], [p + ".bsz"], axis=0)
    seq = w.node("Gather", [shape, w.const("index1", 1, np.int64)], [p + ".seq"], axis=0)
    return bsz, seq, w.node("Unsqueeze", [bsz, w.ints(0)], [p + ".bsz_u"]), w.node("Unsqueeze", [seq, w.ints(0)],
                                                                                  [p + ".seq_u"])


def expand_mask(w, mask, tgt_u, p):
    """_expand_mask: mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len), inverted, masked_fill."""
    _, _, mb, ms = sizes(w, mask, p)
    m = w.node("Cast", [w.node("Unsqueeze", [mask, w.ints(1, 2)], [p + ".unsq"])], [p + ".float"],
               to=TensorProto.FLOAT)
    m = w.node("Expand", [m, w.node("Concat", [mb, w.ints(1), tgt_u, ms], [p + ".expand_to"], axis=0)],
               [p + ".expanded"])
    inv = w.node("Sub", [w.const("one", 1.0), m], [p + ".inv"])
    hidden = w.node("Cast", [inv], [p + ".bool"], to=TensorProto.BOOL)
    return w.node("Where", [hidden, w.const("finfo_min", FINFO_MIN), inv], [p + ".add"])


def causal_mask(w, bsz_u, tgt, tgt_u, past_u, p):
    """_make_causal_mask with past_key_values_length (past_u None: no cache), (bsz, 1, tgt, past + tgt)."""
    full = w.node("ConstantOfShape", [w.node("Concat", [tgt_u, tgt_u], [p + ".square"], axis=0)], [p + ".full"],
                  value=numpy_helper.from_array(np.array([FINFO_MIN], np.float32)))
    cond = w.node("Range", [w.const("zero_i64", 0, np.int64), tgt, w.const("one_i64", 1, np.int64)], [p + ".arange"])
    col = w.node("Reshape", [w.node("Add", [cond, w.const("one_i64", 1, np.int64)], [p + ".arange1"]),
                             w.node("Concat", [tgt_u, w.ints(1)], [p + ".col_shape"], axis=0)], [p + ".col"])
    less = w.node("Less", [cond, col], [p + ".less"])
    m = w.node("Where", [less, w.const("zero", 0.0), full], [p + ".tri"])
    total = tgt_u
    if past_u is not None:
        zeros = w.node("ConstantOfShape", [w.node("Concat", [tgt_u, past_u], [p + ".past_shape"], axis=0)],
                       [p + ".zeros"], value=numpy_helper.from_array(np.array([0.0], np.float32)))
        m = w.node("Concat", [zeros, m], [p + ".with_past"], axis=-1)
        total = w.node("Add", [tgt_u, past_u], [p + ".total"])
    m = w.node("Unsqueeze", [m, w.ints(0, 1)], [p + ".u"])
    return w.node("Expand", [m, w.node("Concat", [bsz_u, w.ints(1), tgt_u, total], [p + ".expand_to"], axis=0)],
                  [p + ".add"])


def attention(w, h, p, mask=None, kv_input=None, past=None, cross_past=None, present=None):
    """BartAttention (transformers < 4.48) with dynamic axes. kv_input: cross-attention's encoder
    states; past: (key, value) inputs Concat before the new heads; cross_past: (key, value) inputs used
    as they are; present: the names the keys' and values' heads take (graph outputs)."""
    bsz, tgt, ub, ut = sizes(w, h, p)
    rows = w.node("Unsqueeze", [w.node("Mul", [bsz, w.const("num_heads", N, np.int64)], [p + ".rows"]), w.ints(0)],
                  [p + ".rows_u"])
    proj_shape = w.node("Concat", [rows, w.ints(-1), w.ints(D)], [p + ".proj_shape"], axis=0)

    def shape(x, seq, name, out=None):  # _shape(x, seq, bsz): view(bsz, seq, N, D).transpose(1, 2)
        r = w.node("Reshape", [x, w.node("Concat", [ub, seq, w.ints(N), w.ints(D)], [name + ".view"], axis=0)],
                   [name + "_r"])
        return w.node("Transpose", [r], [out or name + "_t"], perm=[0, 2, 1, 3])

    q = w.node("Mul", [w.linear(h, p + ".q", H, H), w.const("scaling", D ** -0.5)], [p + ".q_scaled"])
    names = present or (None, None)
    if cross_past is not None:
        k, v = cross_past
    else:
        src = kv_input or h
        k = shape(w.linear(src, p + ".k", H, H), w.ints(-1), p + ".k", None if past else names[0])
        v = shape(w.linear(src, p + ".v", H, H), w.ints(-1), p + ".v", None if past else names[1])
        if past is not None:
            k = w.node("Concat", [past[0], k], [names[0]], axis=2)
            v = w.node("Concat", [past[1], v], [names[1]], axis=2)
    qf = w.node("Reshape", [shape(q, ut, p + ".q"), proj_shape], [p + ".q_flat"])
    kf = w.node("Reshape", [k, proj_shape], [p + ".k_flat"])
    vf = w.node("Reshape", [v, proj_shape], [p + ".v_flat"])
    src_len = w.node("Gather", [w.node("Shape", [kf], [p + ".k_shape"]), w.const("index1", 1, np.int64)],
                     [p + ".src_len"], axis=0)
    us = w.node("Unsqueeze", [src_len, w.ints(0)], [p + ".src_u"])
    sc = w.node("MatMul", [qf, w.node("Transpose", [kf], [p + ".kT"], perm=[0, 2, 1])], [p + ".scores"])
    if mask is not None:
        sc = w.node("Reshape", [sc, w.node("Concat", [ub, w.ints(N), ut, us], [p + ".view4"], axis=0)],
                    [p + ".scores4"])
        sc = w.node("Add", [sc, mask], [p + ".masked"])
        sc = w.node("Reshape", [sc, w.node("Concat", [rows, ut, us], [p + ".view3"], axis=0)], [p + ".scores3"])
    ctx = w.node("MatMul", [w.node("Softmax", [sc], [p + ".probs"], axis=-1), vf], [p + ".ctx3"])
    ctx = w.node("Reshape", [ctx, w.node("Concat", [ub, w.ints(N), ut, w.ints(D)], [p + ".ctx_shape"], axis=0)],
                 [p + ".ctx"])
    t = w.node("Transpose", [ctx], [p + ".ctx_t"], perm=[0, 2, 1, 3])
    out = w.node("Reshape", [t, w.node("Concat", [ub, ut, w.ints(H)], [p + ".out_shape"], axis=0)], [p + ".ctx_r"])
    return w.linear(out, p + ".o", H, H)


def ffn(w, x, p):
    return w.linear(gelu_erf_form1(w, w.linear(x, p + ".fc1", H, F), p), p + ".fc2", F, H)


def embed(w, ids, p, offset=None):
    """Token embedding plus BART's learned positions (offset by 2, after `offset` cached tokens)."""
    word = w.node("Gather", [w.weight(p + ".tokens", (VOCAB, H), std=1.0), ids], [p + ".word"], axis=0)
    _, seq, _, _ = sizes(w, ids, p + ".ids")
    start = w.const("two_i64", 2, np.int64)
    if offset is not None:
        start = w.node("Add", [offset, start], [p + ".start"])
    end = w.node("Add", [start, seq], [p + ".end"])
    positions = w.node("Range", [start, end, w.const("one_i64", 1, np.int64)], [p + ".positions"])
    pos = w.node("Gather", [w.weight(p + ".positions_table", (1024 + 2, H)), positions], [p + ".pos"], axis=0)
    return w.layer_norm(w.node("Add", [word, pos], [p + ".sum"]), p + ".ln_emb", H, 1e-5)


def ids_input(name, seq):
    return helper.make_tensor_value_info(name, TensorProto.INT64, ["batch_size", seq])


def heads_io(name, seq):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch_size", N, seq, D])


def bart_encoder(w):
    ids = w.rng.integers(0, VOCAB, size=(1, ENC_SEQ), dtype=np.int64)
    mask = np.ones((1, ENC_SEQ), dtype=np.int64)
    mask[:, ENC_SEQ - ENC_PAD:] = 0
    x = embed(w, "input_ids", "enc")
    _, _, _, tgt_u = sizes(w, x, "enc.x")
    m = expand_mask(w, "attention_mask", tgt_u, "enc.mask")
    for l in range(LAYERS):
        p = f"enc.l{l}"
        x = w.layer_norm(w.node("Add", [x, attention(w, x, p + ".self", mask=m)], [p + ".res1"]), p + ".ln1", H, 1e-5)
        x = w.layer_norm(w.node("Add", [x, ffn(w, x, p)], [p + ".res2"]), p + ".ln2", H, 1e-5)
    w.node("Identity", [x], ["last_hidden_state"])
    inputs = [ids_input("input_ids", "encoder_sequence_length"), ids_input("attention_mask", "encoder_sequence_length")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                             ["batch_size", "encoder_sequence_length", H])]
    return inputs, [ids, mask], outputs


def bart_decoder(w, with_past=False):
    T = 1 if with_past else DEC_SEQ
    ids = w.rng.integers(0, VOCAB, size=(1, T), dtype=np.int64)
    enc_mask = np.ones((1, ENC_SEQ), dtype=np.int64)
    enc_mask[:, ENC_SEQ - ENC_PAD:] = 0
    inputs = [ids_input("input_ids", "decoder_sequence_length"),
              ids_input("encoder_attention_mask", "encoder_sequence_length")]
    data = [ids, enc_mask]
    outputs = []
    if not with_past:
        inputs.append(helper.make_tensor_value_info("encoder_hidden_states", TensorProto.FLOAT,
                                                    ["batch_size", "encoder_sequence_length", H]))
        data.append(w.rng.standard_normal((1, ENC_SEQ, H)).astype(np.float32))
    past_len_u = None
    if with_past:
        for l in range(LAYERS):
            for side, seq, length in (("decoder", "past_decoder_sequence_length", PAST),
                                      ("encoder", "encoder_sequence_length", ENC_SEQ)):
                for kind in ("key", "value"):
                    inputs.append(heads_io(f"past_key_values.{l}.{side}.{kind}", seq))
                    data.append(w.rng.standard_normal((1, N, length, D)).astype(np.float32))
        shape = w.node("Shape", ["past_key_values.0.decoder.key"], ["past.shape"])
        past_len = w.node("Gather", [shape, w.const("index2", 2, np.int64)], ["past.len"], axis=0)
        past_len_u = w.node("Unsqueeze", [past_len, w.ints(0)], ["past.len_u"])
    x = embed(w, "input_ids", "dec", offset=past_len if with_past else None)
    bsz, tgt, bsz_u, tgt_u = sizes(w, "input_ids", "dec.in")
    causal = causal_mask(w, bsz_u, tgt, tgt_u, past_len_u, "dec.causal")
    cross = expand_mask(w, "encoder_attention_mask", tgt_u, "dec.cross_mask")
    for l in range(LAYERS):
        p = f"dec.l{l}"
        names = (f"present.{l}.decoder.key", f"present.{l}.decoder.value")
        past = (f"past_key_values.{l}.decoder.key", f"past_key_values.{l}.decoder.value") if with_past else None
        a = attention(w, x, p + ".self", mask=causal, past=past, present=names)
        x = w.layer_norm(w.node("Add", [x, a], [p + ".res1"]), p + ".ln1", H, 1e-5)
        if with_past:
            a = attention(w, x, p + ".cross", mask=cross, cross_past=(f"past_key_values.{l}.encoder.key",
                                                                    f"past_key_values.{l}.encoder.value"))
        else:
            enc_names = (f"present.{l}.encoder.key", f"present.{l}.encoder.value")
            a = attention(w, x, p + ".cross", mask=cross, kv_input="encoder_hidden_states", present=enc_names)
        x = w.layer_norm(w.node("Add", [x, a], [p + ".res2"]), p + ".ln2", H, 1e-5)
        x = w.layer_norm(w.node("Add", [x, ffn(w, x, p)], [p + ".res3"]), p + ".ln3", H, 1e-5)
        for side in ("decoder",) if with_past else ("decoder", "encoder"):
            for kind in ("key", "value"):
                outputs.append(heads_io(f"present.{l}.{side}.{kind}", "past_decoder_sequence_length + 1"
                                        if with_past and side == "decoder" else "decoder_sequence_length"
                                        if side == "decoder" else "encoder_sequence_length"))
    logits = w.node("MatMul", [x, w.weight("lm_head", (H, VOCAB))], ["logits"])
    outputs.insert(0, helper.make_tensor_value_info(logits, TensorProto.FLOAT,
                                                    ["batch_size", "decoder_sequence_length", VOCAB]))
    return inputs, data, outputs


def bart_decoder_past(w):
    return bart_decoder(w, with_past=True)


def flan_t5(w):
    inputs, data, y, shape = t5(w, S=128, H=512, N=8, L=4, F=1024, vocab=2048)
    w.node("Identity", [y], ["output"])
    return inputs, data, [helper.make_tensor_value_info("output", TensorProto.FLOAT, shape)]


MODELS = dict(bart_encoder=bart_encoder, bart_decoder=bart_decoder, bart_decoder_past=bart_decoder_past,
              flan_t5=flan_t5)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default=",".join(MODELS))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    for name in a.only.split(","):
        w = Writer(np.random.default_rng(a.seed * 100 + 50 + list(MODELS).index(name)))  # the same with --only
        inputs, data, outputs = MODELS[name](w)
        save_case(a.out, name, w, inputs, outputs, data, "onnxflow gen_encdec")


if __name__ == "__main__":
    main()
