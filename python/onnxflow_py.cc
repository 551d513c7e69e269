// `import onnxflow`: Python bindings whose Session mirrors onnxruntime.InferenceSession
// (get_inputs(), get_outputs(), run(output_names, {name: ndarray})), so switching is one import.
// The GIL is released while a model loads or runs (Python threads run models in parallel); NumPy
// inputs are read in place when their layout is C-contiguous, aligned and of the declared type.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "include/onnxflow/session.h"
#include "include/onnxflow/version.h"

namespace py = pybind11;

namespace onnxflow::python {
namespace {

// Raised for every failed Status; the message is Status::ToString() ("InvalidArgument: ...").
PyObject* g_error = nullptr;

[[noreturn]] void Raise(const Status& status) {
  PyErr_SetString(g_error, status.ToString().c_str());
  throw py::error_already_set();
}

// ONNX Runtime's type strings: "tensor(float)", "seq(tensor(int64))", "optional(tensor(float))".
std::string OrtElementName(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: return "float";
    case DataType::kDouble: return "double";
    case DataType::kFloat16: return "float16";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kInt8: return "int8";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kUint8: return "uint8";
    case DataType::kUint16: return "uint16";
    case DataType::kUint32: return "uint32";
    case DataType::kUint64: return "uint64";
    case DataType::kBool: return "bool";
    case DataType::kString: return "string";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    default: return DataTypeName(dtype);
  }
}

std::string OrtTypeString(const ValueInfo& info) {
  std::string type = "tensor(" + OrtElementName(info.dtype) + ")";
  if (info.map_key != DataType::kUndefined) type = "map(" + OrtElementName(info.map_key) + "," + type + ")";
  if (info.kind == Value::Kind::kSequence) type = "seq(" + type + ")";
  if (info.optional) type = "optional(" + type + ")";
  return type;
}

// The NumPy dtype of an element type, or None for types NumPy lacks (bfloat16, float8, 4-bit).
py::object NumpyDtype(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: return py::dtype("float32");
    case DataType::kDouble: return py::dtype("float64");
    case DataType::kFloat16: return py::dtype("float16");
    case DataType::kInt8: return py::dtype("int8");
    case DataType::kInt16: return py::dtype("int16");
    case DataType::kInt32: return py::dtype("int32");
    case DataType::kInt64: return py::dtype("int64");
    case DataType::kUint8: return py::dtype("uint8");
    case DataType::kUint16: return py::dtype("uint16");
    case DataType::kUint32: return py::dtype("uint32");
    case DataType::kUint64: return py::dtype("uint64");
    case DataType::kBool: return py::dtype("bool");
    case DataType::kComplex64: return py::dtype("complex64");
    case DataType::kComplex128: return py::dtype("complex128");
    default: return py::none();
  }
}

DataType FromNumpy(const py::dtype& dtype) {
  const char kind = dtype.kind();
  const auto size = dtype.itemsize();
  if (kind == 'f') return size == 4 ? DataType::kFloat : size == 8 ? DataType::kDouble : size == 2 ? DataType::kFloat16 : DataType::kUndefined;
  if (kind == 'i') return size == 1 ? DataType::kInt8 : size == 2 ? DataType::kInt16 : size == 4 ? DataType::kInt32 : size == 8 ? DataType::kInt64 : DataType::kUndefined;
  if (kind == 'u') return size == 1 ? DataType::kUint8 : size == 2 ? DataType::kUint16 : size == 4 ? DataType::kUint32 : size == 8 ? DataType::kUint64 : DataType::kUndefined;
  if (kind == 'b') return DataType::kBool;
  if (kind == 'c') return size == 8 ? DataType::kComplex64 : size == 16 ? DataType::kComplex128 : DataType::kUndefined;
  if (kind == 'U' || kind == 'O' || kind == 'S') return DataType::kString;
  return DataType::kUndefined;
}

// One input: the tensor handed to Run and the NumPy array it may borrow (kept alive past the run).
struct Input {
  Tensor tensor;
  py::object keep_alive;
};

