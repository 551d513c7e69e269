#!/usr/bin/python3
"""Seeded generator of the test models of ONNX Runtime's generation ops (ops/generation).

Writes, under OUT_DIR (default ops/generation/testdata), three case folders, each model.onnx and
test_data_set_0/input_<i>.pb; tools/gen_models/ort_expected.js adds ONNX Runtime's output_<i>.pb:

  gpt/  (beam_init also has an init_decoder, the decoder with its logits times 3, for the first run)
        a tiny GPT-2-like decoder (2 layers, hidden 32, 2 heads of 16, vocabulary 50, learned
        positions, a KV cache past_i / present_i of [2, batch, 2, seq, 16] per layer, ONNX Runtime's
        subgraph convention input_ids, position_ids, attention_mask, past_0.. -> logits, present_0..)
        run by several GreedySearch and BeamSearch nodes (model_type 0), one per attribute set. The
        weights are initializers of the main graph that each node's decoder reads from the outer
        scope, so the file holds them once. Every node has its own inputs, named <case>_<input>,
        and outputs <case>_sequences (and <case>_sequences_scores, <case>_scores).
  t5/   a tiny T5-like encoder / decoder pair (model_type 1): the `encoder` graph (encoder_input_ids,
        encoder_attention_mask, decoder_input_ids -> logits, encoder_hidden_states,
        present_{key,value}_self_i, present_{key,value}_cross_i) and the `decoder` graph (input_ids,
        encoder_attention_mask, encoder_hidden_states, past_{key,value}_self_i,
        past_{key,value}_cross_i -> logits, present_{key,value}_self_i), 2 decoder layers.
  gpt_shared/ the same decoder written for past_present_share_buffer (past_i and present_i
        [2, batch, 2, max_length, 16], the new keys and values written at the extra input
        past_sequence_length) under one BeamSearch node of 3 beams. Its weights are the decoder's
        own initializers: ONNX Runtime 1.30 fails such a decoder that reads outer-scope values (it
        takes the last feed, an outer value, for past_sequence_length).
  ngram/ NGramRepeatBlock on a few rows.
  whisper/ a tiny Whisper-like pair (model_type 2; hidden 16, 2 heads of 8, vocabulary 60, 8 mel
        bins x 40 frames, 2 encoder and 2 decoder layers) under one WhisperBeamSearch node: the
        `encoder` graph (encoder_input_ids = the float features, decoder_input_ids = the forced
        prompt -> logits [B, L, 60], encoder_hidden_states, presents as T5's, the prompt run
        causally) and the `decoder` graph (T5's without encoder_attention_mask). Its knobs are
        inputs, so the node serves several input sets: test_data_set_0 (4 beams, 2 returned) and
        test_data_set_1 (penalties, masks, min_length, temperature). Its weights are each graph's
        own (ONNX Runtime 1.30's Whisper search fails subgraphs that read outer-scope values).
        With BeamSearch for WhisperBeamSearch (inputs through logits_processor) or without
        decoder_input_ids, ONNX Runtime gives the outputs whisper_test.cc checks.

  /usr/bin/python3 tools/gen_models/gen_generation.py [OUT_DIR]
  for c in gpt t5 gpt_shared ngram; do NODE_PATH=~/ort/node_modules node tools/gen_models/ort_expected.js OUT_DIR/$c; done
  for s in 0 1; do NODE_PATH=~/ort/node_modules node tools/gen_models/ort_expected.js OUT_DIR/whisper $s; done
  for s in 0 1 2 3; do NODE_PATH=~/ort/node_modules node tools/gen_models/ort_expected.js OUT_DIR/sampling $s; done

  sampling/ Sampling nodes on the gpt/ decoder, one per attribute set (top_p, temperature,
        min_tokens_to_keep, filter_value, custom, presence_penalty, the score rules, an init_decoder),
        each with its own inputs, and one test_data_set per seed (5, 123, 0, 2^31 - 1); no_seed is
        top_p's node without the seed input. `gen_generation.py OUT_DIR sampling` writes that folder alone.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VOCAB, HIDDEN, HEADS, HEAD, LAYERS, POSITIONS = 50, 32, 2, 16, 2, 32
EOS, PAD = 7, 0
rng = np.random.default_rng(20261129)


def weight(name, shape, scale):
  return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def const(name, array):
  return numpy_helper.from_array(np.asarray(array), name)


class Nodes:
  """Node list of one graph with unique value names."""

  def __init__(self, prefix):
    self.nodes, self.prefix, self.count = [], prefix, 0

  def __call__(self, op, inputs, n_out=1, **attrs):
    self.count += 1
    outs = [f"{self.prefix}{op.lower()}_{self.count}_{i}" for i in range(n_out)]
    self.nodes.append(helper.make_node(op, inputs, outs, **attrs))
    return outs[0] if n_out == 1 else outs


def layer_norm(n, x, w):
  return n("LayerNormalization", [x, f"{w}_g", f"{w}_b"], axis=-1, epsilon=1e-5)


def linear(n, x, w):
  return n("Add", [n("MatMul", [x, f"{w}_w"]), f"{w}_b"])


def heads(n, x):
  """[B, S, 32] -> [B, 2, S, 16]"""
  return n("Transpose", [n("Reshape", [x, "c_bshd"])], perm=[0, 2, 1, 3])


def merge_heads(n, x):
  return n("Reshape", [n("Transpose", [x], perm=[0, 2, 1, 3]), "c_bsd"])


def attend(n, q, k, v, additive):
  scores = n("Mul", [n("MatMul", [q, n("Transpose", [k], perm=[0, 1, 3, 2])]), "c_scale"])
  if additive is not None:
    scores = n("Add", [scores, additive])
  return merge_heads(n, n("MatMul", [n("Softmax", [scores], axis=-1), v]))


def mlp(n, x, w):
  return linear(n, n("Relu", [linear(n, layer_norm(n, x, f"{w}_ln2"), f"{w}_fc1")]), f"{w}_fc2")


def shared_constants():
  return [const("c_bshd", np.array([0, 0, HEADS, HEAD], np.int64)),
          const("c_bsd", np.array([0, 0, HIDDEN], np.int64)),
          const("c_scale", np.array(1 / np.sqrt(HEAD), np.float32)),
          const("c_neg", np.array(-10000.0, np.float32)),
          const("c_zero_f", np.array(0.0, np.float32)),
          const("c_one_f", np.array(1.0, np.float32)),
          const("c_i0", np.array([0], np.int64)), const("c_i1", np.array([1], np.int64)),
          const("c_i2", np.array([2], np.int64)), const("c_i3", np.array([3], np.int64)),
          const("c_s0", np.array(0, np.int64)), const("c_s1", np.array(1, np.int64)),
          const("c_big", np.array([1 << 30], np.int64))]


def block_weights(prefix, cross=False):
  ws = []
  for ln in ["ln1", "ln2"] + (["lnx"] if cross else []):
    ws += [numpy_helper.from_array((1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32), f"{prefix}_{ln}_g"),
           weight(f"{prefix}_{ln}_b", [HIDDEN], 0.1)]
  for name, shape in [("qkv", [HIDDEN, 3 * HIDDEN]), ("proj", [HIDDEN, HIDDEN]), ("fc1", [HIDDEN, 2 * HIDDEN]),
                      ("fc2", [2 * HIDDEN, HIDDEN])] + ([("xq", [HIDDEN, HIDDEN]), ("xkv", [HIDDEN, 2 * HIDDEN]),
                                                        ("xproj", [HIDDEN, HIDDEN])] if cross else []):
    ws += [weight(f"{prefix}_{name}_w", shape, 0.35), weight(f"{prefix}_{name}_b", [shape[1]], 0.1)]
  return ws


def lm_weights(prefix, vocab=VOCAB, eos=EOS, wte_scale=0.6):
  bias = rng.standard_normal(vocab).astype(np.float32) * 0.3
  bias[eos] += 2.0  # ends some hypotheses before max_length
  return [weight(f"{prefix}_wte", [vocab, HIDDEN], wte_scale), weight(f"{prefix}_wpe", [POSITIONS, HIDDEN], 0.3),
          numpy_helper.from_array(bias, f"{prefix}_lm_bias"),
          numpy_helper.from_array(np.ones(HIDDEN, np.float32), f"{prefix}_lnf_g"),
          weight(f"{prefix}_lnf_b", [HIDDEN], 0.1)]


def logits_of(n, x, prefix):
  wte_t = n("Transpose", [f"{prefix}_wte"], perm=[1, 0])
  return n("Add", [n("MatMul", [layer_norm(n, x, f"{prefix}_lnf"), wte_t]), f"{prefix}_lm_bias"])


def vi(name, elem, shape):
  return helper.make_tensor_value_info(name, elem, shape)


# ------------------------------------------------------------------------------------------------
# GPT-2-like decoder subgraph
# ------------------------------------------------------------------------------------------------
def gpt_decoder(tag, logit_scale=None):
  n = Nodes(f"{tag}_")
  x = n("Add", [n("Gather", ["g_wte", "input_ids"]), n("Gather", ["g_wpe", "position_ids"])])
  # Additive mask [B, 1, S, T]: causal (key j visible to query i when j <= P + i) plus padding.
  mask_f = n("Cast", ["attention_mask"], to=TensorProto.FLOAT)
  pad_add = n("Mul", [n("Sub", ["c_one_f", n("Unsqueeze", [mask_f, n("Concat", ["c_i1", "c_i2"], axis=0)])]), "c_neg"])
  t_len = n("Gather", [n("Shape", ["attention_mask"]), "c_i1"])
  s_len = n("Gather", [n("Shape", ["input_ids"]), "c_i1"])
  ones = n("ConstantOfShape", [n("Concat", [s_len, t_len], axis=0)], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))
  causal = n("Trilu", [ones, n("Squeeze", [n("Sub", [t_len, s_len])])], upper=0)
  causal_add = n("Mul", [n("Sub", ["c_one_f", causal]), "c_neg"])
  additive = n("Add", [pad_add, causal_add])
  outputs = []
  for i in range(LAYERS):
    w = f"g_l{i}"
    q, k, v = n("Split", [linear(n, layer_norm(n, x, f"{w}_ln1"), f"{w}_qkv")], n_out=3, axis=-1)
    past_k = n("Gather", [f"past_{i}", "c_s0"], axis=0)
    past_v = n("Gather", [f"past_{i}", "c_s1"], axis=0)
    k_all = n("Concat", [past_k, heads(n, k)], axis=2)
    v_all = n("Concat", [past_v, heads(n, v)], axis=2)
    n.nodes.append(helper.make_node("Concat", [n("Unsqueeze", [k_all, "c_i0"]), n("Unsqueeze", [v_all, "c_i0"])],
                                    [f"present_{i}"], axis=0))
    x = n("Add", [x, linear(n, attend(n, heads(n, q), k_all, v_all, additive), f"{w}_proj")])
    x = n("Add", [x, mlp(n, x, w)])
  logits = logits_of(n, x, "g")
  if logit_scale is not None:  # an init_decoder that differs, so a test sees which graph ran first
    logits = n("Mul", [logits, logit_scale])
  n.nodes.append(helper.make_node("Identity", [logits], ["logits"]))
  inputs = [vi("input_ids", TensorProto.INT32, ["B", "S"]), vi("position_ids", TensorProto.INT32, ["B", "S"]),
            vi("attention_mask", TensorProto.INT32, ["B", "T"])]
  inputs += [vi(f"past_{i}", TensorProto.FLOAT, [2, "B", HEADS, "P", HEAD]) for i in range(LAYERS)]
  outputs = [vi("logits", TensorProto.FLOAT, ["B", "S", VOCAB])]
  outputs += [vi(f"present_{i}", TensorProto.FLOAT, [2, "B", HEADS, "T", HEAD]) for i in range(LAYERS)]
  return helper.make_graph(n.nodes, f"{tag}_decoder", inputs, outputs)


def gpt_decoder_shared(tag):
  """The decoder for past_present_share_buffer: each present is its past with the new keys and
  values written at past_sequence_length (Slice, Concat); attention reads the first P + S."""
  n = Nodes(f"{tag}_")
  x = n("Add", [n("Gather", ["g_wte", "input_ids"]), n("Gather", ["g_wpe", "position_ids"])])
  mask_f = n("Cast", ["attention_mask"], to=TensorProto.FLOAT)
  pad_add = n("Mul", [n("Sub", ["c_one_f", n("Unsqueeze", [mask_f, n("Concat", ["c_i1", "c_i2"], axis=0)])]), "c_neg"])
  t_len = n("Gather", [n("Shape", ["attention_mask"]), "c_i1"])
  s_len = n("Gather", [n("Shape", ["input_ids"]), "c_i1"])
  ones = n("ConstantOfShape", [n("Concat", [s_len, t_len], axis=0)], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))
  causal = n("Trilu", [ones, n("Squeeze", [n("Sub", [t_len, s_len])])], upper=0)
  additive = n("Add", [pad_add, n("Mul", [n("Sub", ["c_one_f", causal]), "c_neg"])])
  start = n("Reshape", [n("Cast", ["past_sequence_length"], to=TensorProto.INT64), "c_i1"])
  end = n("Add", [start, s_len])
  for i in range(LAYERS):
    w = f"g_l{i}"
    q, k, v = n("Split", [linear(n, layer_norm(n, x, f"{w}_ln1"), f"{w}_qkv")], n_out=3, axis=-1)
    full = []
    for half, new in (("c_s0", heads(n, k)), ("c_s1", heads(n, v))):
      buffer = n("Gather", [f"past_{i}", half], axis=0)
      full.append(n("Concat", [n("Slice", [buffer, "c_i0", start, "c_i2"]), new,
                               n("Slice", [buffer, end, "c_big", "c_i2"])], axis=2))
    n.nodes.append(helper.make_node("Concat", [n("Unsqueeze", [full[0], "c_i0"]), n("Unsqueeze", [full[1], "c_i0"])],
                                    [f"present_{i}"], axis=0))
    k_all = n("Slice", [full[0], "c_i0", end, "c_i2"])
    v_all = n("Slice", [full[1], "c_i0", end, "c_i2"])
    x = n("Add", [x, linear(n, attend(n, heads(n, q), k_all, v_all, additive), f"{w}_proj")])
    x = n("Add", [x, mlp(n, x, w)])
  n.nodes.append(helper.make_node("Identity", [logits_of(n, x, "g")], ["logits"]))
  inputs = [vi("input_ids", TensorProto.INT32, ["B", "S"]), vi("position_ids", TensorProto.INT32, ["B", "S"]),
            vi("attention_mask", TensorProto.INT32, ["B", "T"])]
  inputs += [vi(f"past_{i}", TensorProto.FLOAT, [2, "B", HEADS, "M", HEAD]) for i in range(LAYERS)]
  inputs.append(vi("past_sequence_length", TensorProto.INT32, [1]))
  outputs = [vi("logits", TensorProto.FLOAT, ["B", "S", VOCAB])]
  outputs += [vi(f"present_{i}", TensorProto.FLOAT, [2, "B", HEADS, "M", HEAD]) for i in range(LAYERS)]
  return helper.make_graph(n.nodes, f"{tag}_decoder", inputs, outputs)


def gpt_weights():
  ws = lm_weights("g")
  for i in range(LAYERS):
    ws += block_weights(f"g_l{i}")
  return ws


# ------------------------------------------------------------------------------------------------
# T5-like encoder (with the decoder's first step) and decoder subgraphs
# ------------------------------------------------------------------------------------------------
def t5_decoder_step(n, ids, position, enc_mask_add, hidden, self_past, cross_kv, prefix="t", self_add=None):
  """One decoder step (or, with a causal `self_add`, the first steps): logits, [(present_k, present_v)] per layer."""
  x = n("Add", [n("Gather", [f"{prefix}_wte", ids]), n("Gather", [f"{prefix}_wpe", position])])
  presents = []
  for i in range(LAYERS):
    w = f"{prefix}_d{i}"
    q, k, v = n("Split", [linear(n, layer_norm(n, x, f"{w}_ln1"), f"{w}_qkv")], n_out=3, axis=-1)
    k, v = heads(n, k), heads(n, v)
    if self_past is not None:
      k = n("Concat", [self_past[i][0], k], axis=2)
      v = n("Concat", [self_past[i][1], v], axis=2)
    presents.append((k, v))
    x = n("Add", [x, linear(n, attend(n, heads(n, q), k, v, self_add), f"{w}_proj")])
    xq = heads(n, linear(n, layer_norm(n, x, f"{w}_lnx"), f"{w}_xq"))
    x = n("Add", [x, linear(n, attend(n, xq, cross_kv[i][0], cross_kv[i][1], enc_mask_add), f"{w}_xproj")])
    x = n("Add", [x, mlp(n, x, w)])
  return logits_of(n, x, prefix), presents


def mask_add_of(n, mask):
  mask_f = n("Cast", [mask], to=TensorProto.FLOAT)
  return n("Mul", [n("Sub", ["c_one_f", n("Unsqueeze", [mask_f, n("Concat", ["c_i1", "c_i2"], axis=0)])]), "c_neg"])


def t5_encoder():
  n = Nodes("e_")
  s_len = n("Gather", [n("Shape", ["encoder_input_ids"]), "c_i1"])
  positions = n("Range", ["c_s0", n("Squeeze", [s_len]), "c_s1"])
  x = n("Add", [n("Gather", ["t_wte", "encoder_input_ids"]), n("Gather", ["t_epe", positions])])
  mask_add = mask_add_of(n, "encoder_attention_mask")
  w = "t_e0"
  q, k, v = n("Split", [linear(n, layer_norm(n, x, f"{w}_ln1"), f"{w}_qkv")], n_out=3, axis=-1)
  x = n("Add", [x, linear(n, attend(n, heads(n, q), heads(n, k), heads(n, v), mask_add), f"{w}_proj")])
  x = n("Add", [x, mlp(n, x, w)])
  n.nodes.append(helper.make_node("LayerNormalization", [x, "t_lne_g", "t_lne_b"], ["encoder_hidden_states"], axis=-1))
  cross = []
  for i in range(LAYERS):
    ck, cv = n("Split", [linear(n, "encoder_hidden_states", f"t_d{i}_xkv")], n_out=2, axis=-1)
    cross.append((heads(n, ck), heads(n, cv)))
  zero_pos = n("Mul", [n("Cast", ["decoder_input_ids"], to=TensorProto.INT64), "c_s0"])
  logits, presents = t5_decoder_step(n, "decoder_input_ids", zero_pos, mask_add, "encoder_hidden_states", None, cross)
  n.nodes.append(helper.make_node("Identity", [logits], ["logits"]))
  outputs = [vi("logits", TensorProto.FLOAT, ["B", 1, VOCAB]), vi("encoder_hidden_states", TensorProto.FLOAT, ["B", "S", HIDDEN])]
  for kind, pairs, length in (("self", presents, 1), ("cross", cross, "S")):
    for i, (pk, pv) in enumerate(pairs):
      n.nodes.append(helper.make_node("Identity", [pk], [f"present_key_{kind}_{i}"]))
      n.nodes.append(helper.make_node("Identity", [pv], [f"present_value_{kind}_{i}"]))
      outputs += [vi(f"present_key_{kind}_{i}", TensorProto.FLOAT, ["B", HEADS, length, HEAD]),
                  vi(f"present_value_{kind}_{i}", TensorProto.FLOAT, ["B", HEADS, length, HEAD])]
  inputs = [vi("encoder_input_ids", TensorProto.INT32, ["B", "S"]), vi("encoder_attention_mask", TensorProto.INT32, ["B", "S"]),
            vi("decoder_input_ids", TensorProto.INT32, ["B", 1])]
  return helper.make_graph(n.nodes, "t5_encoder", inputs, outputs)


def t5_decoder():
  n = Nodes("d_")
  mask_add = mask_add_of(n, "encoder_attention_mask")
  past_len = n("Gather", [n("Shape", ["past_key_self_0"]), "c_i2"])
  position = n("Add", [n("Mul", [n("Cast", ["input_ids"], to=TensorProto.INT64), "c_s0"]), past_len])
  self_past = [(f"past_key_self_{i}", f"past_value_self_{i}") for i in range(LAYERS)]
  cross = [(f"past_key_cross_{i}", f"past_value_cross_{i}") for i in range(LAYERS)]
  logits, presents = t5_decoder_step(n, "input_ids", position, mask_add, "encoder_hidden_states", self_past, cross)
  n.nodes.append(helper.make_node("Identity", [logits], ["logits"]))
  outputs = [vi("logits", TensorProto.FLOAT, ["B", 1, VOCAB])]
  for i, (pk, pv) in enumerate(presents):
    n.nodes.append(helper.make_node("Identity", [pk], [f"present_key_self_{i}"]))
    n.nodes.append(helper.make_node("Identity", [pv], [f"present_value_self_{i}"]))
    outputs += [vi(f"present_key_self_{i}", TensorProto.FLOAT, ["B", HEADS, "T", HEAD]),
                vi(f"present_value_self_{i}", TensorProto.FLOAT, ["B", HEADS, "T", HEAD])]
  inputs = [vi("input_ids", TensorProto.INT32, ["B", 1]), vi("encoder_attention_mask", TensorProto.INT32, ["B", "S"]),
            vi("encoder_hidden_states", TensorProto.FLOAT, ["B", "S", HIDDEN])]
  for kind, length in (("self", "P"), ("cross", "S")):
    for i in range(LAYERS):
      inputs += [vi(f"past_key_{kind}_{i}", TensorProto.FLOAT, ["B", HEADS, length, HEAD]),
                 vi(f"past_value_{kind}_{i}", TensorProto.FLOAT, ["B", HEADS, length, HEAD])]
  return helper.make_graph(n.nodes, "t5_decoder", inputs, outputs)


def t5_weights():
  ws = lm_weights("t") + [weight("t_epe", [POSITIONS, HIDDEN], 0.3),
                          numpy_helper.from_array(np.ones(HIDDEN, np.float32), "t_lne_g"), weight("t_lne_b", [HIDDEN], 0.1)]
  ws += block_weights("t_e0")
  for i in range(LAYERS):
    ws += block_weights(f"t_d{i}", cross=True)
  return ws


# ------------------------------------------------------------------------------------------------
# Whisper-like encoder / decoder pair (model_type 2)
# ------------------------------------------------------------------------------------------------
W_VOCAB, N_MELS, FRAMES, W_ENC_LAYERS = 60, 8, 40, 2
W_WTE_SCALE = 0.2  # flatter next-token distributions than the other models: the beams differ
W_EOS, W_SOT = 50, 51  # end of text (also pad), start of transcript; 52-55 languages, 56-57 tasks


def whisper_encoder():
  """input features [B, 8, 40] and the forced prompt -> logits, encoder_hidden_states, presents."""
  n = Nodes("we_")
  x = n("Transpose", ["encoder_input_ids"], perm=[0, 2, 1])  # [B, frames, mels]
  x = n("Add", [n("Relu", [linear(n, x, "w_conv")]), "w_epe"])
  for i in range(W_ENC_LAYERS):
    w = f"w_e{i}"
    q, k, v = n("Split", [linear(n, layer_norm(n, x, f"{w}_ln1"), f"{w}_qkv")], n_out=3, axis=-1)
    x = n("Add", [x, linear(n, attend(n, heads(n, q), heads(n, k), heads(n, v), None), f"{w}_proj")])
    x = n("Add", [x, mlp(n, x, w)])
  n.nodes.append(helper.make_node("LayerNormalization", [x, "w_lne_g", "w_lne_b"], ["encoder_hidden_states"], axis=-1))
  cross = []
  for i in range(LAYERS):
    ck, cv = n("Split", [linear(n, "encoder_hidden_states", f"w_d{i}_xkv")], n_out=2, axis=-1)
    cross.append((heads(n, ck), heads(n, cv)))
  # The prompt runs causally: position j attends to 0..j.
  length = n("Gather", [n("Shape", ["decoder_input_ids"]), "c_i1"])
  positions = n("Range", ["c_s0", n("Squeeze", [length]), "c_s1"])
  ones = n("ConstantOfShape", [n("Concat", [length, length], axis=0)],
           value=numpy_helper.from_array(np.array([1.0], np.float32)))
  causal = n("Mul", [n("Sub", ["c_one_f", n("Trilu", [ones], upper=0)]), "c_neg"])
  logits, presents = t5_decoder_step(n, "decoder_input_ids", positions, None, "encoder_hidden_states", None, cross,
                                     prefix="w", self_add=causal)
  n.nodes.append(helper.make_node("Identity", [logits], ["logits"]))
  outputs = [vi("logits", TensorProto.FLOAT, ["B", "L", W_VOCAB]),
             vi("encoder_hidden_states", TensorProto.FLOAT, ["B", FRAMES, HIDDEN])]
  for kind, pairs, length in (("self", presents, "L"), ("cross", cross, FRAMES)):
    for i, (pk, pv) in enumerate(pairs):
      n.nodes.append(helper.make_node("Identity", [pk], [f"present_key_{kind}_{i}"]))
      n.nodes.append(helper.make_node("Identity", [pv], [f"present_value_{kind}_{i}"]))
      outputs += [vi(f"present_key_{kind}_{i}", TensorProto.FLOAT, ["B", HEADS, length, HEAD]),
                  vi(f"present_value_{kind}_{i}", TensorProto.FLOAT, ["B", HEADS, length, HEAD])]
  inputs = [vi("encoder_input_ids", TensorProto.FLOAT, ["B", N_MELS, FRAMES]),
            vi("decoder_input_ids", TensorProto.INT32, ["B", "L"])]
  return helper.make_graph(n.nodes, "whisper_encoder", inputs, outputs)


def whisper_decoder():
  n = Nodes("wd_")
  past_len = n("Gather", [n("Shape", ["past_key_self_0"]), "c_i2"])
  position = n("Add", [n("Mul", [n("Cast", ["input_ids"], to=TensorProto.INT64), "c_s0"]), past_len])
  self_past = [(f"past_key_self_{i}", f"past_value_self_{i}") for i in range(LAYERS)]
  cross = [(f"past_key_cross_{i}", f"past_value_cross_{i}") for i in range(LAYERS)]
  logits, presents = t5_decoder_step(n, "input_ids", position, None, "encoder_hidden_states", self_past, cross, prefix="w")
  n.nodes.append(helper.make_node("Identity", [logits], ["logits"]))
  outputs = [vi("logits", TensorProto.FLOAT, ["B", 1, W_VOCAB])]
  for i, (pk, pv) in enumerate(presents):
    n.nodes.append(helper.make_node("Identity", [pk], [f"present_key_self_{i}"]))
    n.nodes.append(helper.make_node("Identity", [pv], [f"present_value_self_{i}"]))
    outputs += [vi(f"present_key_self_{i}", TensorProto.FLOAT, ["B", HEADS, "T", HEAD]),
                vi(f"present_value_self_{i}", TensorProto.FLOAT, ["B", HEADS, "T", HEAD])]
  inputs = [vi("input_ids", TensorProto.INT32, ["B", 1]), vi("encoder_hidden_states", TensorProto.FLOAT, ["B", FRAMES, HIDDEN])]
  for kind, length in (("self", "P"), ("cross", FRAMES)):
    for i in range(LAYERS):
      inputs += [vi(f"past_key_{kind}_{i}", TensorProto.FLOAT, ["B", HEADS, length, HEAD]),
                 vi(f"past_value_{kind}_{i}", TensorProto.FLOAT, ["B", HEADS, length, HEAD])]
  return helper.make_graph(n.nodes, "whisper_decoder", inputs, outputs)


def whisper_weights():
  ws = lm_weights("w", W_VOCAB, W_EOS, W_WTE_SCALE) + [
      weight("w_epe", [FRAMES, HIDDEN], 0.3), weight("w_conv_w", [N_MELS, HIDDEN], 0.5), weight("w_conv_b", [HIDDEN], 0.1),
      numpy_helper.from_array(np.ones(HIDDEN, np.float32), "w_lne_g"), weight("w_lne_b", [HIDDEN], 0.1)]
  for i in range(W_ENC_LAYERS):
    ws += block_weights(f"w_e{i}")
  for i in range(LAYERS):
    ws += block_weights(f"w_d{i}", cross=True)
  return ws


# ------------------------------------------------------------------------------------------------
# Cases: one node per attribute set, its own inputs
# ------------------------------------------------------------------------------------------------
GREEDY_INPUTS = ["input_ids", "max_length", "min_length", "repetition_penalty", "vocab_mask", "prefix_vocab_mask",
                 "attention_mask"]
BEAM_INPUTS = ["input_ids", "max_length", "min_length", "num_beams", "num_return_sequences", "length_penalty",
               "repetition_penalty", "vocab_mask", "prefix_vocab_mask", "attention_mask", "decoder_input_ids",
               "logits_processor"]
WHISPER_INPUTS = BEAM_INPUTS + ["cross_qk_layer_head", "extra_decoding_ids", "temperature"]
SAMPLING_INPUTS = GREEDY_INPUTS + ["presence_mask", "seed"]


def padded_prompts(rows, pad_left=True):
  width = max(len(r) for r in rows)
  ids = np.full((len(rows), width), PAD, np.int32)
  mask = np.zeros((len(rows), width), np.int32)
  for i, r in enumerate(rows):
    start = width - len(r) if pad_left else 0
    ids[i, start:start + len(r)] = r
    mask[i, start:start + len(r)] = 1
  return ids, mask


def vocab_mask(blocked, vocab=VOCAB):
  m = np.ones(vocab, np.int32)
  m[blocked] = 0
  return m


def make_case(op, name, attrs, values, graphs, with_scores=False):
  """The node, its graph inputs and outputs, and the input values, in the model's input order."""
  names = {"GreedySearch": GREEDY_INPUTS, "BeamSearch": BEAM_INPUTS, "WhisperBeamSearch": WHISPER_INPUTS,
           "Sampling": SAMPLING_INPUTS}[op]
  node_inputs, graph_inputs, feeds = [], [], []
  for input_name in names:
    if input_name not in values:
      node_inputs.append("")
      continue
    value = np.asarray(values[input_name])
    full = f"{name}_{input_name}"
    node_inputs.append(full)
    elem = TensorProto.FLOAT if value.dtype == np.float32 else TensorProto.INT32
    graph_inputs.append(vi(full, elem, list(value.shape)))
    feeds.append(numpy_helper.from_array(value, full))
  while node_inputs and node_inputs[-1] == "":
    node_inputs.pop()
  outs = [f"{name}_sequences"]
  graph_outputs = [vi(outs[0], TensorProto.INT32, None)]
  if op not in ("GreedySearch", "Sampling"):
    outs.append(f"{name}_sequences_scores")
    graph_outputs.append(vi(outs[1], TensorProto.FLOAT, None))
    if with_scores:
      outs.append(f"{name}_scores")
      graph_outputs.append(vi(outs[2], TensorProto.FLOAT, None))
  node = helper.make_node(op, node_inputs, outs, name=name, domain="com.microsoft", **attrs, **graphs)
  return node, graph_inputs, graph_outputs, feeds


