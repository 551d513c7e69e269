#!/usr/bin/env bash
# pytest with Debian's python3 (its numpy, pytest and onnx), the module on PYTHONPATH.
set -euo pipefail
module_dir="$(cd "$(dirname "$1")" && pwd)"
export ONNXFLOW_RUN_MODEL="$PWD/$3"
export PYTHONPATH="$module_dir"
export PYTHONDONTWRITEBYTECODE=1
exec /usr/bin/python3 -m pytest -q -p no:cacheprovider "$2"
