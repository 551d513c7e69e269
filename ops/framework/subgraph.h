// How If, Loop and Scan reach their bodies without knowing about the scheduler: the scheduler
// prepares each graph attribute as a Subgraph (an immutable child plan, built once at load) and
// hands it to the kernel through KernelInfo.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "include/onnxflow/session.h"
#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"

namespace onnxflow {

class KernelContext;

// One invocation's state of a subgraph: the value table with outer-scope values bound. A Loop
// keeps one across its iterations so that an iteration costs only the body's nodes.
class SubgraphFrame {
 public:
  virtual ~SubgraphFrame() = default;
  // Runs the body once: `inputs` in the subgraph's input order, `outputs` in its output order.
  virtual Status Run(std::vector<Value>& inputs, std::vector<Value>* outputs) = 0;
};

class Subgraph {
 public:
  virtual ~Subgraph() = default;
  virtual const std::vector<std::string>& input_names() const = 0;
  virtual const std::vector<std::string>& output_names() const = 0;
  // Declared types of the subgraph's outputs (a Loop with zero iterations still needs the element
  // type of its scan outputs).
  virtual const std::vector<ValueInfo>& output_infos() const = 0;
  // `ctx` is the calling node's: outer-scope values come from its implicit inputs, limits,
  // cancellation and threads from its run.
  virtual Result<std::unique_ptr<SubgraphFrame>> NewFrame(KernelContext& ctx) const = 0;
};

}  // namespace onnxflow