Input ToTensor(const std::string& name, const py::handle& object) {
  py::array array = py::array::ensure(object);
  if (!array) Raise(InvalidArgument("input '" + name + "' is not convertible to a NumPy array"));
  const DataType dtype = FromNumpy(array.dtype());
  if (dtype == DataType::kUndefined) {
    Raise(InvalidArgument("input '" + name + "' has NumPy dtype " + std::string(py::str(array.dtype())) +
                          ", which has no ONNX element type"));
  }
  Shape shape(array.shape(), array.shape() + array.ndim());
  if (dtype == DataType::kString) {
    Tensor tensor(DataType::kString, shape);
    py::list items = array.attr("ravel")().attr("tolist")();
    std::string* out = tensor.mutable_data<std::string>();
    for (size_t i = 0; i < items.size(); ++i) {
      py::handle item = items[i];
      out[i] = py::isinstance<py::bytes>(item) ? std::string(py::bytes(py::reinterpret_borrow<py::object>(item)))
                                              : std::string(py::str(item));
    }
    return {std::move(tensor), py::none()};
  }
  // Read in place when NumPy's layout is ours; else one C-contiguous copy.
  const bool in_place = (array.flags() & py::array::c_style) != 0 &&
                        reinterpret_cast<uintptr_t>(array.data()) % array.dtype().itemsize() == 0 &&
                        array.dtype().byteorder() != '>';
  if (!in_place) array = py::array::ensure(array, py::array::c_style | py::array::forcecast);
  return {Tensor::Borrow(dtype, std::move(shape), const_cast<void*>(array.data())), array};
}

py::object ToNumpy(const Tensor& tensor) {
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  if (tensor.dtype() == DataType::kString) {
    py::list items;
    const std::string* data = tensor.data<std::string>();
    for (int64_t i = 0; i < tensor.size(); ++i) items.append(py::str(data[i]));
    return py::module_::import("numpy").attr("array")(items, "O").attr("reshape")(py::tuple(py::cast(shape)));
  }
  py::object dtype = NumpyDtype(tensor.dtype());
  if (dtype.is_none()) {
    Raise(Unimplemented(std::string("an output of element type ") + DataTypeName(tensor.dtype()) +
                        " has no NumPy dtype"));
  }
  if (tensor.storage() == nullptr) {  // borrowed (an input passed through): copy, the input may go
    py::array result(py::reinterpret_borrow<py::dtype>(dtype), shape);
    if (tensor.nbytes() > 0) std::memcpy(result.mutable_data(), tensor.raw_data(), tensor.nbytes());
    return std::move(result);
  }
  // Zero-copy: the array's base owns a handle on the tensor's storage.
  auto* owner = new Tensor(tensor);
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(py::reinterpret_borrow<py::dtype>(dtype), shape, {}, tensor.raw_data(), base);
}

// A map as ONNX Runtime returns it: a dict of Python keys and scalars.
py::dict ToDict(const Map& map) {
  py::list keys = ToNumpy(map.keys).attr("tolist")();
  py::list values = ToNumpy(map.values).attr("tolist")();
  py::dict dict;
  for (size_t i = 0; i < keys.size(); ++i) dict[keys[i]] = values[i];
  return dict;
}

py::object ToPython(const Value& value) {
  if (value.is_none()) return py::none();
  if (value.is_tensor()) return ToNumpy(value.tensor());
  if (value.is_map()) return ToDict(value.map());
  py::list items;
  for (const Tensor& t : value.sequence().tensors) items.append(ToNumpy(t));
  for (const Map& m : value.sequence().maps) items.append(ToDict(m));
  return std::move(items);
}

// A dict fed to a map input (DictVectorizer, CastMap): keys and values in the declared types, or
// int64 / string keys and float values when the model does not say.
Value ToMap(const std::string& name, const py::dict& dict, const ValueInfo* declared) {
  py::list keys, values;
  for (const auto& [k, v] : dict) {
    keys.append(k);
    values.append(v);
  }
  const bool string_keys = declared != nullptr && declared->map_key != DataType::kUndefined
                               ? declared->map_key == DataType::kString
                               : dict.size() > 0 && py::isinstance<py::str>(keys[0]);
  const DataType value_type = declared != nullptr && declared->dtype != DataType::kUndefined ? declared->dtype
                                                                                               : DataType::kFloat;
  py::object numpy = py::module_::import("numpy");
  py::object value_dtype = value_type == DataType::kString ? py::object(py::str("U")) : NumpyDtype(value_type);
  if (value_dtype.is_none()) Raise(InvalidArgument("input '" + name + "': a map of this value type is not supported"));
  // Clone: the arrays are temporaries, and the map outlives them.
  Map map;
  map.keys = ToTensor(name, numpy.attr("array")(keys, string_keys ? "U" : "int64")).tensor.Clone();
  map.values = ToTensor(name, numpy.attr("array")(values, value_dtype)).tensor.Clone();
  return Value(std::make_shared<const Map>(std::move(map)));
}

// onnxruntime.NodeArg: name, shape (ints, with a str or None for a dynamic dimension), type.
struct NodeArg {
  std::string name;
  py::list shape;
  std::string type;
};

