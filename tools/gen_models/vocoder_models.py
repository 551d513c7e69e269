#!/usr/bin/python3
"""Neural vocoders (mel spectrogram -> waveform) with seeded random weights:

    /usr/bin/python3 tools/gen_models/vocoder_models.py OUT_DIR [SEED] [--only a,b] [--frames N]

writes OUT_DIR/<case>/model.onnx (opset 17) and OUT_DIR/<case>/test_data_set_0/input_0.pb, the
input a mel spectrogram [1, 80, frames] (100 by default):
  * hifigan_v1: HiFi-GAN V1's generator as torch.onnx exports it with weight norm removed:
    Conv1d(80 -> 512, k 7, pad 3) -> four stages of LeakyRelu(0.1) -> ConvTranspose1d (strides
    8, 8, 2, 2, kernels 16, 16, 4, 4, padding (k - s) / 2; 512 -> 256 -> 128 -> 64 -> 32) -> a
    multi-receptive-field fusion: three ResBlock1 (k 3, 7, 11; per dilation 1, 3, 5: LeakyRelu,
    Conv1d(k, dilation d), LeakyRelu, Conv1d(k), residual Add), summed and divided by 3 ->
    LeakyRelu (0.01) -> Conv1d(32 -> 1, k 7, pad 3) -> Tanh -> [1, 1, 256 * frames].
  * hifigan_v3: V3's smaller generator: 256 -> 128 -> 64 -> 32 channels, strides 8, 8, 4
    (kernels 16, 16, 8), ResBlock2 (k 3, 5, 7; dilations (1, 2), (2, 6), (3, 12): LeakyRelu,
    Conv1d(k, dilation d), residual Add), the three summed and multiplied by 1/3.
  * hifigan_v1_wn: hifigan_v1 exported with weight norm kept (do_constant_folding=False): each
    Conv's weight is g * v / ReduceL2(v) over its fan-in, each ConvTranspose's written as
    g * v / Sqrt(ReduceSum(v * v)) (both spellings occur); v a scaled copy of hifigan_v1's weights and
    g their norms, so the same function as hifigan_v1 up to rounding.
  * melgan: MelGAN's generator: ReflectionPad(3) (Pad, mode reflect) -> Conv1d(80 -> 512, k 7) ->
    four stages of LeakyRelu(0.2) -> ConvTranspose1d (strides 8, 8, 2, 2, kernel 2s, padding
    s / 2) -> three residual stacks (LeakyRelu, ReflectionPad(d), Conv1d(k 3, dilation d = 1,
    3, 9), LeakyRelu, Conv1d(k 1)) with a 1x1 Conv1d shortcut each -> LeakyRelu ->
    ReflectionPad(3) -> Conv1d(32 -> 1, k 7) -> Tanh.
The QDQ and float16 forms come from qdq_model.py and fp16_model.py (README.md).
Deterministic: the same seed writes the same bytes, so nothing is committed.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conv1d_models import Builder  # noqa: E402


class VocoderBuilder(Builder):
    """Builder plus ConvTranspose1d, LeakyRelu, reflection padding and weight norm left unfolded."""

    def __init__(self, rng, weight_norm=False):
        super().__init__(rng)
        self.weight_norm = weight_norm
        self.wn_rng = np.random.default_rng(12345)  # v's scale: the other draws stay those of the folded model

    # W as a constant, or as torch's _weight_norm exports it unfolded: g * v / ||v|| over every
    # axis but `dim` (ReduceL2, or the Sqrt(ReduceSum(v * v)) spelling of other exporters).
    def weight_input(self, w, dim=0, spelling="reduce_l2"):
        if not self.weight_norm:
            return self.const("w", w)
        axes = [a for a in range(w.ndim) if a != dim]
        # v = w times any scale and g = ||w||: W is w again, so the model computes hifigan_v1's function.
        g = np.sqrt((w.astype(np.float64) ** 2).sum(axis=tuple(axes), keepdims=True)).astype(np.float32)
        v = self.const("weight_v", (w * (0.5 + self.wn_rng.random())).astype(np.float32))
        if spelling == "reduce_l2":
            n = self.op("ReduceL2", [v], axes=axes, keepdims=1)
        else:
            sq = self.op("Mul", [v, v])
            n = self.op("Sqrt", [self.op("ReduceSum", [sq, self.const("axes", np.array(axes, np.int64))], keepdims=1)])
        return self.op("Mul", [self.op("Div", [v, n]), self.const("weight_g", g)])

    def conv1d(self, x, cout, cin, k, dilation=1, pad=None, bias=True, gain=1.0):
        w = self.weight(cout, cin, k) * np.float32(gain)
        p = (k - 1) * dilation // 2 if pad is None else pad
        ins = [x, self.weight_input(w)] + ([self.const("b", self.bias(cout))] if bias else [])
        return self.op("Conv", ins, kernel_shape=[k], dilations=[dilation], pads=[p, p])

    def conv_transpose1d(self, x, cin, cout, k, stride, pad, output_padding=0):
        w = (self.rng.standard_normal((cin, cout, k)) / np.sqrt(cin * k / stride)).astype(np.float32)
        ins = [x, self.weight_input(w, spelling="sqrt_sum"), self.const("b", self.bias(cout))]
        attrs = dict(kernel_shape=[k], strides=[stride], pads=[pad, pad])
        if output_padding:
            attrs["output_padding"] = [output_padding]
        return self.op("ConvTranspose", ins, **attrs)

    def lrelu(self, x, alpha):
        return self.op("LeakyRelu", [x], alpha=alpha)

    def reflect(self, x, p):
        return self.op("Pad", [x, self.const("pads", np.array([0, 0, p, 0, 0, p], np.int64))], mode="reflect")

    def scaled(self, x, s):
        return self.op("Mul", [x, self.const("scale", np.array(s, np.float32))])


POST_GAIN = 0.25


def mel(rng, frames):
    # Log-mel-like values: smooth over time, a few units negative, as a TTS acoustic model emits.
    base = -4 + 2 * rng.standard_normal((1, 80, 1))
    return (base + 0.5 * rng.standard_normal((1, 80, frames))).astype(np.float32)


def save(b, out_dir, case, frames, samples):
    b.nodes[-1].output[0] = "audio"
    b.save(out_dir, case, [helper.make_tensor_value_info("mel", TensorProto.FLOAT, [1, 80, frames])],
           [helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, 1, samples])], mel(b.rng, frames))


# HiFi-GAN's generator (jik876/hifi-gan models.py): ResBlock1 for V1/V2, ResBlock2 for V3.
def hifigan(out_dir, seed, frames, case, channels, rates, kernels, res_kernels, res_dilations, res1, weight_norm):
    b = VocoderBuilder(np.random.default_rng(seed), weight_norm)
    x = b.conv1d("mel", channels, 80, 7, pad=3)
    c = channels
    for rate, k in zip(rates, kernels):
        x = b.conv_transpose1d(b.lrelu(x, 0.1), c, c // 2, k, rate, (k - rate) // 2)
        c //= 2
        blocks = []
        for rk, dilations in zip(res_kernels, res_dilations):
            h = x
            for d in dilations:
                t = b.conv1d(b.lrelu(h, 0.1), c, c, rk, dilation=d)
                if res1:
                    t = b.conv1d(b.lrelu(t, 0.1), c, c, rk)
                h = b.op("Add", [t, h])
            blocks.append(h)
        s = b.op("Add", [b.op("Add", [blocks[0], blocks[1]]), blocks[2]])
        # V1's export divides by the number of kernels, V3's is written as a product by 1/3.
        x = b.op("Div", [s, b.const("n", np.array(3.0, np.float32))]) if res1 else b.scaled(s, 1 / 3)
    # The last Conv's weights scaled down so that Tanh sees mostly its near-linear range: a
    # saturated output would hide the differences the comparison with ONNX Runtime looks for.
    x = b.conv1d(b.lrelu(x, 0.01), 1, c, 7, pad=3, gain=POST_GAIN)
    b.op("Tanh", [x])
    save(b, out_dir, case, frames, frames * int(np.prod(rates)))


def melgan(out_dir, seed, frames):
    b = VocoderBuilder(np.random.default_rng(seed))
    x = b.conv1d(b.reflect("mel", 3), 512, 80, 7, pad=0)
    c = 512
    for rate in (8, 8, 2, 2):
        x = b.conv_transpose1d(b.lrelu(x, 0.2), c, c // 2, 2 * rate, rate, rate // 2 + rate % 2, rate % 2)
        c //= 2
        for d in (1, 3, 9):
            t = b.conv1d(b.reflect(b.lrelu(x, 0.2), d), c, c, 3, dilation=d, pad=0)
            t = b.conv1d(b.lrelu(t, 0.2), c, c, 1)
            x = b.op("Add", [b.conv1d(x, c, c, 1), t])
    x = b.conv1d(b.reflect(b.lrelu(x, 0.2), 3), 1, c, 7, pad=0, gain=POST_GAIN / 2)
    b.op("Tanh", [x])
    save(b, out_dir, "melgan", frames, frames * 256)


CASES = {
    "hifigan_v1": lambda o, s, f: hifigan(o, s, f, "hifigan_v1", 512, (8, 8, 2, 2), (16, 16, 4, 4), (3, 7, 11),
                                          ((1, 3, 5),) * 3, True, False),
    "hifigan_v1_wn": lambda o, s, f: hifigan(o, s, f, "hifigan_v1_wn", 512, (8, 8, 2, 2), (16, 16, 4, 4),
                                             (3, 7, 11), ((1, 3, 5),) * 3, True, True),
    "hifigan_v3": lambda o, s, f: hifigan(o, s, f, "hifigan_v3", 256, (8, 8, 4), (16, 16, 8), (3, 5, 7),
                                          ((1, 2), (2, 6), (3, 12)), False, False),
    "melgan": melgan,
}


def main():
    args = sys.argv[1:]
    only, frames = list(CASES), 100
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1].split(",")
        del args[i:i + 2]
    if "--frames" in args:
        i = args.index("--frames")
        frames = int(args[i + 1])
        del args[i:i + 2]
    out_dir = args[0]
    seed = int(args[1]) if len(args) > 1 else 1
    for case in only:
        CASES[case](out_dir, seed, frames)


if __name__ == "__main__":
    main()