def scalar_i(v):
  return np.array([v], np.int32)


def scalar_f(v):
  return np.array([v], np.float32)


def gpt_cases():
  prompts2, mask2 = padded_prompts([[11, 23, 5, 40], [3, 17]])
  prompts3, mask3 = padded_prompts([[11, 23, 5], [31, 2, 9, 14, 28], [44]])
  prompts4, mask4 = padded_prompts([[34, 44, 29, 39], [12, 3, 15, 14, 43], [1, 25, 41, 7, 40], [23]])
  prefix = np.ones((2, VOCAB), np.int32)
  prefix[0, :25] = 0
  prefix[1, 25:] = 0
  common = dict(eos_token_id=EOS, pad_token_id=PAD)
  cases = [
      ("GreedySearch", "greedy_padded", dict(common, model_type=0),
       dict(input_ids=prompts2, max_length=scalar_i(14), attention_mask=mask2), False),
      ("GreedySearch", "greedy_processors", dict(common, model_type=0, no_repeat_ngram_size=2, vocab_size=VOCAB),
       dict(input_ids=prompts3, max_length=scalar_i(16), min_length=scalar_i(9), repetition_penalty=scalar_f(1.6),
            vocab_mask=vocab_mask([4, 9, 33]), attention_mask=mask3), False),
      ("GreedySearch", "greedy_prefix", dict(common), dict(input_ids=prompts2, max_length=scalar_i(10),
                                                           prefix_vocab_mask=prefix, attention_mask=mask2), False),
      ("BeamSearch", "beam_basic", dict(common, model_type=0, early_stopping=0),
       dict(input_ids=prompts2, max_length=scalar_i(16), min_length=scalar_i(0), num_beams=scalar_i(4),
            num_return_sequences=scalar_i(2), length_penalty=scalar_f(1.0), repetition_penalty=scalar_f(1.0),
            attention_mask=mask2), True),
      ("BeamSearch", "beam_early", dict(common, model_type=0, early_stopping=1),
       dict(input_ids=prompts2, max_length=scalar_i(16), min_length=scalar_i(0), num_beams=scalar_i(4),
            num_return_sequences=scalar_i(3), length_penalty=scalar_f(1.0), repetition_penalty=scalar_f(1.0),
            attention_mask=mask2), False),
      ("BeamSearch", "beam_penalties", dict(common, model_type=0, early_stopping=0, vocab_size=VOCAB),
       dict(input_ids=prompts3, max_length=scalar_i(15), min_length=scalar_i(9), num_beams=scalar_i(3),
            num_return_sequences=scalar_i(3), length_penalty=scalar_f(0.6), repetition_penalty=scalar_f(1.4),
            attention_mask=mask3), True),
      ("BeamSearch", "beam_masks", dict(common, model_type=0, early_stopping=0, no_repeat_ngram_size=2),
       dict(input_ids=prompts2, max_length=scalar_i(14), min_length=scalar_i(0), num_beams=scalar_i(3),
            num_return_sequences=scalar_i(1), length_penalty=scalar_f(2.0), repetition_penalty=scalar_f(1.0),
            vocab_mask=vocab_mask([1, 12, 30]), prefix_vocab_mask=prefix, attention_mask=mask2), False),
      # Four sentences, eos equal to pad: ONNX Runtime's done test reads each sentence's best candidate
      # score from offset batch * num_beams of the 2 * num_beams-per-sentence list; this case
      # ends differently when that offset is batch * 2 * num_beams (found by a seeded search).
      ("BeamSearch", "beam_batch4", dict(eos_token_id=0, pad_token_id=PAD, early_stopping=0),
       dict(input_ids=prompts4, max_length=scalar_i(12), min_length=scalar_i(0), num_beams=scalar_i(4),
            num_return_sequences=scalar_i(4), length_penalty=scalar_f(0.5), repetition_penalty=scalar_f(1.0),
            attention_mask=mask4), False),
      ("BeamSearch", "beam_init", dict(common, model_type=0, early_stopping=0),
       dict(input_ids=prompts2, max_length=scalar_i(12), min_length=scalar_i(0), num_beams=scalar_i(3),
            num_return_sequences=scalar_i(2), length_penalty=scalar_f(1.0), repetition_penalty=scalar_f(1.0),
            attention_mask=mask2), False),
      ("BeamSearch", "beam_one", dict(common), dict(input_ids=prompts3, max_length=scalar_i(12), min_length=scalar_i(0),
                                                    num_beams=scalar_i(1), num_return_sequences=scalar_i(1), length_penalty=scalar_f(1.0),
                                                    repetition_penalty=scalar_f(1.0), attention_mask=mask3), False),
  ]
  return cases


