#!/bin/bash
# Runs the server's end-to-end test with Debian's python3 (it has python3-grpcio, -protobuf, -onnx
# and -numpy; a python3 earlier on PATH may not).
exec /usr/bin/python3 "$(dirname "$0")/server_test.py" "$@"
