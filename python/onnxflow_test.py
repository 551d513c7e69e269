"""The Python bindings: ONNX Runtime's interface, the C++ API's outputs, errors as exceptions that
carry the Status message, and two Python threads running models at once (the GIL is released)."""
import os
import subprocess
import threading
import time

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

import onnxflow

DATA = os.path.join(os.environ["TEST_SRCDIR"], "onnx_tests")  # the @onnx_tests repository


def model(name):
    return os.path.join(DATA, name, "model.onnx")


def read_pb(path, tmp_path):
    """(name, array) of a serialized TensorProto, read by the onnx package in this same process:
    onnxflow's onnx.proto is built LITE_RUNTIME, so the two copies do not collide in protobuf's
    descriptor pool (they aborted the process before)."""
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, onnx.numpy_helper.to_array(t)


def test_version():
    assert onnxflow.__version__.count(".") == 2
    assert onnxflow.InferenceSession is onnxflow.Session


def test_inputs_and_outputs_like_onnxruntime():
    session = onnxflow.InferenceSession(model("node/test_add"))
    inputs = session.get_inputs()
    assert [(i.name, i.shape, i.type) for i in inputs] == [
        ("x", [3, 4, 5], "tensor(float)"),
        ("y", [3, 4, 5], "tensor(float)"),
    ]
    outputs = session.get_outputs()
    assert [(o.name, o.shape, o.type) for o in outputs] == [("sum", [3, 4, 5], "tensor(float)")]
    assert session.get_providers() == ["CPUExecutionProvider"]


def test_add_matches_numpy_and_reads_views():
    session = onnxflow.Session(model("node/test_add"))
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    wide = np.ones((3, 4, 10), dtype=np.float32)
    y = wide[:, :, ::2]  # not contiguous: copied, then run
    (total,) = session.run(["sum"], {"x": x, "y": y})
    assert total.dtype == np.float32 and total.shape == (3, 4, 5)
    np.testing.assert_array_equal(total, x + 1)
    # output_names=None: every output, in graph order.
    (again,) = session.run(None, {"x": x, "y": y})
    np.testing.assert_array_equal(again, total)


@pytest.mark.parametrize("name", ["models/real_squeezenet", "node/test_add", "node/test_matmul_2d"])
def test_outputs_equal_the_cpp_api(name, tmp_path):
    """run_model (the C++ API) and the bindings, on the test data's inputs, give equal outputs."""
    data_set = os.path.join(DATA, name, "test_data_set_0")
    subprocess.run(
        [os.environ["ONNXFLOW_RUN_MODEL"], model(name), "--inputs", data_set, "--output-dir", str(tmp_path),
         "--threads", "1", "--quiet"],
        check=True)
    options = onnxflow.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxflow.Session(model(name), options)
    feed = dict(read_pb(os.path.join(data_set, f), tmp_path) for f in sorted(os.listdir(data_set))
                if f.startswith("input_"))
    outputs = session.run(None, feed)
    for i, out in enumerate(outputs):
        _, expected = read_pb(os.path.join(tmp_path, f"output_{i}.pb"), tmp_path)
        assert out.dtype == expected.dtype and out.shape == expected.shape
        np.testing.assert_array_equal(out, expected)


def test_errors_raise_with_the_status_message():
    with pytest.raises(onnxflow.OnnxflowError, match=r"NotFound: .*no/such\.onnx"):
        onnxflow.Session("no/such.onnx")
    with pytest.raises(onnxflow.OnnxflowError, match=r"^InvalidArgument: "):
        onnxflow.Session(b"not a model")
    session = onnxflow.Session(model("node/test_add"))
    x = np.zeros((3, 4, 5), np.float32)
    with pytest.raises(onnxflow.OnnxflowError, match=r"'y'"):
        session.run(None, {"x": x})
    with pytest.raises(onnxflow.OnnxflowError, match=r"'y'.*int64|int64.*'y'"):
        session.run(None, {"x": x, "y": np.zeros((3, 4, 5), np.int64)})
    with pytest.raises(onnxflow.OnnxflowError, match=r"the model has no output named 'total'"):
        session.run(["total"], {"x": x, "y": x})
    run_options = onnxflow.RunOptions()
    run_options.terminate = True
    with pytest.raises(onnxflow.OnnxflowError, match=r"^Cancelled: "):
        session.run(None, {"x": x, "y": x}, run_options)
    run_options.terminate = False
    session.run(None, {"x": x, "y": x}, run_options)