def gpt_shared_cases():
  prompts2, mask2 = padded_prompts([[11, 23, 5, 40], [3, 17]])
  return [("BeamSearch", "shared_beams", dict(eos_token_id=EOS, pad_token_id=PAD),
           dict(input_ids=prompts2, max_length=scalar_i(12), min_length=scalar_i(0), num_beams=scalar_i(3),
                num_return_sequences=scalar_i(2), length_penalty=scalar_f(1.0), repetition_penalty=scalar_f(1.0),
                attention_mask=mask2), True)]


def t5_cases():
  prompts, mask = padded_prompts([[21, 8, 34, 2, 7], [15, 40, 3]], pad_left=False)
  # The random T5 repeats a few tokens; those are the ends of sentence here, so hypotheses end early.
  common = dict(pad_token_id=PAD, decoder_start_token_id=PAD, model_type=1)
  return [
      ("BeamSearch", "t5_basic", dict(common, eos_token_id=16, early_stopping=0),
       dict(input_ids=prompts, max_length=scalar_i(12), min_length=scalar_i(0), num_beams=scalar_i(3),
            num_return_sequences=scalar_i(2), length_penalty=scalar_f(1.0), repetition_penalty=scalar_f(1.0),
            attention_mask=mask), True),
      ("BeamSearch", "t5_processors", dict(common, eos_token_id=27, early_stopping=1, no_repeat_ngram_size=3, vocab_size=VOCAB),
       dict(input_ids=prompts, max_length=scalar_i(14), min_length=scalar_i(6), num_beams=scalar_i(4),
            num_return_sequences=scalar_i(4), length_penalty=scalar_f(1.5), repetition_penalty=scalar_f(1.3),
            vocab_mask=vocab_mask([11, 19])), False),
  ]


