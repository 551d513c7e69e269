#include "ops/rnn/recurrent.h"

namespace onnxflow {
namespace rnn {

Result<RecurrentAttributes> ParseRecurrentAttributes(const KernelInfo& info, const std::vector<ActivationKind>& defaults,
                                                     int typed_inputs) {
  RecurrentAttributes a;
  const std::string direction = info.GetString("direction", "forward");
  if (direction == "forward") {
    a.num_directions = 1;
  } else if (direction == "reverse") {
    a.num_directions = 1;
    a.reverse = true;
  } else if (direction == "bidirectional") {
    a.num_directions = 2;
  } else {
    return InvalidArgument("direction must be forward, reverse or bidirectional, got '" + direction + "'");
  }
  a.hidden_size = info.GetInt("hidden_size", 0);
  if (a.hidden_size < 0) return InvalidArgument("hidden_size must be positive, got " + std::to_string(a.hidden_size));
  a.layout = info.GetInt("layout", 0);
  if (a.layout != 0 && a.layout != 1) return InvalidArgument("layout must be 0 or 1, got " + std::to_string(a.layout));
  if (info.has_attribute("clip")) {
    a.has_clip = true;
    a.clip = info.GetFloat("clip", 0.0f);
    if (!(a.clip > 0.0f)) return InvalidArgument("clip must be positive, got " + std::to_string(a.clip));
  }
  ONNXFLOW_ASSIGN_OR_RETURN(a.activations, ParseActivations(info, defaults, a.num_directions));
  for (int i = 0; i < typed_inputs; ++i) {
    const DataType t = info.input_type(i);
    if (t != DataType::kUndefined && !IsRecurrentType(t)) {
      return Unimplemented(info.op_type() + " does not support type " + DataTypeName(t));
    }
  }
  return a;
}

}  // namespace rnn
}  // namespace onnxflow
