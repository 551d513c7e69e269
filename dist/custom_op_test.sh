#!/usr/bin/env bash
# Custom operators against the shared library: install, then build dist/custom_op_host.cc with g++
# and pkg-config (public headers and libonnxflow.so only) and run it on a model whose main graph and
# Loop body use its kernel.
set -euo pipefail
install_sh="$PWD/$1" model_writer="$PWD/$2" host_cc="$PWD/$3"
fail() { echo "FAIL: $*" >&2; exit 1; }
prefix="$TEST_TMPDIR/prefix" work="$TEST_TMPDIR/work"
mkdir -p "$work"
(cd "$TEST_TMPDIR" && BUILD_WORKING_DIRECTORY="$TEST_TMPDIR" "$install_sh" prefix > /dev/null) || fail "install failed"
[[ -e "$prefix/include/onnxflow/custom_op.h" ]] || fail "install did not write PREFIX/include/onnxflow/custom_op.h"
"$model_writer" "$work/scale.onnx" || fail "could not write the model"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/lib"
cd "$work"
g++ -std=c++17 -O1 -o host "$host_cc" $(pkg-config --cflags --libs onnxflow) 2> build.log || { cat build.log; fail "g++ against the installed tree"; }
ldd host | grep "libonnxflow.so.0 => $prefix/lib/libonnxflow.so.0" > /dev/null || fail "host does not use the installed libonnxflow.so.0"
got=$(./host scale.onnx) || fail "host failed: $got"
want="without: Unimplemented
y = 3 6 9
v = 48 96 144
y = 3 6 9
v = 48 96 144"
[[ "$got" == "$want" ]] || fail "host printed"$'\n'"$got"$'\n'"wanted"$'\n'"$want"
echo PASS