NodeArg MakeNodeArg(const ValueInfo& info) {
  NodeArg arg{info.name, py::list(), OrtTypeString(info)};
  for (size_t i = 0; i < info.shape.size(); ++i) {
    if (info.shape[i] >= 0) {
      arg.shape.append(info.shape[i]);
    } else if (i < info.dim_names.size() && !info.dim_names[i].empty()) {
      arg.shape.append(info.dim_names[i]);
    } else {
      arg.shape.append(py::none());
    }
  }
  return arg;
}

// onnxruntime.ModelMetadata (InferenceSession.get_modelmeta()), plus what onnxflow's C++
// ModelMetadata adds: producer_version, ir_version, graph_doc_string, opset_imports.
struct PyModelMetadata {
  std::string producer_name, producer_version, domain, description, graph_name, graph_description;
  int64_t version = 0, ir_version = 0;
  py::dict custom_metadata_map;
  py::dict opset_imports;  // domain ("" = ai.onnx) -> version
};

PyModelMetadata MakeModelMetadata(const ModelMetadata& m) {
  PyModelMetadata p;
  p.producer_name = m.producer_name;
  p.producer_version = m.producer_version;
  p.domain = m.domain;
  p.description = m.doc_string;
  p.graph_name = m.graph_name;
  p.graph_description = m.graph_doc_string;
  p.version = m.model_version;
  p.ir_version = m.ir_version;
  for (const auto& [key, value] : m.metadata_props) p.custom_metadata_map[py::str(key)] = value;
  for (const auto& [domain, version] : m.opset_imports) p.opset_imports[py::str(domain)] = version;
  return p;
}

// onnxruntime.SessionOptions' fields that onnxflow has (others are accepted and ignored by ORT
// scripts only if they never set them).
struct PySessionOptions {
  int intra_op_num_threads = 0;
  bool sequential = false;  // onnxflow: run nodes one after another instead of as a flow graph
  bool optimize = true;     // onnxflow: constant folding and fusions at load
};

// onnxruntime.RunOptions: `terminate = True` cancels the runs using it; onnxflow adds timeout_ms.
struct PyRunOptions {
  std::atomic<bool> cancel{false};
  double timeout_ms = 0;
};

class PySession {
 public:
  PySession(const py::object& model, const py::object& sess_options, const py::object& /*providers*/,
            const py::kwargs& /*kwargs*/) {
    SessionOptions options;
    if (!sess_options.is_none()) {
      const auto& o = sess_options.cast<const PySessionOptions&>();
      options.threads = o.intra_op_num_threads;
      options.mode = o.sequential ? ExecutionMode::kSequential : ExecutionMode::kDataflow;
      options.optimize = o.optimize;
    }
    Result<Session> session = Status(StatusCode::kInternal, "not loaded");
    if (py::isinstance<py::bytes>(model)) {
      std::string bytes = model.cast<std::string>();
      py::gil_scoped_release release;
      session = Session::LoadFromBytes(bytes, options);
    } else {
      std::string path = py::str(model);  // str or os.PathLike
      if (!py::isinstance<py::str>(model)) path = py::str(py::module_::import("os").attr("fspath")(model));
      py::gil_scoped_release release;
      session = Session::Load(path, options);
    }
    if (!session.ok()) Raise(session.status());
    session_ = std::make_shared<Session>(std::move(*session));
  }

  std::vector<NodeArg> get_inputs() const {
    std::vector<NodeArg> args;
    for (const ValueInfo& info : session_->inputs()) args.push_back(MakeNodeArg(info));
    return args;
  }
  std::vector<NodeArg> get_outputs() const {
    std::vector<NodeArg> args;
    for (const ValueInfo& info : session_->outputs()) args.push_back(MakeNodeArg(info));
    return args;
  }
  PyModelMetadata get_modelmeta() const { return MakeModelMetadata(session_->metadata()); }
  std::vector<std::string> get_providers() const { return {"CPUExecutionProvider"}; }

