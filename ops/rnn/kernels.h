// One registration function per kernel file of the rnn family; register.cc calls them all.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {
namespace rnn {

Status RegisterRnn(KernelRegistry& registry);   // rnn.cc
Status RegisterGru(KernelRegistry& registry);   // gru.cc
Status RegisterLstm(KernelRegistry& registry);  // lstm.cc

}  // namespace rnn
}  // namespace onnxflow