def whisper_sets():
  """One WhisperBeamSearch node, several input sets (test_data_set_<i>): the knobs are inputs."""
  rng_w = np.random.default_rng(20261130)
  features = rng_w.standard_normal((2, N_MELS, FRAMES)).astype(np.float32)
  prompt = np.array([[W_SOT, 53, 56], [W_SOT, 54, 57]], np.int32)  # start of transcript, language, task
  no_prefix = np.ones((2, W_VOCAB), np.int32)
  prefix = no_prefix.copy()
  prefix[0, 30:] = 0
  prefix[1, :20] = 0
  beams = dict(input_ids=features, max_length=scalar_i(14), min_length=scalar_i(0), num_beams=scalar_i(4),
               num_return_sequences=scalar_i(2), length_penalty=scalar_f(1.0), repetition_penalty=scalar_f(1.0),
               vocab_mask=np.ones(W_VOCAB, np.int32), prefix_vocab_mask=no_prefix, decoder_input_ids=prompt,
               logits_processor=scalar_i(0), temperature=scalar_f(1.0))
  penalties = dict(beams, max_length=scalar_i(15), min_length=scalar_i(8), num_beams=scalar_i(3),
                   length_penalty=scalar_f(0.6), repetition_penalty=scalar_f(1.5),
                   vocab_mask=vocab_mask([4, 9, 33], W_VOCAB), prefix_vocab_mask=prefix, temperature=scalar_f(1.7))
  return [beams, penalties]


