#!/usr/bin/python3
"""Recurrent networks as sequence models stack them (OCR's CRNN head, speech and time-series
encoders), seeded random weights:

    /usr/bin/python3 tools/gen_models/rnn_models.py OUT_DIR [SEED]

writes OUT_DIR/<case>/model.onnx (opset 17) and OUT_DIR/<case>/test_data_set_0/input_0.pb, the
input x [T = 200, batch 1, features]; each case is two layers, each layer's Y [T, D, 1, H]
Transposed to [T, 1, D, H] and Reshaped to [T, 1, D * H] for the next one (as torch.onnx exports
nn.LSTM / nn.GRU with num_layers = 2, batch_first = False):
  * lstm_bi:     bidirectional LSTM, 80 features -> hidden 256 (a CRNN text recognizer's head)
  * lstm_uni:    forward LSTM, 80 -> hidden 512
  * lstm_uni256: forward LSTM, 80 -> hidden 256
  * lstm_uni128: forward LSTM, 64 -> hidden 128 (a small VAD / keyword model's)
  * gru_bi:      bidirectional GRU, 80 -> hidden 256 (linear_before_reset 0)
  * gru_uni256:  forward GRU, 80 -> hidden 256
Weights ~ N(0, 0.1), inputs ~ N(0, 1). Expected outputs from ONNX Runtime: ort_expected.js.
Deterministic: the same seed writes the same bytes, so nothing is committed.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

STEPS = 200
CASES = [  # name, op, features, hidden, direction, gates
    ("lstm_bi", "LSTM", 80, 256, "bidirectional", 4),
    ("lstm_uni", "LSTM", 80, 512, "forward", 4),
    ("lstm_uni256", "LSTM", 80, 256, "forward", 4),
    ("lstm_uni128", "LSTM", 64, 128, "forward", 4),
    ("gru_bi", "GRU", 80, 256, "bidirectional", 3),
    ("gru_uni256", "GRU", 80, 256, "forward", 3),
]


def write_case(out, rng, name, op, features, hidden, direction, gates, layers=2):
    dirs = 2 if direction == "bidirectional" else 1
    nodes, inits, x = [], [], "x"
    for layer in range(layers):
        fan_in = features if layer == 0 else hidden * dirs
        for w, shape in ((f"W{layer}", (dirs, gates * hidden, fan_in)), (f"R{layer}", (dirs, gates * hidden, hidden)),
                         (f"B{layer}", (dirs, 2 * gates * hidden))):
            inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), w))
        nodes.append(helper.make_node(op, [x, f"W{layer}", f"R{layer}", f"B{layer}"], [f"y{layer}"],
                                      hidden_size=hidden, direction=direction))
        nodes.append(helper.make_node("Transpose", [f"y{layer}"], [f"t{layer}"], perm=[0, 2, 1, 3]))
        inits.append(numpy_helper.from_array(np.array([STEPS, 1, dirs * hidden], np.int64), f"s{layer}"))
        nodes.append(helper.make_node("Reshape", [f"t{layer}", f"s{layer}"], [f"h{layer}"]))
        x = f"h{layer}"
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [STEPS, 1, features])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [STEPS, 1, dirs * hidden])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    data = numpy_helper.from_array(rng.standard_normal((STEPS, 1, features)).astype(np.float32), "x")
    with open(os.path.join(folder, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(data.SerializeToString())


def main():
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    for case in CASES:
        write_case(out, np.random.default_rng([seed, CASES.index(case)]), *case)
        print(os.path.join(out, case[0]))


if __name__ == "__main__":
    main()
