#!/usr/bin/env bash
# Installs onnxflow under PREFIX:
#   PREFIX/lib/libonnxflow.so.0 (+ libonnxflow.so), libonnxflow.a
#   PREFIX/include/onnxflow/*.h                      (#include <onnxflow/session.h>)
#   PREFIX/lib/pkgconfig/onnxflow.pc, PREFIX/lib/cmake/onnxflow/onnxflowConfig*.cmake
#   PREFIX/lib/python3/dist-packages/onnxflow*.so    (import onnxflow)
#   PREFIX/bin/onnxflow_{run_model,benchmark,loop_benchmark,embed_example}
#   PREFIX/share/doc/onnxflow/{LICENSE,README.md,CHANGELOG.md}
# Usage: ./bazelw run //:install -- PREFIX   (a relative PREFIX is where you ran the command)
set -euo pipefail
if [[ $# -lt 1 || "$1" == -* ]]; then
  echo "usage: bazel run //:install -- PREFIX" >&2
  exit 2
fi
prefix="$1"
# bazel run starts this in its runfiles folder: a relative PREFIX means where the user stands.
if [[ "$prefix" != /* ]]; then prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix"; fi
# Runfiles: the files below are named relative to the workspace root inside them.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for root in "${RUNFILES_DIR:-}/onnxflow" "$here/install.runfiles/onnxflow" "$PWD" "$here/.."; do
  [[ -f "$root/dist/onnxflow.pc.in" ]] && cd "$root" && break
done
[[ -f dist/onnxflow.pc.in ]] || { echo "install: cannot find the runfiles" >&2; exit 2; }

version=$(sed -n 's/^#define ONNXFLOW_VERSION_STRING "\(.*\)"$/\1/p' include/onnxflow/version.h)
major=${version%%.*}
mkdir -p "$prefix"/{bin,include/onnxflow,lib/pkgconfig,lib/cmake/onnxflow,lib/python3/dist-packages,share/doc/onnxflow}
prefix="$(cd "$prefix" && pwd)"

install -m 755 dist/libonnxflow.so.0 "$prefix/lib/libonnxflow.so.$version"
ln -sf "libonnxflow.so.$version" "$prefix/lib/libonnxflow.so.$major"
ln -sf "libonnxflow.so.$major" "$prefix/lib/libonnxflow.so"
install -m 644 dist/libonnxflow.a "$prefix/lib/libonnxflow.a"
# In the repository the headers include each other as "include/onnxflow/x.h"; installed, as <onnxflow/x.h>.
for h in include/onnxflow/*.h; do
  sed 's|#include "include/onnxflow/\([^"]*\)"|#include <onnxflow/\1>|' "$h" > "$prefix/include/onnxflow/$(basename "$h")"
done
sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" dist/onnxflow.pc.in > "$prefix/lib/pkgconfig/onnxflow.pc"
sed -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" dist/onnxflowConfig.cmake.in > "$prefix/lib/cmake/onnxflow/onnxflowConfig.cmake"
sed -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" dist/onnxflowConfigVersion.cmake.in \
  > "$prefix/lib/cmake/onnxflow/onnxflowConfigVersion.cmake"
install -m 755 python/onnxflow.so "$prefix/lib/python3/dist-packages/onnxflow.so"
for tool in run_model benchmark loop_benchmark embed_example; do
  install -m 755 "tools/$tool" "$prefix/bin/onnxflow_$tool"
done
install -m 644 LICENSE README.md CHANGELOG.md "$prefix/share/doc/onnxflow/"
echo "installed onnxflow $version under $prefix"
