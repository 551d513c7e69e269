#include "ops/framework/evaluate.h"

#include "ops/framework/run_state.h"

namespace onnxflow {

Result<std::vector<Value>> EvaluateNode(const KernelDef& def, const KernelInfo& info, std::vector<Value> inputs,
                                        const EvaluateOptions& options) {
  ONNXFLOW_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, def.Create(info));
  const int input_count = info.input_count();
  inputs.resize(static_cast<size_t>(input_count));
  NodeSlots slots;
  for (int i = 0; i < input_count; ++i) slots.inputs.push_back(info.has_input(i) ? i : -1);
  slots.reusable = options.reusable;
  slots.reusable.resize(inputs.size(), 0);
  std::vector<Value> values = std::move(inputs);
  for (int i = 0; i < info.output_count(); ++i) {
    slots.outputs.push_back(info.has_output(i) ? static_cast<int>(values.size()) : -1);
    values.emplace_back();
  }
  RunState run(options.limits, RunOptions{}, options.threads);
  KernelContext ctx(slots, values.data(), &run, info.name());
  ONNXFLOW_RETURN_IF_ERROR(kernel->Compute(ctx));
  return std::vector<Value>(std::make_move_iterator(values.begin() + input_count),
                            std::make_move_iterator(values.end()));
}

}  // namespace onnxflow