SAMPLING_SEEDS = [5, 123, 0, 2147483647]  # one test_data_set each; 0 and 2^31 - 1 draw as seed 1 does


def sampling_sets():
  """The Sampling nodes (one per attribute set) and, per seed, every node's input values."""
  prompts2, mask2 = padded_prompts([[11, 23, 5, 40], [3, 17]])
  prompts3, mask3 = padded_prompts([[11, 23, 5], [31, 2, 9, 14, 28], [44]])
  prefix = np.ones((3, VOCAB), np.int32)
  prefix[0, :25] = 0
  prefix[2, 25:] = 0
  presence = np.zeros((2, VOCAB), np.int32)
  presence[0, [3, 11, 17, 23]] = 1
  presence[1, [5, 40, 41]] = 2
  common = dict(eos_token_id=EOS, pad_token_id=PAD)
  nodes = [  # name, attributes, inputs (the seed added per set)
      ("top_p", dict(common, top_p=0.9), dict(input_ids=prompts2, max_length=scalar_i(14), attention_mask=mask2)),
      ("hot", dict(common, top_p=0.7, temperature=1.8), dict(input_ids=prompts2, max_length=scalar_i(16), attention_mask=mask2)),
      ("cold_keep", dict(common, top_p=0.05, temperature=0.6, min_tokens_to_keep=3),
       dict(input_ids=prompts2, max_length=scalar_i(14), attention_mask=mask2)),
      ("filter_value", dict(common, top_p=0.3, filter_value=-1.0, temperature=1.5),
       dict(input_ids=prompts2, max_length=scalar_i(14), attention_mask=mask2)),
      ("processors", dict(common, top_p=0.95, no_repeat_ngram_size=2, vocab_size=VOCAB, temperature=1.3),
       dict(input_ids=prompts3, max_length=scalar_i(16), min_length=scalar_i(10), repetition_penalty=scalar_f(1.4),
            vocab_mask=vocab_mask([4, 9, 33]), prefix_vocab_mask=prefix, attention_mask=mask3)),
      # ONNX Runtime's presence penalty moves the first score of the first row only (logits.h); a
      # negative penalty lifts that token (0) so that the draws show it.
      ("presence", dict(common, top_p=0.9, presence_penalty=-0.25, temperature=1.4),
       dict(input_ids=prompts2, max_length=scalar_i(14), attention_mask=mask2, presence_mask=presence)),
      ("custom", dict(common, top_p=0.8, custom=1, temperature=1.6),
       dict(input_ids=prompts2, max_length=scalar_i(14), attention_mask=mask2)),
      # ONNX Runtime scales by a temperature above 0 only: this node draws as top_p's does.
      ("zero_temperature", dict(common, top_p=0.9, temperature=0.0),
       dict(input_ids=prompts2, max_length=scalar_i(14), attention_mask=mask2)),
      # With an init_decoder (the decoder with its logits times 3) for the first run.
      ("init", dict(common, top_p=0.9, temperature=1.5), dict(input_ids=prompts2, max_length=scalar_i(14), attention_mask=mask2)),
  ]
  sets = [{name: dict(values, seed=scalar_i(seed)) for name, _, values in nodes} for seed in SAMPLING_SEEDS]
  # top_p's node again without the seed input: ONNX Runtime then seeds with 0.
  nodes.append(("no_seed", nodes[0][1], nodes[0][2]))
  for s in sets:
    s["no_seed"] = nodes[0][2]
  return nodes, sets


