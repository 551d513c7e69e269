#!/usr/bin/python3
"""One-node com.microsoft MatMulNBits model (4-bit weights, seeded random), for timing against
ONNX Runtime:  /usr/bin/python3 tools/gen_models/matmul_nbits.py OUT.onnx [M K N block_size accuracy_level zero_points layers]
(zero_points 1, the default, gives B packed uint8 zero points; 0 leaves them out: 8 for every block.
layers > 1 chains that many nodes with weights of their own (K = N): weights larger than the last-level
cache, read from memory as a decoder's are, instead of from cache run after run)

The model is rebuilt bit for bit from the seed, so it is not committed (K = N = 4096 is 8 MB)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def main():
    out = sys.argv[1]
    m, k, n, block, acc, with_zp, layers = (
        int(v) for v in (sys.argv[2:9] + ["1", "4096", "4096", "32", "0", "1", "1"][len(sys.argv) - 2:]))
    if layers > 1 and k != n:
        sys.exit("layers > 1 needs K = N")
    rng = np.random.default_rng(21)
    blocks = (k + block - 1) // block
    nodes, initializers = [], []
    for layer in range(layers):
        sfx = "" if layers == 1 else f"_{layer}"
        q = rng.integers(0, 16, size=(n, blocks * block), dtype=np.uint8)
        packed = (q[:, 0::2] | (q[:, 1::2] << 4)).reshape(n, blocks, block // 2)
        scales = (rng.random(n * blocks, dtype=np.float32) * 0.02 + 0.001).astype(np.float32)
        zq = rng.integers(0, 16, size=(n, blocks + (blocks & 1)), dtype=np.uint8)
        zp = (zq[:, 0::2] | (zq[:, 1::2] << 4)).reshape(-1)
        inputs = ["A" if layer == 0 else f"Y_{layer - 1}", "B" + sfx, "scales" + sfx]
        inputs += ["zero_points" + sfx] if with_zp else []
        nodes.append(helper.make_node("MatMulNBits", inputs, ["Y" if layer == layers - 1 else f"Y_{layer}"],
                                      domain="com.microsoft", K=k, N=n, bits=4, block_size=block,
                                      accuracy_level=acc))
        initializers += [helper.make_tensor("B" + sfx, TensorProto.UINT8, packed.shape, packed.tobytes(), raw=True),
                         helper.make_tensor("scales" + sfx, TensorProto.FLOAT, scales.shape, scales.tobytes(), raw=True)]
        if with_zp:
            initializers.append(helper.make_tensor("zero_points" + sfx, TensorProto.UINT8, zp.shape, zp.tobytes(),
                                                   raw=True))
    graph = helper.make_graph(
        nodes, "matmul_nbits",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    onnx.save(model, out)


if __name__ == "__main__":
    main()
