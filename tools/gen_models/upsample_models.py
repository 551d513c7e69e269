#!/usr/bin/python3
"""Image-to-image networks that up-sample, as PyTorch exports them (opset 13), seeded random weights
with fan-in scales so activations stay near unit size, each written as a case folder
OUT/<case>/model.onnx and OUT/<case>/test_data_set_0/input_0.pb (expected outputs:
tools/gen_models/ort_expected.js):

  * style_convt: fast neural style transfer (Johnson et al.; pytorch/examples' TransformerNet, the
    ONNX model zoo's mosaic / candy): each ConvLayer is ReflectionPad2d(k // 2) -> Conv (9x9 stem
    3 -> 32, 3x3 stride 2 to 64 and 128), InstanceNorm2d(affine) -> Relu; 5 residual blocks of two
    such 3x3 layers at 128 channels with the residual Add; up-sampling by ConvTranspose 3x3
    stride 2 pad 1 output_padding 1 (128 -> 64 -> 32), each InstanceNorm -> Relu; the last
    ConvLayer 9x9 32 -> 3. 224x224.
  * style_resize: the same with UpsampleConvLayer instead (the zoo's models): Resize nearest x2
    (scales [1, 1, 2, 2], asymmetric / floor, as F.interpolate exports) -> ReflectionPad -> Conv 3x3.
  * dcgan: the DCGAN generator (ngf 64, nz 100): latent [1, 100, 1, 1] -> ConvTranspose 4x4 stride
    1 to 4x4x512, then ConvTranspose 4x4 stride 2 pad 1 (512 -> 256 -> 128 -> 64), each without
    bias and followed by BatchNormalization (torch.onnx does not fold it into a ConvTranspose) and
    Relu, then ConvTranspose 64 -> 3 and Tanh: a 64x64 image.
  * unet: the classic U-Net (milesial/Pytorch-UNet) at 256x256, base width --width (32): DoubleConv
    (Conv 3x3 with BatchNorm folded, as torch.onnx folds it, -> Relu, twice), MaxPool 2 down four
    times, up by ConvTranspose 2x2 stride 2 (C -> C / 2) -> Concat([skip, up]) -> DoubleConv;
    a 1x1 Conv to 2 classes.
  * espcn: ESPCN sub-pixel super-resolution (the zoo's super-resolution-10): Y channel
    [1, 1, 224, 224], Conv 5x5 1 -> 64 Relu, Conv 3x3 64 -> 64 Relu, 64 -> 32 Relu, 32 -> 9, then
    DepthToSpace(3, CRD: PixelShuffle's export) to [1, 1, 672, 672].
  * esrgan_tail: a Real-ESRGAN-like network on a 64x64 RGB image: Conv 3x3 3 -> 64, two Conv 3x3
    64 -> 64 with LeakyRelu(0.2) and a residual Add (the body's stand-in), then the up-sampling
    tail: twice Resize nearest x2 -> Conv 3x3 64 -> 64 -> LeakyRelu(0.2), Conv 3x3 -> LeakyRelu,
    Conv 3x3 64 -> 3: [1, 3, 256, 256].

usage: upsample_models.py OUT_DIR [--only case,case] [--width 32] [--seed 0]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_writer import NamedGraphWriter  # noqa: E402

CASES = ["style_convt", "style_resize", "dcgan", "unet", "espcn", "esrgan_tail"]


class Net(NamedGraphWriter):
    def conv(self, x, c_in, c_out, k, s=1, pad=None, gain=np.sqrt(2.0), bias=True):
        p = self.name("conv")
        w = self.init(p + ".weight", (self.rng.standard_normal((c_out, c_in, k, k)) * (gain / np.sqrt(c_in * k * k)))
                      .astype(np.float32))
        inputs = [x, w]
        if bias:
            inputs.append(self.init(p + ".bias", (self.rng.standard_normal(c_out) * 0.05).astype(np.float32)))
        pad = k // 2 if pad is None else pad
        return self.node("Conv", inputs, [p + ".out"], dilations=[1, 1], group=1, kernel_shape=[k, k],
                         pads=[pad] * 4, strides=[s, s])

    def conv_transpose(self, x, c_in, c_out, k, s, pad, output_padding=0, gain=np.sqrt(2.0), bias=True):
        """ConvTranspose2d: W [C, M, k, k]; each output sums about C * k * k / s^2 products."""
        p = self.name("deconv")
        fan_in = max(1.0, c_in * k * k / (s * s))
        w = self.init(p + ".weight", (self.rng.standard_normal((c_in, c_out, k, k)) * (gain / np.sqrt(fan_in)))
                      .astype(np.float32))
        inputs = [x, w]
        if bias:
            inputs.append(self.init(p + ".bias", (self.rng.standard_normal(c_out) * 0.05).astype(np.float32)))
        attrs = dict(dilations=[1, 1], group=1, kernel_shape=[k, k], pads=[pad] * 4, strides=[s, s])
        if output_padding:
            attrs["output_padding"] = [output_padding] * 2
        return self.node("ConvTranspose", inputs, [p + ".out"], **attrs)

    def reflect_pad(self, x, pad):
        pads = self.const("pads", np.array([0, 0, pad, pad, 0, 0, pad, pad], np.int64))
        return self.op("Pad", [x, pads], "pad", mode="reflect")

    def instance_norm(self, x, c):
        g = self.const("in_scale", (1.0 + 0.1 * self.rng.standard_normal(c)).astype(np.float32))
        b = self.const("in_bias", (0.1 * self.rng.standard_normal(c)).astype(np.float32))
        return self.op("InstanceNormalization", [x, g, b], "in", epsilon=1e-5)

    def batch_norm(self, x, c):
        s = self.const("bn_scale", (1.0 + 0.1 * self.rng.standard_normal(c)).astype(np.float32))
        b = self.const("bn_bias", (0.1 * self.rng.standard_normal(c)).astype(np.float32))
        m = self.const("bn_mean", (0.1 * self.rng.standard_normal(c)).astype(np.float32))
        v = self.const("bn_var", (1.0 + 0.2 * self.rng.uniform(0, 1, c)).astype(np.float32))
        return self.op("BatchNormalization", [x, s, b, m, v], "bn", epsilon=1e-5, momentum=0.9)

    def resize_nearest_x2(self, x):
        roi = self.const("roi", np.array([], np.float32))
        scales = self.const("scales", np.array([1, 1, 2, 2], np.float32))
        return self.op("Resize", [x, roi, scales], "up", coordinate_transformation_mode="asymmetric",
                       cubic_coeff_a=-0.75, mode="nearest", nearest_mode="floor")

    def relu(self, x):
        return self.op("Relu", [x])

    def lrelu(self, x):
        return self.op("LeakyRelu", [x], "lrelu", alpha=0.2)


# Fast neural style transfer ---------------------------------------------------------------------

def conv_layer(n, x, c_in, c_out, k, s=1):
    return n.conv(n.reflect_pad(x, k // 2), c_in, c_out, k, s, pad=0)


def style(n, a, transpose):
    x = n.relu(n.instance_norm(conv_layer(n, "input", 3, 32, 9), 32))
    x = n.relu(n.instance_norm(conv_layer(n, x, 32, 64, 3, 2), 64))
    x = n.relu(n.instance_norm(conv_layer(n, x, 64, 128, 3, 2), 128))
    for _ in range(5):
        h = n.relu(n.instance_norm(conv_layer(n, x, 128, 128, 3), 128))
        h = n.instance_norm(conv_layer(n, h, 128, 128, 3), 128)
        x = n.op("Add", [x, h], "res")
    for c_in, c_out in ((128, 64), (64, 32)):
        if transpose:
            x = n.conv_transpose(x, c_in, c_out, 3, 2, 1, output_padding=1)
        else:
            x = conv_layer(n, n.resize_nearest_x2(x), c_in, c_out, 3)
        x = n.relu(n.instance_norm(x, c_out))
    x = conv_layer(n, x, 32, 3, 9)
    return x, [1, 3, a.image, a.image], [1, 3, a.image, a.image]


# DCGAN generator ------------------------------------------------------------------------------

def dcgan(n, a):
    ngf, nz = 64, 100
    x = n.relu(n.batch_norm(n.conv_transpose("input", nz, ngf * 8, 4, 1, 0, bias=False), ngf * 8))
    for c_in, c_out in ((ngf * 8, ngf * 4), (ngf * 4, ngf * 2), (ngf * 2, ngf)):
        x = n.relu(n.batch_norm(n.conv_transpose(x, c_in, c_out, 4, 2, 1, bias=False), c_out))
    x = n.op("Tanh", [n.conv_transpose(x, ngf, 3, 4, 2, 1, gain=1.0, bias=False)])
    return x, [1, nz, 1, 1], [1, 3, 64, 64]


# U-Net ----------------------------------------------------------------------------------------

def double_conv(n, x, c_in, c_out):
    x = n.relu(n.conv(x, c_in, c_out, 3))
    return n.relu(n.conv(x, c_out, c_out, 3))


def unet(n, a):
    w = a.width
    chans = [w, 2 * w, 4 * w, 8 * w, 16 * w]
    x = double_conv(n, "input", 3, chans[0])
    skips = [x]
    for i in range(1, 5):
        x = double_conv(n, n.op("MaxPool", [x], "pool", kernel_shape=[2, 2], strides=[2, 2]), chans[i - 1], chans[i])
        skips.append(x)
    for i in range(4, 0, -1):
        up = n.conv_transpose(x, chans[i], chans[i] // 2, 2, 2, 0)
        x = n.op("Concat", [skips[i - 1], up], "cat", axis=1)
        x = double_conv(n, x, chans[i], chans[i - 1])
    x = n.conv(x, chans[0], 2, 1, gain=1.0)
    return x, [1, 3, a.image, a.image], [1, 2, a.image, a.image]


# ESPCN and a Real-ESRGAN-like tail -----------------------------------------------------------

def espcn(n, a):
    r = 3
    x = n.relu(n.conv("input", 1, 64, 5))
    x = n.relu(n.conv(x, 64, 64, 3))
    x = n.relu(n.conv(x, 64, 32, 3))
    x = n.conv(x, 32, r * r, 3, gain=1.0)
    x = n.op("DepthToSpace", [x], "pixel_shuffle", blocksize=r, mode="CRD")
    return x, [1, 1, a.image, a.image], [1, 1, a.image * r, a.image * r]


def esrgan_tail(n, a):
    f = 64
    x = n.conv("input", 3, f, 3)
    h = n.lrelu(n.conv(x, f, f, 3))
    h = n.conv(h, f, f, 3, gain=0.5)
    x = n.op("Add", [x, h], "body")
    for _ in range(2):
        x = n.lrelu(n.conv(n.resize_nearest_x2(x), f, f, 3))
    x = n.lrelu(n.conv(x, f, f, 3))
    x = n.conv(x, f, 3, 3, gain=1.0)
    return x, [1, 3, a.image, a.image], [1, 3, a.image * 4, a.image * 4]


def build(case, a):
    n = Net(np.random.default_rng(a.seed + CASES.index(case)))
    image = {"style_convt": 224, "style_resize": 224, "dcgan": 1, "unet": 256, "espcn": 224, "esrgan_tail": 64}[case]
    a.image = image
    makers = {"style_convt": lambda: style(n, a, True), "style_resize": lambda: style(n, a, False),
              "dcgan": lambda: dcgan(n, a), "unet": lambda: unet(n, a), "espcn": lambda: espcn(n, a),
              "esrgan_tail": lambda: esrgan_tail(n, a)}
    out, in_shape, out_shape = makers[case]()
    graph = helper.make_graph(n.nodes, case, [helper.make_tensor_value_info("input", TensorProto.FLOAT, in_shape)],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)], n.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="onnxflow upsample_models")
    model.ir_version = 7
    onnx.checker.check_model(model)
    d = os.path.join(a.out, case)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    if case == "dcgan":
        x = n.rng.standard_normal(in_shape).astype(np.float32)
    else:
        x = n.rng.uniform(-1, 1, in_shape).astype(np.float32)
    onnx.save_tensor(numpy_helper.from_array(x, "input"), os.path.join(d, "test_data_set_0", "input_0.pb"))
    print(f"{d}: {len(n.nodes)} nodes")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default=",".join(CASES))
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    for case in a.only.split(","):
        if case not in CASES:
            sys.exit(f"unknown case {case}; one of {', '.join(CASES)}")
        build(case, a)


if __name__ == "__main__":
    main()