def write_sampling(out_dir, weights):
  """Sampling nodes on the GPT decoder (its weights once, in the main graph), one input set per seed."""
  nodes, sets = sampling_sets()
  graph_nodes, inputs, outputs = [], [], []
  for name, attrs, _ in nodes:
    graphs = {"decoder": gpt_decoder(name)}
    if name == "init":  # its scale is the graph's own, as beam_init's
      graphs["init_decoder"] = gpt_decoder(name + "_init", logit_scale="init_three")
      graphs["init_decoder"].initializer.append(const("init_three", np.array(3.0, np.float32)))
    node, gi, go, _ = make_case("Sampling", name, attrs, sets[0][name], graphs)
    graph_nodes.append(node)
    inputs += gi
    outputs += go
  graph = helper.make_graph(graph_nodes, "sampling", inputs, outputs, initializer=weights + shared_constants())
  model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                            producer_name="gen_generation.py")
  model.ir_version = 8
  save(out_dir, model, [])
  for k, values in enumerate(sets):
    os.makedirs(os.path.join(out_dir, f"test_data_set_{k}"), exist_ok=True)
    feeds = [f for name, _, _ in nodes for f in make_case("Sampling", name, {}, values[name], {})[3]]
    for i, t in enumerate(feeds):
      with open(os.path.join(out_dir, f"test_data_set_{k}", f"input_{i}.pb"), "wb") as f:
        f.write(t.SerializeToString())


