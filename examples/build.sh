#!/usr/bin/env bash
# Builds this example consumer workspace against the checkout it sits in (WORKSPACE:
# local_repository(name = "onnxflow", path = "..")) and runs the C++, C and Python examples on
# real_squeezenet; they print the same top-5 classes. Usage: examples/build.sh [MODEL.onnx]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
model="${1:-../../shared/onnx-tests/models/real_squeezenet/model.onnx}"
model="$(cd "$(dirname "$model")" && pwd)/$(basename "$model")"
bazel build --jobs="${JOBS:-2}" //:top5 //:top5_c //:top5_py
cc=$(bazel-bin/top5 "$model")
c=$(bazel-bin/top5_c "$model")
py=$(bazel-bin/top5_py "$model")
printf 'C++:\n%s\nC:\n%s\nPython:\n%s\n' "$cc" "$c" "$py"
if [[ "$cc" != "$c" || "$cc" != "$py" || $(wc -l <<<"$cc") -ne 5 ]]; then
  echo "examples: the three top-5 lists differ" >&2
  exit 1
fi
echo "examples: the same top-5 from C++, C and Python"
