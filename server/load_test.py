#!/usr/bin/python3
"""Bounded load test of //tools:server (by hand, not in CI; 127.0.0.1 only).

  ./bazelw build //tools:server //tools:benchmark //server:inference_py_gen
  /usr/bin/python3 server/load_test.py --model-dir ../shared/onnx-tests/models/real_squeezenet \
      [--clients 16] [--seconds 15] [--sigterm] [--batched-max 0]

Runs, back to back within the same minute: the in-process //tools:benchmark at the same concurrency,
then CLIENTS closed-loop clients over gRPC (raw contents) and over HTTP (binary tensor data
extension). Prints throughput and p50/p99 per protocol and the gRPC / in-process ratio. Every
answer is checked (count, status, output shape); any error fails the run. --sigterm sends SIGTERM
in the middle of a last gRPC phase and checks that every request in flight was answered and the
process exited 0. --batched-max N serves the model with dynamic batching (max N rows, its first
dimension made dynamic) to see when batching pays.
"""
import argparse
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "..", "bazel-bin")
sys.path.insert(0, os.path.join(BIN, "server"))
import grpc  # noqa: E402
import inference_pb2 as pb  # noqa: E402


def percentile(values, p):
    return float(np.percentile(np.array(values), p)) if values else float("nan")


def closed_loop(clients, seconds, call):
    """CLIENTS threads call `call()` back to back for SECONDS; returns (latencies ms, errors, wall s)."""
    latencies, errors = [], []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def worker():
        mine = []
        while time.monotonic() < stop_at:
            t0 = time.perf_counter()
            try:
                call()
                mine.append((time.perf_counter() - t0) * 1e3)
            except Exception as e:  # noqa: BLE001 - every failure counts
                with lock:
                    errors.append(repr(e)[:200])
        with lock:
            latencies.extend(mine)

    start = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--sigterm", action="store_true")
    ap.add_argument("--batched-max", type=int, default=0)
    ap.add_argument("--batched-delay-us", type=int, default=2000)
    ap.add_argument("--skip-benchmark", action="store_true")
    args = ap.parse_args()

    name = os.path.basename(os.path.normpath(args.model_dir))
    model_path = os.path.join(args.model_dir, "model.onnx")
    g = onnx.load(model_path, load_external_data=False).graph
    init = {i.name for i in g.initializer}
    in_name = [i.name for i in g.input if i.name not in init][0]
    x = numpy_helper.to_array(onnx.load_tensor(os.path.join(args.model_dir, "test_data_set_0", "input_0.pb")))
    out_shape = list(x.shape[:1]) + [d.dim_value for d in g.output[0].type.tensor_type.shape.dim][1:]

    tmp = tempfile.TemporaryDirectory()
    repo = os.path.join(tmp.name, "repo")
    os.makedirs(os.path.join(repo, name))
    if args.batched_max > 1:
        m = onnx.load(model_path)
        for v in list(m.graph.input) + list(m.graph.output):
            v.type.tensor_type.shape.dim[0].dim_param = "N"
        onnx.save(m, os.path.join(repo, name, "model.onnx"))
        with open(os.path.join(repo, name, "config.json"), "w") as f:
            json.dump({"dynamic_batching": {"max_batch_size": args.batched_max, "max_delay_us": args.batched_delay_us}}, f)
    else:
        os.symlink(os.path.abspath(model_path), os.path.join(repo, name, "model.onnx"))

    results = {}
    if not args.skip_benchmark:
        out = os.path.join(tmp.name, "bench.json")
        subprocess.run([os.path.join(BIN, "tools", "benchmark"), model_path, "--concurrency", str(args.clients),
                        "--duration", "%gs" % args.seconds, "--json", out], check=True, stdout=subprocess.DEVNULL)
        r = json.load(open(out))["results"][0]
        results["in-process"] = (r["throughput_per_s"], r["p50_ms"], r["p99_ms"], 0, r["runs"])

    server = subprocess.Popen([os.path.join(BIN, "tools", "server"), "--model-repository", repo, "--host", "127.0.0.1",
                               "--http-port", "0", "--grpc-port", "0", "--http-threads", str(args.clients + 8)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ports = re.match(r"listening http=(\d+) grpc=(\d+)", server.stdout.readline())
    http_port, grpc_port = int(ports.group(1)), int(ports.group(2))
    assert server.stdout.readline().strip() == "ready"

    channel = grpc.insecure_channel("127.0.0.1:%d" % grpc_port, options=[("grpc.max_receive_message_length", -1)])
    infer = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer",
                                request_serializer=pb.ModelInferRequest.SerializeToString,
                                response_deserializer=pb.ModelInferResponse.FromString)
    request = pb.ModelInferRequest(model_name=name, raw_input_contents=[x.tobytes()])
    request.inputs.add(name=in_name, datatype="FP32", shape=list(x.shape))
    out_bytes = int(np.prod(out_shape)) * 4

    def grpc_call():
        reply = infer(request, timeout=30)
        if len(reply.raw_output_contents[0]) != out_bytes:
            raise RuntimeError("wrong output size")

    header = json.dumps({"inputs": [{"name": in_name, "shape": list(x.shape), "datatype": "FP32",
                                     "parameters": {"binary_data_size": x.nbytes}}],
                         "parameters": {"binary_data_output": True}}).encode()
    body = header + x.tobytes()
    local = threading.local()

    def http_call():
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection("127.0.0.1", http_port, timeout=30)
        try:
            local.conn.request("POST", "/v2/models/%s/infer" % name, body,
                               {"Inference-Header-Content-Length": str(len(header)),
                                "Content-Type": "application/octet-stream"})
            resp = local.conn.getresponse()
            data = resp.read()
        except (http.client.HTTPException, OSError):
            del local.conn  # the server ended a keep-alive connection: reconnect and count it
            raise
        if resp.status != 200:
            raise RuntimeError("HTTP %d %s" % (resp.status, data[:200]))
        n = int(resp.getheader("Inference-Header-Content-Length"))
        if len(data) - n != out_bytes:
            raise RuntimeError("wrong output size")

    grpc_call()
    http_call()  # warm-up, and a check that both work
    for label, call in (("grpc", grpc_call), ("http", http_call)):
        lat, errors, wall = closed_loop(args.clients, args.seconds, call)
        results[label] = (len(lat) / wall, percentile(lat, 50), percentile(lat, 99), len(errors), len(lat))
        if errors:
            print("%s errors (%d), first: %s" % (label, len(errors), errors[0]))

    print("model %s, %d clients, %gs per phase, 127.0.0.1%s" % (name, args.clients, args.seconds,
          ", dynamic batching max %d / %d us" % (args.batched_max, args.batched_delay_us) if args.batched_max > 1 else ""))
    print("%-11s %10s %9s %9s %7s %8s" % ("", "req/s", "p50 ms", "p99 ms", "errors", "answered"))
    for label, (tp, p50, p99, err, n) in results.items():
        print("%-11s %10.1f %9.2f %9.2f %7d %8d" % (label, tp, p50, p99, err, n))
    if "in-process" in results:
        print("grpc / in-process throughput: %.0f%%" % (100 * results["grpc"][0] / results["in-process"][0]))
        print("http / in-process throughput: %.0f%%" % (100 * results["http"][0] / results["in-process"][0]))
    metrics = http.client.HTTPConnection("127.0.0.1", http_port)
    metrics.request("GET", "/metrics")
    text = metrics.getresponse().read().decode()
    for line in text.splitlines():
        if line.startswith(("onnxflow_batch_size_sum", "onnxflow_batch_size_count", "onnxflow_requests_total",
                            "onnxflow_request_failures_total")):
            print("  " + line)
    failed = any(r[3] for r in results.values())

    if args.sigterm:
        # SIGTERM halfway through a gRPC phase: requests in flight are answered; later ones are refused
        # (UNAVAILABLE) or find no listener; nothing hangs and the process exits 0.
        answered, refused, other = [0], [0], []
        lock = threading.Lock()
        stop = threading.Event()

        def worker():
            while not stop.is_set():
                try:
                    grpc_call()
                    with lock:
                        answered[0] += 1
                except grpc.RpcError as e:
                    with lock:
                        if e.code() == grpc.StatusCode.UNAVAILABLE:
                            refused[0] += 1
                        else:
                            other.append("%s %s" % (e.code(), e.details()))
                    time.sleep(0.05)

        threads = [threading.Thread(target=worker) for _ in range(args.clients)]
        for t in threads:
            t.start()
        time.sleep(args.seconds / 2)
        t0 = time.monotonic()
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=60)
        took = time.monotonic() - t0
        stop.set()
        for t in threads:
            t.join()
        log = server.stderr.read()
        print("sigterm: exit %d after %.2fs; answered %d, refused (unavailable) %d, other errors %d; %s" % (
            code, took, answered[0], refused[0], len(other), log.strip().splitlines()[-1]))
        if other:
            print("  first other error: " + other[0])
        failed = failed or code != 0 or bool(other)
    else:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