def used_initializers(graph, initializers):
  used = {i for node in graph.node for i in node.input}
  return [t for t in initializers if t.name in used]


def write_whisper(out_dir):
  """The Whisper-like pair at hidden 16 (2 heads of 8): ONNX Runtime 1.30's Whisper search fails
  subgraphs that read outer-scope values (one feed too many), so each graph holds the weights it
  reads, and one node serves every input set."""
  global HIDDEN, HEAD
  HIDDEN, HEAD = 16, 8  # after the other models: they keep theirs
  initializers = whisper_weights() + shared_constants()
  sets = whisper_sets()
  graphs = {"encoder": whisper_encoder(), "decoder": whisper_decoder()}
  for g in graphs.values():
    g.initializer.extend(used_initializers(g, initializers))
  node, inputs, outputs, _ = make_case("WhisperBeamSearch", "whisper",
                                       dict(eos_token_id=W_EOS, pad_token_id=W_EOS, decoder_start_token_id=W_SOT,
                                            model_type=2, early_stopping=0), sets[0], graphs, with_scores=True)
  graph = helper.make_graph([node], "whisper", inputs, outputs)
  model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                            producer_name="gen_generation.py")
  model.ir_version = 8
  save(out_dir, model, [])
  for k, values in enumerate(sets):
    os.makedirs(os.path.join(out_dir, f"test_data_set_{k}"), exist_ok=True)
    _, _, _, feeds = make_case("WhisperBeamSearch", "whisper", {}, values, {})
    for i, t in enumerate(feeds):
      with open(os.path.join(out_dir, f"test_data_set_{k}", f"input_{i}.pb"), "wb") as f:
        f.write(t.SerializeToString())


