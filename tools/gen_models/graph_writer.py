"""The nodes and initializers a seeded model generator writes (gen_bert.py, gen_vit.py, ...): weights
drawn from one generator in the order asked, nodes named after their first output."""
import numpy as np
from onnx import helper, numpy_helper


class GraphWriter:
    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits = [], []

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def weight(self, name, shape, std=0.02):
        return self.init(name, (self.rng.standard_normal(shape) * std).astype(np.float32))

    def node(self, op, inputs, outputs, **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0] + "_node", **attrs))
        return outputs[0]

    def layer_norm(self, x, prefix, size, epsilon):
        """LayerNormalization over the last axis, gamma near 1 and beta near 0."""
        g = self.init(prefix + ".gamma", (1.0 + 0.1 * self.rng.standard_normal(size)).astype(np.float32))
        b = self.init(prefix + ".beta", (0.1 * self.rng.standard_normal(size)).astype(np.float32))
        return self.node("LayerNormalization", [x, g, b], [prefix + ".out"], axis=-1, epsilon=epsilon)

    def linear(self, x, prefix, n_in, n_out):
        """MatMul + Add, as PyTorch exports nn.Linear."""
        w = self.weight(prefix + ".weight", (n_in, n_out))
        b = self.weight(prefix + ".bias", (n_out,))
        return self.node("Add", [self.node("MatMul", [x, w], [prefix + ".mm"]), b], [prefix + ".out"])


class NamedGraphWriter(GraphWriter):
    """A GraphWriter that names what it adds itself: `prefix` and a running count, so layers can be
    written without inventing names (gen_vision.py, upsample_models.py, zoo_models.py)."""

    def __init__(self, rng):
        super().__init__(rng)
        self.count = 0

    def name(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def op(self, op, inputs, prefix=None, **attrs):
        return self.node(op, inputs, [self.name(prefix or op.lower())], **attrs)

    def const(self, prefix, arr):
        return self.init(self.name(prefix), arr)