def test_two_threads_run_at_once():
    """Each thread records when its runs start and end; with the GIL held during a run no two runs of
    different threads could overlap."""
    session = onnxflow.Session(model("models/real_squeezenet"))
    image = np.random.default_rng(0).random((1, 3, 224, 224), dtype=np.float32)
    expected = session.run(None, {"data_0": image})[0]
    spans = {0: [], 1: []}
    results = {0: [], 1: []}
    barrier = threading.Barrier(2)

    def work(t):
        barrier.wait()
        for _ in range(3):
            start = time.monotonic()
            results[t].append(session.run(None, {"data_0": image})[0])
            spans[t].append((start, time.monotonic()))

    threads = [threading.Thread(target=work, args=(t,)) for t in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for t in (0, 1):
        for out in results[t]:
            np.testing.assert_array_equal(out, expected)
    overlap = any(a0 < b1 and b0 < a1 for a0, a1 in spans[0] for b0, b1 in spans[1])
    assert overlap, f"runs of the two threads never overlapped: {spans}"


def test_onnx_package_loads_after_onnxflow():
    """The other import order (this module imported onnx first): both copies of onnx.proto in one
    process, each parsing its own messages."""
    script = ("import onnxflow, onnx; m = onnx.ModelProto(); m.ParseFromString(open(%r, 'rb').read()); "
              "s = onnxflow.Session(%r); print(m.graph.node[0].op_type, s.get_inputs()[0].name)")
    path = model("node/test_add")
    out = subprocess.run(["/usr/bin/python3", "-c", script % (path, path)], check=True, capture_output=True,
                         text=True).stdout.split()
    assert out == ["Add", "x"]


_TWO_HEADS = """
import sys, onnx
from onnx import helper, TensorProto
graph = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["a"], name="relu"),
     helper.make_node("Reshape", ["x", "s"], ["b"], name="reshape")],
    "two_heads",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
     helper.make_tensor_value_info("s", TensorProto.INT64, [1])],
    [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2]),
     helper.make_tensor_value_info("b", TensorProto.FLOAT, None)],
    doc_string="graph doc")
m = helper.make_model(graph, producer_name="pytest", producer_version="1.2",
                      opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
m.model_version = 3
m.domain = "org.example"
m.doc_string = "two heads"
helper.set_model_props(m, {"license": "MIT"})
onnx.save(m, sys.argv[1])
"""


def two_heads(tmp_path):
    """x -> Relu -> a; Reshape(x, s) -> b: a shape s that does not fit x fails only the run of b."""
    path = os.path.join(tmp_path, "two_heads.onnx")
    subprocess.run(["/usr/bin/python3", "-c", _TWO_HEADS, path], check=True)
    return path


def test_model_metadata_like_onnxruntime(tmp_path):
    meta = onnxflow.Session(two_heads(tmp_path)).get_modelmeta()
    assert (meta.producer_name, meta.producer_version, meta.domain, meta.version, meta.ir_version) == (
        "pytest", "1.2", "org.example", 3, 8)
    assert (meta.description, meta.graph_name, meta.graph_description) == ("two heads", "two_heads", "graph doc")
    assert meta.custom_metadata_map == {"license": "MIT"}
    assert meta.opset_imports == {"": 17}


def test_chosen_outputs_run_only_their_nodes(tmp_path):
    session = onnxflow.Session(two_heads(tmp_path))
    feed = {"x": np.array([-1, 2], np.float32), "s": np.array([3], np.int64)}
    # The Reshape that cannot succeed feeds only "b": asking for "a" alone does not run it.
    (a,) = session.run(["a"], feed)
    np.testing.assert_array_equal(a, [0, 2])
    with pytest.raises(onnxflow.OnnxflowError, match=r"reshape"):
        session.run(None, feed)
    b, a = session.run(["b", "a"], {"x": feed["x"], "s": np.array([2], np.int64)})
    np.testing.assert_array_equal(b, [-1, 2])
    np.testing.assert_array_equal(a, [0, 2])


def map_model(tmp_path):
    """What skl2onnx writes for a classifier after a DictVectorizer: a map in, the label and a
    sequence of maps (ZipMap) out."""
    h, TP = onnx.helper, onnx.TensorProto
    nodes = [
        h.make_node("DictVectorizer", ["features"], ["dense"], domain="ai.onnx.ml", string_vocabulary=["a", "b"]),
        h.make_node("LinearClassifier", ["dense"], ["label", "scores"], domain="ai.onnx.ml",
                    classlabels_strings=["no", "yes"], coefficients=[1.0, 0.0, 0.0, 1.0], intercepts=[0.0, 0.0]),
        h.make_node("ZipMap", ["scores"], ["probabilities"], domain="ai.onnx.ml", classlabels_strings=["no", "yes"]),
    ]
    features = onnx.ValueInfoProto(name="features")
    features.type.map_type.key_type = TP.STRING
    features.type.map_type.value_type.tensor_type.elem_type = TP.FLOAT
    probabilities = onnx.ValueInfoProto(name="probabilities")
    seq_map = probabilities.type.sequence_type.elem_type.map_type
    seq_map.key_type = TP.STRING
    seq_map.value_type.tensor_type.elem_type = TP.FLOAT
    graph = h.make_graph(nodes, "maps", [features],
                         [h.make_tensor_value_info("label", TP.STRING, [1]), probabilities])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 13), h.make_opsetid("ai.onnx.ml", 1)])
    path = str(tmp_path / "maps.onnx")
    onnx.save(m, path)
    return path


def test_maps_in_and_out_like_onnxruntime(tmp_path):
    session = onnxflow.InferenceSession(map_model(tmp_path))
    assert session.get_inputs()[0].type == "map(string,tensor(float))"
    assert session.get_outputs()[1].type == "seq(map(string,tensor(float)))"
    label, probabilities = session.run(None, {"features": {"b": 2.5, "zzz": 7.0, "a": 0.5}})
    assert list(label) == ["yes"]
    assert probabilities == [{"no": 0.5, "yes": 2.5}]
