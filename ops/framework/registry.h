// The kernel registry: (domain, op_type) -> kernels, each for a range of opset versions.
//
// Ranges are in the model's opset numbers for the domain: a kernel for Relu-6 that Relu-14
// replaced registers [6, 13]; the newest version registers [since, kOpenEnded]. Registration is an
// explicit call per op family (RegisterElementwiseKernels(registry) ...), never static init.
#pragma once

#include <climits>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "include/onnxflow/status.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"

namespace onnxflow {

inline constexpr int kOpenEnded = INT_MAX;
inline const char kOnnxDomain[] = "";  // "ai.onnx" is normalized to this
inline const char kMlDomain[] = "ai.onnx.ml";
inline const char kOnnxflowDomain[] = "com.onnxflow";  // the fused ops the load-time passes make

// Every registrar is defined ONNXFLOW_REGISTRAR, which puts it with the other cold code, away from
// its kernels: registration runs each registrar once, at startup, and a registrar sitting in its
// kernel file's text made the kernel load a 64 KB fault-around window of that file's code into the
// process (onnxflow's registration faulted in 7.2 MB of run_model's text, 115 windows of 64 KB,
// 86 of them around a registrar: a third of `run_model --demo`'s 19 MB peak RSS).
#define ONNXFLOW_REGISTRAR __attribute__((cold))

// Builds a kernel for one node. May refuse (Unimplemented) when the node uses something the
// kernel does not support, e.g. an input type known at load.
// Any callable of that signature converts to one; its copies share the callable. (A registrar
// that gives one factory to several version ranges copies it, and copying a std::function runs
// its manager, which lives in the kernel's file: that page and the 64 KB around it then loaded.)
class KernelFactory {
 public:
  using Fn = std::function<Result<std::unique_ptr<OpKernel>>(const KernelInfo&)>;

  KernelFactory() = default;
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, KernelFactory> &&
                                                    std::is_constructible_v<Fn, F>>>
  ONNXFLOW_REGISTRAR KernelFactory(F f) : fn_(new Fn(std::move(f))) {}  // NOLINT: converts like std::function

  Result<std::unique_ptr<OpKernel>> operator()(const KernelInfo& info) const { return (*fn_)(info); }
  explicit operator bool() const { return fn_ != nullptr && *fn_; }

 private:
  std::shared_ptr<const Fn> fn_;
};

struct KernelDef {
  std::string domain;
  std::string op_type;
  int since_version;
  int until_version;
  KernelFactory factory;

  // Builds the node's kernel: the factory, then a refusal when it read an attribute of another
  // type than the one it holds (KernelInfo::attribute_status). Every kernel is made through here.
  Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) const;
};

class KernelRegistry {
 public:
  // Refuses a range that overlaps one already registered for the same op. (Names as views: a
  // registrar's literal became a std::string in the registrar's file, through a local clone of
  // the string constructor in each file's text.)
  Status Register(std::string_view domain, std::string_view op_type, int since_version, int until_version,
                  KernelFactory factory);

  // The kernel for `op_type` in `domain` at the model's opset `version`, or nullptr.
  const KernelDef* Find(const std::string& domain, const std::string& op_type, int version) const;
  bool HasOp(const std::string& domain, const std::string& op_type) const;

 private:
  std::map<std::pair<std::string, std::string>, std::vector<KernelDef>> kernels_;
};

// Each op family lists its kernel files once, in ops/<family>/register.h, by the function each file
// defines to register its ops: `#define ONNXFLOW_MATH_REGISTRARS(X) X(RegisterMatMulKernels) ...`.
// The header declares them with ONNXFLOW_DECLARE_REGISTRAR and the family's register.cc calls them
// in order with RegisterEach({... ONNXFLOW_REGISTRAR_POINTER}). Explicit calls, not static
// initializers: a kernel file in a static library that nothing references would be dropped by the
// linker together with its registration.
using Registrar = Status (*)(KernelRegistry& registry);
#define ONNXFLOW_DECLARE_REGISTRAR(f) Status f(KernelRegistry& registry);
#define ONNXFLOW_REGISTRAR_POINTER(f) &f,

// Calls each registrar in order; the first refusal stops and is returned.
Status RegisterEach(KernelRegistry& registry, std::initializer_list<Registrar> registrars);

// "ai.onnx" and "" name the same domain.
std::string NormalizeDomain(const std::string& domain);

namespace registry_internal {

// Whether K has a static Create(const KernelInfo&, const Args&...).
template <typename Void, typename K, typename... Args>
struct HasCreate : std::false_type {};
template <typename K, typename... Args>
struct HasCreate<std::void_t<decltype(K::Create(std::declval<const KernelInfo&>(), std::declval<const Args&>()...))>, K,
                 Args...> : std::true_type {};

}  // namespace registry_internal

// The one spelling of a kernel factory: Make<K>(args...) builds a K for each node from its
// KernelInfo and `args` (the same for every node: say, which of the ops that share the class this
// one is). K parses its attributes once, either in a static
// `Result<std::unique_ptr<OpKernel>> Create(const KernelInfo&, args...)`, which may refuse the node,
// or, when it has none, in a constructor `K(const KernelInfo&, args...)` that cannot fail.
template <typename K, typename... Args>
ONNXFLOW_REGISTRAR KernelFactory Make(Args... args) {
  return [args...](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    if constexpr (registry_internal::HasCreate<void, K, Args...>::value) {
      return K::Create(info, args...);
    } else {
      return std::unique_ptr<OpKernel>(new K(info, args...));
    }
  };
}

}  // namespace onnxflow