def write_model(out_dir, cases, graphs, weights, opset=17, weights_inside=False):
  nodes, inputs, outputs, feeds = [], [], [], []
  for op, name, attrs, values, with_scores in cases:
    node, gi, go, f = make_case(op, name, attrs, values, graphs(name), with_scores)
    nodes.append(node)
    inputs += gi
    outputs += go
    feeds += f
  initializers = weights + shared_constants()
  if weights_inside:
    for node in nodes:
      for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
          a.g.initializer.extend(initializers)
    initializers = []
  graph = helper.make_graph(nodes, os.path.basename(out_dir), inputs, outputs, initializer=initializers)
  model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)],
                            producer_name="gen_generation.py")
  model.ir_version = 8
  save(out_dir, model, feeds)


def save(out_dir, model, feeds):
  os.makedirs(os.path.join(out_dir, "test_data_set_0"), exist_ok=True)
  onnx.save(model, os.path.join(out_dir, "model.onnx"))
  for i, t in enumerate(feeds):
    with open(os.path.join(out_dir, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
      f.write(t.SerializeToString())


def write_ngram(out_dir):
  ids = np.array([[3, 4, 5, 3, 4], [1, 1, 1, 2, 1], [9, 8, 7, 6, 5]], np.int64)
  scores = rng.standard_normal((3, 10)).astype(np.float32)
  node = helper.make_node("NGramRepeatBlock", ["input_ids", "scores"], ["scores_out"], domain="com.microsoft", ngram_size=2)
  graph = helper.make_graph([node], "ngram", [vi("input_ids", TensorProto.INT64, [3, 5]), vi("scores", TensorProto.FLOAT, [3, 10])],
                            [vi("scores_out", TensorProto.FLOAT, [3, 10])])
  model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
  model.ir_version = 8
  save(out_dir, model, [numpy_helper.from_array(ids, "input_ids"), numpy_helper.from_array(scores, "scores")])


def main():
  out = sys.argv[1] if len(sys.argv) > 1 else "ops/generation/testdata"
  gpt = gpt_weights()
  if sys.argv[2:] == ["sampling"]:  # that folder only (same weights: they are the generator's first draws)
    write_sampling(os.path.join(out, "sampling"), gpt)
    return
  def gpt_graphs(name):
    graphs = {"decoder": gpt_decoder(name)}
    if name == "beam_init":  # ONNX Runtime's optional graph for the first run, here with logits x 3
      # The scale is the graph's own: ONNX Runtime feeds both graphs the node's outer values, so
      # they must read the same ones.
      graphs["init_decoder"] = gpt_decoder(name + "_init", logit_scale="init_three")
      graphs["init_decoder"].initializer.append(const("init_three", np.array(3.0, np.float32)))
    return graphs
  write_model(os.path.join(out, "gpt"), gpt_cases(), gpt_graphs, gpt)
  weights = t5_weights()
  write_model(os.path.join(out, "t5"), t5_cases(),
              lambda name: {"encoder": t5_encoder(), "decoder": t5_decoder()}, weights)
  write_model(os.path.join(out, "gpt_shared"), gpt_shared_cases(), lambda name: {"decoder": gpt_decoder_shared(name)},
              gpt, weights_inside=True)
  write_ngram(os.path.join(out, "ngram"))
  write_sampling(os.path.join(out, "sampling"), gpt)
  write_whisper(os.path.join(out, "whisper"))  # last: the other models keep their seeded weights


if __name__ == "__main__":
  main()
