"""Loads SqueezeNet with the Python bindings, runs it on a fixed input and prints the five most
likely classes: the same as top5.cc and top5.c. Swap `onnxflow` for `onnxruntime` and it still runs."""
import sys

import numpy as np
import onnxflow as ort

session = ort.InferenceSession(sys.argv[1])
image = ((np.arange(3 * 224 * 224) % 97).astype(np.float32) / np.float32(97) - np.float32(0.5)).reshape(1, 3, 224, 224)
(probs,) = session.run(["softmaxout_1"], {"data_0": image})
probs = probs.reshape(-1)
for i in sorted(range(probs.size), key=lambda i: (-probs[i], i))[:5]:
    print(f"{i} {probs[i]:.6f}")