  py::list run(const py::object& output_names, const py::dict& input_feed, const py::object& run_options) const {
    const std::vector<ValueInfo>& declared = session_->outputs();
    // Named outputs: only the nodes they need run (Session::Run with names), in the caller's order.
    std::vector<std::string> names;
    if (output_names.is_none()) {
      for (const ValueInfo& info : declared) names.push_back(info.name);
    } else {
      for (const py::handle& name : output_names) {
        const std::string wanted = py::str(name);
        size_t j = 0;
        while (j < declared.size() && declared[j].name != wanted) ++j;
        if (j == declared.size()) Raise(InvalidArgument("the model has no output named '" + wanted + "'"));
        names.push_back(wanted);
      }
    }
    std::vector<Input> held;
    std::vector<NamedValue> inputs;
    for (const auto& [key, object] : input_feed) {
      const std::string name = py::str(key);
      if (py::isinstance<py::dict>(object)) {
        const ValueInfo* info = nullptr;
        for (const ValueInfo& in : session_->inputs()) {
          if (in.name == name) info = &in;
        }
        inputs.push_back({name, ToMap(name, py::reinterpret_borrow<py::dict>(object), info)});
        continue;
      }
      held.push_back(ToTensor(name, object));
      inputs.push_back({name, held.back().tensor});
    }
    RunOptions options;
    if (!run_options.is_none()) {
      const auto& ro = run_options.cast<const PyRunOptions&>();
      options.cancel = &ro.cancel;
      if (ro.timeout_ms > 0) {
        options.deadline = std::chrono::steady_clock::now() +
                           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double, std::milli>(ro.timeout_ms));
      }
    }
    Result<std::vector<NamedValue>> outputs = Status(StatusCode::kInternal, "not run");
    {
      py::gil_scoped_release release;  // `held` keeps the NumPy memory alive; no Python object is touched
      outputs = output_names.is_none() ? session_->Run(inputs, options) : session_->Run(inputs, names, options);
    }
    if (!outputs.ok()) Raise(outputs.status());
    py::list result;
    for (const NamedValue& value : *outputs) result.append(ToPython(value.value));
    return result;
  }

 private:
  std::shared_ptr<Session> session_;
};

}  // namespace
}  // namespace onnxflow::python

PYBIND11_MODULE(onnxflow, m) {
  using namespace onnxflow::python;
  m.doc() = "onnxflow: run ONNX models (Session mirrors onnxruntime.InferenceSession)";
  m.attr("__version__") = ONNXFLOW_VERSION_STRING;
  static py::exception<std::runtime_error> error(m, "OnnxflowError", PyExc_RuntimeError);
  g_error = error.ptr();

  py::class_<NodeArg>(m, "NodeArg")
      .def_readonly("name", &NodeArg::name)
      .def_readonly("shape", &NodeArg::shape)
      .def_readonly("type", &NodeArg::type)
      .def("__repr__", [](const NodeArg& a) {
        return "NodeArg(name='" + a.name + "', type='" + a.type + "', shape=" + std::string(py::repr(a.shape)) + ")";
      });

  py::class_<PyModelMetadata>(m, "ModelMetadata")
      .def_readonly("producer_name", &PyModelMetadata::producer_name)
      .def_readonly("producer_version", &PyModelMetadata::producer_version)
      .def_readonly("domain", &PyModelMetadata::domain)
      .def_readonly("description", &PyModelMetadata::description)
      .def_readonly("graph_name", &PyModelMetadata::graph_name)
      .def_readonly("graph_description", &PyModelMetadata::graph_description)
      .def_readonly("version", &PyModelMetadata::version)
      .def_readonly("ir_version", &PyModelMetadata::ir_version)
      .def_readonly("custom_metadata_map", &PyModelMetadata::custom_metadata_map)
      .def_readonly("opset_imports", &PyModelMetadata::opset_imports);

  py::class_<PySessionOptions>(m, "SessionOptions")
      .def(py::init<>())
      .def_readwrite("intra_op_num_threads", &PySessionOptions::intra_op_num_threads)
      .def_readwrite("sequential", &PySessionOptions::sequential)
      .def_readwrite("optimize", &PySessionOptions::optimize);

  py::class_<PyRunOptions>(m, "RunOptions")
      .def(py::init<>())
      .def_property(
          "terminate", [](const PyRunOptions& o) { return o.cancel.load(); },
          [](PyRunOptions& o, bool v) { o.cancel.store(v); })
      .def_readwrite("timeout_ms", &PyRunOptions::timeout_ms);

  py::class_<PySession>(m, "Session")
      .def(py::init<const py::object&, const py::object&, const py::object&, const py::kwargs&>(),
           py::arg("path_or_bytes"), py::arg("sess_options") = py::none(), py::arg("providers") = py::none())
      .def("get_inputs", &PySession::get_inputs)
      .def("get_outputs", &PySession::get_outputs)
      .def("get_providers", &PySession::get_providers)
      .def("get_modelmeta", &PySession::get_modelmeta)
      .def("run", &PySession::run, py::arg("output_names"), py::arg("input_feed"),
           py::arg("run_options") = py::none());
  m.attr("InferenceSession") = m.attr("Session");  // `import onnxflow as onnxruntime` works
}
