#!/usr/bin/env bash
# The install step into a fresh PREFIX, then programs built outside Bazel against the installed
# tree: C++ with plain g++ and pkg-config, C with gcc and pkg-config, C++ with CMake's
# find_package(onnxflow), and Python with `import onnxflow`. Each loads real_squeezenet and prints
# the top-5 classes; all four must print the same five lines.
set -euo pipefail
install_sh="$PWD/$1"
fail() { echo "FAIL: $*" >&2; exit 1; }
model="${TEST_SRCDIR:?run through bazel test}/onnx_tests/models/real_squeezenet/model.onnx"  # @onnx_tests
prefix="$TEST_TMPDIR/prefix" work="$TEST_TMPDIR/work"
mkdir -p "$work"

# A relative PREFIX under `bazel run` means the user's folder.
(cd "$TEST_TMPDIR" && BUILD_WORKING_DIRECTORY="$TEST_TMPDIR" "$install_sh" prefix > /dev/null) || fail "install failed"
for f in lib/libonnxflow.so.0 lib/libonnxflow.so lib/libonnxflow.a include/onnxflow/session.h \
    include/onnxflow/onnxflow_c.h include/onnxflow/version.h lib/pkgconfig/onnxflow.pc \
    lib/cmake/onnxflow/onnxflowConfig.cmake lib/python3/dist-packages/onnxflow.so bin/onnxflow_run_model \
    share/doc/onnxflow/LICENSE; do
  [[ -e "$prefix/$f" ]] || fail "install did not write PREFIX/$f"
done
grep -q '#include "include/' "$prefix"/include/onnxflow/*.h && fail "installed headers still include \"include/...\""
# (grep reads all of its input: `grep -q` would exit at the first match, and under pipefail the
# writer's SIGPIPE would fail the test now and then)
"$prefix/bin/onnxflow_run_model" --version | grep '^run_model [0-9]' > /dev/null || fail "installed run_model --version"

cat > "$work/top5.cc" <<'CC'
#include <onnxflow/session.h>
#include <onnxflow/version.h>
#include <algorithm>
#include <cstdio>
#include <numeric>
int main(int argc, char** argv) {
  auto session = onnxflow::Session::Load(argv[1]);
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;
  onnxflow::Tensor image(onnxflow::DataType::kFloat, {1, 3, 224, 224});
  for (int64_t i = 0; i < image.size(); ++i) image.mutable_data<float>()[i] = static_cast<float>(i % 97) / 97.0f - 0.5f;
  auto outputs = session->Run({{"data_0", image}});
  if (!outputs.ok()) return std::fprintf(stderr, "%s\n", outputs.status().ToString().c_str()), 1;
  const float* p = (*outputs)[0].value.tensor().data<float>();
  std::vector<int> order((*outputs)[0].value.tensor().size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
  for (int k = 0; k < 5; ++k) std::printf("%d %.6f\n", order[k], p[order[k]]);
}
CC
cat > "$work/top5.c" <<'C'
#include <onnxflow/onnxflow_c.h>
#include <stdio.h>
int main(int argc, char** argv) {
  onnxflow_session* session = NULL;
  onnxflow_status* st = onnxflow_session_load(argv[1], NULL, &session);
  if (st) return fprintf(stderr, "%s\n", onnxflow_status_message(st)), 1;
  const int64_t dims[4] = {1, 3, 224, 224};
  onnxflow_tensor* image = NULL;
  onnxflow_tensor_create(ONNXFLOW_FLOAT, dims, 4, &image);
  float* x = (float*)onnxflow_tensor_data(image);
  for (int64_t i = 0; i < 3 * 224 * 224; ++i) x[i] = (float)(i % 97) / 97.0f - 0.5f;
  const char* in_names[1] = {"data_0"};
  const onnxflow_tensor* in[1] = {image};
  onnxflow_tensor* out = NULL;
  if ((st = onnxflow_session_run(session, NULL, in_names, in, 1, NULL, 1, &out)))
    return fprintf(stderr, "%s\n", onnxflow_status_message(st)), 1;
  const float* p = (const float*)onnxflow_tensor_const_data(out);
  int taken[5];
  for (int k = 0; k < 5; ++k) {
    int best = -1;
    for (int i = 0; i < 1000; ++i) {
      int used = 0;
      for (int j = 0; j < k; ++j) used |= taken[j] == i;
      if (!used && (best < 0 || p[i] > p[best])) best = i;
    }
    taken[k] = best;
    printf("%d %.6f\n", best, p[best]);
  }
  onnxflow_tensor_free(out);
  onnxflow_tensor_free(image);
  onnxflow_session_free(session);
  return 0;
}
C
cat > "$work/top5.py" <<'PY'
import sys
import numpy as np
import onnxflow as ort
session = ort.InferenceSession(sys.argv[1])
image = ((np.arange(3 * 224 * 224) % 97).astype(np.float32) / np.float32(97) - np.float32(0.5)).reshape(1, 3, 224, 224)
(probs,) = session.run(["softmaxout_1"], {"data_0": image})
probs = probs.reshape(-1)
for i in sorted(range(probs.size), key=lambda i: (-probs[i], i))[:5]:
    print(f"{i} {probs[i]:.6f}")
PY
cat > "$work/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(top5 C CXX)
find_package(onnxflow 0.1 REQUIRED)
add_executable(top5 top5.cc)
target_link_libraries(top5 PRIVATE onnxflow::onnxflow)
CM

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/lib"
cd "$work"
g++ -O1 -o top5_pc top5.cc $(pkg-config --cflags --libs onnxflow) || fail "g++ with pkg-config"
gcc -O1 -o top5_c top5.c $(pkg-config --cflags --libs onnxflow) || fail "gcc with pkg-config"
ldd top5_pc | grep "libonnxflow.so.0 => $prefix/lib/libonnxflow.so.0" > /dev/null || fail "top5_pc does not use the installed libonnxflow.so.0"
cmake -S . -B build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > cmake.log 2>&1 || { cat cmake.log; fail "cmake configure"; }
cmake --build build > build.log 2>&1 || { cat build.log; fail "cmake build"; }

cc=$(./top5_pc "$model") || fail "top5 (pkg-config) failed"
c=$(./top5_c "$model") || fail "top5 (C) failed"
cm=$(build/top5 "$model") || fail "top5 (CMake) failed"
py=$(PYTHONPATH="$prefix/lib/python3/dist-packages" /usr/bin/python3 top5.py "$model") || fail "top5.py failed"
printf '%s\n' "$cc"
[[ $(wc -l <<<"$cc") -eq 5 ]] || fail "wanted five lines, got: $cc"
[[ "$c" == "$cc" ]] || fail "C printed"$'\n'"$c"$'\n'"C++ printed"$'\n'"$cc"
[[ "$cm" == "$cc" ]] || fail "CMake's build printed"$'\n'"$cm"
[[ "$py" == "$cc" ]] || fail "Python printed"$'\n'"$py"
echo PASS
