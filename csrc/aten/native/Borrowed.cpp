// Borrowed.cpp: PyTorch's CPU kernels run on device memory, with shapes from the Meta kernels.
// LITERALINCLUDE START: BORROWED_BORROWED_INCLUDES
#include "Borrowed.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/SmallVector.h>

#include <atomic>
#include <exception>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../../runtime/OpenRegFunctions.h"
#include "../../runtime/OpenRegLaunch.h"
#include "Fallback.h"
#include "Minimal.h"
#include "Operand.h"
// LITERALINCLUDE END: BORROWED_BORROWED_INCLUDES

namespace at::native::openreg {

namespace {
using c10::openreg::launch_kernel;

// ---- the arguments of a call, as a kernel sees them ----

// LITERALINCLUDE START: BORROWED_CAPTURE
// A call's arguments (or results) captured at launch: each value with its
// tensors blanked out, and the tensors as Operands, in the order the walker
// visits them. Inside the kernel, stack() rebuilds the values around CPU
// tensors over the device's memory.
class Captured {
 public:
  Captured(const c10::IValue* begin, const c10::IValue* end) {
    for (const c10::IValue* v = begin; v != end; ++v) {
      values_.push_back(map_tensors(*v, [this](const at::Tensor& t) {
        operands_.emplace_back(t);
        return at::Tensor();
      }));
    }
  }

  void append_to(torch::jit::Stack& stack) const {  // inside the kernel
    size_t next = 0;
    for (const c10::IValue& v : values_) {
      stack.push_back(map_tensors(v, [&](const at::Tensor&) { return operands_[next++].cpu(); }));
    }
  }

 private:
  c10::SmallVector<c10::IValue, 6> values_;
  c10::SmallVector<Operand, 4> operands_;
};
// LITERALINCLUDE END: BORROWED_CAPTURE

// LITERALINCLUDE START: BORROWED_TO_META
at::Tensor to_meta(const at::Tensor& t) {
  if (!t.defined() || !t.is_privateuseone()) return t;
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
}
// LITERALINCLUDE END: BORROWED_TO_META

// LITERALINCLUDE START: BORROWED_META_KEY
// ---- the Meta cache ----
// Meta kernels written in Python (relu, addmm, convolution, ...) cost 100-300
// us a call. A model repeats the same shapes every step, so the plans are
// cached by operator and argument metadata: Meta runs once per distinct call.
struct MetaKey {
  c10::SmallVector<int64_t, 48> words;
  bool operator==(const MetaKey& o) const { return words == o.words; }
};
// LITERALINCLUDE END: BORROWED_META_KEY
// LITERALINCLUDE START: BORROWED_DEF_META_KEY_HASH
struct MetaKeyHash {
  size_t operator()(const MetaKey& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t w : k.words) h = (h ^ static_cast<size_t>(w)) * 1099511628211ull;
    return h;
  }
};
// LITERALINCLUDE END: BORROWED_DEF_META_KEY_HASH

// LITERALINCLUDE START: BORROWED_ENCODE
void encode(const at::Tensor& t, MetaKey& k) {
  auto& w = k.words;
  if (!t.defined()) {
    w.push_back(-1);
    return;
  }
  w.push_back(t.is_privateuseone() ? 1 : 2);
  w.push_back(static_cast<int64_t>(t.scalar_type()));
  w.push_back(t.dim());
  w.append(t.sizes().begin(), t.sizes().end());
  w.append(t.strides().begin(), t.strides().end());
  if (!t.is_privateuseone()) w.push_back(t.unsafeGetTensorImpl()->is_wrapped_number());
}
// LITERALINCLUDE END: BORROWED_ENCODE

// LITERALINCLUDE START: BORROWED_ARGUMENT_ENCODING
// False when an argument's kind is not understood: then no caching.
bool encode(const c10::IValue& v, MetaKey& k) {
  auto& w = k.words;
  if (v.isTensor() || v.isTensorList() || v.isOptionalTensorList()) {
    w.push_back(v.isTensor() ? -8 : v.isTensorList() ? -9 : -10);
    for_each_tensor(v, [&](const at::Tensor& t) { encode(t, k); });
    w.push_back(-11);
  } else if (v.isNone()) {
    w.push_back(-2);
  } else if (v.isInt()) {
    w.push_back(-3);
    w.push_back(v.toInt());
  } else if (v.isDouble()) {
    double d = v.toDouble();
    int64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    w.push_back(-4);
    w.push_back(bits);
  } else if (v.isBool()) {
    w.push_back(-5);
    w.push_back(v.toBool());
  } else if (v.isIntList()) {
    w.push_back(-6);
    for (int64_t i : v.toIntList()) w.push_back(i);
    w.push_back(-7);
  } else if (v.isString()) {
    w.push_back(-12);
    w.push_back(static_cast<int64_t>(std::hash<std::string_view>()(v.toStringView())));
  } else if (v.isBoolList()) {
    w.push_back(-13);
    for (bool b : v.toBoolList()) w.push_back(b);
    w.push_back(-14);
  } else {
    return false;  // complex scalars, generators, ...: not cached
  }
  return true;
}
// LITERALINCLUDE END: BORROWED_ARGUMENT_ENCODING

// LITERALINCLUDE START: BORROWED_OPERATOR_SET
// A set of operators, found out once each at run time. Keyed by the address of
// the operator's schema, which the dispatcher keeps for the process's life.
class OperatorSet {
 public:
  bool contains(const c10::OperatorHandle& op) {
    std::lock_guard<std::mutex> lock(mu_);
    return ops_.count(&op.schema()) != 0;
  }
  void insert(const c10::OperatorHandle& op) {
    std::lock_guard<std::mutex> lock(mu_);
    ops_.insert(&op.schema());
  }

 private:
  std::mutex mu_;
  std::unordered_set<const c10::FunctionSchema*> ops_;
};
// LITERALINCLUDE END: BORROWED_OPERATOR_SET

// LITERALINCLUDE START: BORROWED_SHAPES_FROM_DATA
// Operators whose output shapes the host cannot know before the kernel runs:
// no Meta kernel, or one that raises because the shapes depend on the data.
OperatorSet& shapes_from_data() {
  static auto* ops = new OperatorSet();
  return *ops;
}
// LITERALINCLUDE END: BORROWED_SHAPES_FROM_DATA

// LITERALINCLUDE START: BORROWED_OUT_VARIANT
// Whether `out` takes exactly the functional operator's arguments, then one
// written argument per return.
bool writes_returns_into(const c10::FunctionSchema& out, const c10::FunctionSchema& schema) {
  const auto& args = out.arguments();
  const auto& functional = schema.arguments();
  if (args.size() != functional.size() + schema.returns().size()) return false;
  for (size_t i = 0; i < functional.size(); ++i) {
    if (args[i].name() != functional[i].name() || *args[i].type() != *functional[i].type()) {
      return false;  // any.dims_out takes int[]? where any.dim takes int
    }
  }
  for (size_t i = 0; i < schema.returns().size(); ++i) {
    const auto& extra = args[functional.size() + i];
    if (extra.alias_info() == nullptr || !extra.alias_info()->isWrite() ||
        extra.type()->kind() != schema.returns()[i].type()->kind()) {
      return false;
    }
  }
  return true;
}

// The overload a functional operator writes into, if it has one. PyTorch
// names most of them `out` (`<overload>_out`); gradients and some losses use
// `grad_input` and `output` (threshold_backward.grad_input, the backward of
// ReLU, went through the functional kernel and a copy: 2x the CPU at 1M);
// full reductions `<name>_out` (all.all_out, any.all_out) or `unary_out`
// (max, min): borrowed through a copy, x.all() took 2.7x the CPU at 1 K.
// Others have names of their own (sort.stable writes into sort.values_stable):
// when the usual names miss, every overload of the operator is tried. The
// search runs once per operator (every new plan asks), not once per plan.
std::optional<c10::OperatorHandle> find_out_variant(const c10::FunctionSchema& schema) {
  const std::string& overload = schema.overload_name();
  std::vector<std::string> names = {overload.empty() ? "out" : overload + "_out"};
  if (overload.empty()) {
    std::string base = schema.name().substr(schema.name().find("::") + 2);
    names.insert(names.end(), {"grad_input", "output", base + "_out", "unary_out"});
  }
  for (const std::string& name : names) {
    auto out = c10::Dispatcher::singleton().findOp({schema.name(), name});
    if (out.has_value() && writes_returns_into(out->schema(), schema)) return out;
  }
  for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
    if (name.name != schema.name() || name.overload_name == overload) continue;
    auto out = c10::Dispatcher::singleton().findOp(name);
    if (out.has_value() && writes_returns_into(out->schema(), schema)) return out;
  }
  return std::nullopt;
}

std::optional<c10::OperatorHandle> out_variant(const c10::FunctionSchema& schema) {
  static std::mutex mu;
  static auto* found =
      new std::unordered_map<const c10::FunctionSchema*, std::optional<c10::OperatorHandle>>();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = found->find(&schema); it != found->end()) return it->second;
  }
  std::optional<c10::OperatorHandle> out = find_out_variant(schema);
  std::lock_guard<std::mutex> lock(mu);
  found->emplace(&schema, out);
  return out;
}
// LITERALINCLUDE END: BORROWED_OUT_VARIANT

// LITERALINCLUDE START: BORROWED_WRITERS
std::mutex writers_mu;
std::unordered_map<std::string, Writer>& writers() {
  static auto* w = new std::unordered_map<std::string, Writer>();
  return *w;
}

Writer writer_for(const c10::FunctionSchema& schema) {
  std::string name = schema.name().substr(schema.name().find("::") + 2);
  if (!schema.overload_name().empty()) name += "." + schema.overload_name();
  std::lock_guard<std::mutex> lock(writers_mu);
  auto it = writers().find(name);
  return it == writers().end() ? nullptr : it->second;
}
// LITERALINCLUDE END: BORROWED_WRITERS

// LITERALINCLUDE START: BORROWED_WARNING_BUFFER
// Collects warnings, to re-emit them only if the attempt that raised them stands.
struct WarningBuffer final : c10::WarningHandler {
  std::vector<c10::Warning> warnings;
  void process(const c10::Warning& warning) override { warnings.push_back(warning); }
};
// LITERALINCLUDE END: BORROWED_WARNING_BUFFER

// LITERALINCLUDE START: BORROWED_OUT_FITS
// Whether `out` writes results of the functional shapes. Some do not: with a
// reduction, mse_loss.out is elementwise. Checked on Meta tensors with empty
// outputs, which the overload resizes (silently) to what it would write.
bool out_fits(const c10::OperatorHandle& out, const torch::jit::Stack& args,
              const std::vector<c10::IValue>& results) {
  torch::jit::Stack trial;
  for (const auto& a : args) trial.push_back(map_tensors(a, [](const at::Tensor& t) { return to_meta(t); }));
  std::vector<c10::IValue> outs;
  for (const auto& r : results) {
    bool undefined = false;
    for_each_tensor(r, [&](const at::Tensor& t) { undefined = undefined || !t.defined(); });
    if (undefined || !(r.isTensor() || r.isTensorList())) return false;  // an output not asked for
    outs.push_back(map_tensors(r, [](const at::Tensor& t) { return at::empty({0}, t.options()); }));
  }
  trial.insert(trial.end(), outs.begin(), outs.end());
  try {
    out.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &trial);
  } catch (const std::exception&) {
    // A C++ check, or a Python Meta kernel that takes no out= argument at all
    // (embedding_dense_backward's raises TypeError): no .out overload then.
    return false;
  }
  for (size_t r = 0; r < results.size(); ++r) {
    std::vector<at::IntArrayRef> want, got;
    for_each_tensor(results[r], [&](const at::Tensor& t) { want.push_back(t.sizes()); });
    for_each_tensor(outs[r], [&](const at::Tensor& t) { got.push_back(t.sizes()); });
    if (want != got) return false;
  }
  return true;
}
// LITERALINCLUDE END: BORROWED_OUT_FITS

// LITERALINCLUDE START: BORROWED_BORROWING_DISABLED
// OPENREG_NO_BORROWED=1 sends every borrowed operator to the CPU fallback:
// a switch for bisecting a suspected kernel, and for measuring the fallback.
bool borrowing_disabled() {
  static const bool disabled = c10::openreg::env_flag("OPENREG_NO_BORROWED");
  return disabled;
}
// LITERALINCLUDE END: BORROWED_BORROWING_DISABLED

// LITERALINCLUDE START: BORROWED_WRITTEN_ARGUMENTS
// The returns that are arguments (in-place and out= results): the argument's
// index, or -1 for a new result.
std::vector<int> written_arguments(const c10::FunctionSchema& schema) {
  std::vector<int> written;
  for (const auto& ret : schema.returns()) {
    int index = -1;
    const auto* alias = ret.alias_info();
    for (size_t a = 0; alias != nullptr && alias->isWrite() && a < schema.arguments().size(); ++a) {
      const auto* arg_alias = schema.arguments()[a].alias_info();
      if (arg_alias != nullptr && *arg_alias == *alias) {
        index = static_cast<int>(a);
        break;
      }
    }
    written.push_back(index);
  }
  return written;
}
// LITERALINCLUDE END: BORROWED_WRITTEN_ARGUMENTS
// LITERALINCLUDE START: BORROWED_PLAN_TYPE
// What the host knows about a call before launching it: the results'
// metadata (from the Meta kernel, checked once against the CPU kernel), which
// results are arguments, and how the kernel will write the new ones.
struct Plan {
  std::vector<c10::IValue> results;        // Meta tensors: each return's shape, strides, dtype
  std::vector<int> written;                // per return: the argument it is, or -1 if new
  bool in_place = false;                   // every return is an argument
  std::optional<c10::OperatorHandle> out;  // the .out overload writing the new results, if any
  // Set by a kernel when the .out overload turned out to want other shapes.
  std::shared_ptr<std::atomic<bool>> out_failed = std::make_shared<std::atomic<bool>>(false);
  Writer writer = nullptr;                 // fills the new results directly, if set (set_writer)
  bool checked = false;                    // the shapes were compared with the CPU kernel's
  bool from_data = false;                  // no plan: the shapes depend on the data, or the
                                           // CPU kernel returns a conjugate or negative view
};
// LITERALINCLUDE END: BORROWED_PLAN_TYPE

std::mutex meta_cache_mu;
// LITERALINCLUDE START: BORROWED_META_CACHE
std::unordered_map<MetaKey, std::shared_ptr<const Plan>, MetaKeyHash>& meta_cache() {
  static auto* cache = new std::unordered_map<MetaKey, std::shared_ptr<const Plan>, MetaKeyHash>();
  return *cache;
}
// LITERALINCLUDE END: BORROWED_META_CACHE
// LITERALINCLUDE START: BORROWED_K_META_CACHE_LIMIT
constexpr size_t kMetaCacheLimit = 8192;
// LITERALINCLUDE END: BORROWED_K_META_CACHE_LIMIT

// LITERALINCLUDE START: BORROWED_REMEMBER
void remember(MetaKey key, std::shared_ptr<const Plan> plan) {
  std::lock_guard<std::mutex> lock(meta_cache_mu);
  if (meta_cache().size() >= kMetaCacheLimit) meta_cache().clear();
  meta_cache()[std::move(key)] = std::move(plan);
}
// LITERALINCLUDE END: BORROWED_REMEMBER
// LITERALINCLUDE START: BORROWED_STEP_PLAN
// Step 1, on the host: the plan for this call. From the cache when the same
// operator met arguments of the same metadata before; else the Meta kernel
// computes the results' shapes and performs the operator's argument checks.
// nullptr: the shapes depend on the data (see run_and_wait).
std::shared_ptr<const Plan> plan_call(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                      std::optional<MetaKey>& key) {
  const auto& schema = op.schema();
  const size_t first = stack.size() - schema.arguments().size();
  key.emplace();
  key->words.push_back(reinterpret_cast<int64_t>(&schema));
  for (size_t i = first; i < stack.size() && key.has_value(); ++i) {
    if (!encode(stack[i], *key)) key.reset();  // not cacheable
  }
  if (key.has_value()) {
    std::lock_guard<std::mutex> lock(meta_cache_mu);
    auto hit = meta_cache().find(*key);
    if (hit != meta_cache().end()) return hit->second->from_data ? nullptr : hit->second;
  }
  if (shapes_from_data().contains(op)) return nullptr;

  auto plan = std::make_shared<Plan>();
  torch::jit::Stack args(stack.begin() + first, stack.end());
  for (const auto& a : args) {
    plan->results.push_back(map_tensors(a, [](const at::Tensor& t) { return to_meta(t); }));
  }
  try {
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &plan->results);
  } catch (const c10::NotImplementedError&) {
    shapes_from_data().insert(op);  // no Meta kernel
    return nullptr;
  } catch (const c10::Error&) {
    throw;  // the operator's own argument check: the user sees its message
  } catch (const std::exception&) {
    // A Python Meta kernel raised: the output shape depends on the data
    // (indexing with a mask), or the arguments are wrong; the CPU kernel,
    // run on the device, computes it or raises the operator's own error.
    if (key.has_value()) {
      auto marker = std::make_shared<Plan>();
      marker->from_data = true;
      remember(*key, std::move(marker));
    }
    return nullptr;
  }
  for (const auto& ret : schema.returns()) {  // a bool or a number: only the kernel knows it
    auto kind = ret.type()->kind();
    if (kind != c10::TypeKind::TensorType && kind != c10::TypeKind::ListType) plan->from_data = true;
  }
  if (plan->from_data) {
    plan->results.clear();
    if (key.has_value()) remember(*key, plan);
    return nullptr;
  }
  // Python Meta kernels return tensors that own a Python object: keep plain
  // C++ copies, which any thread may release without taking the GIL.
  for (auto& r : plan->results) {
    r = map_tensors(r, [](const at::Tensor& t) {
      return t.defined() ? at::empty_strided(t.sizes(), t.strides(), t.options()) : t;
    });
  }
  plan->written = written_arguments(schema);
  plan->in_place = std::all_of(plan->written.begin(), plan->written.end(), [](int a) { return a >= 0; });
  if (auto out = out_variant(schema); !plan->in_place && out && out_fits(*out, args, plan->results)) {
    plan->out = out;
  }
  if (!plan->in_place) plan->writer = writer_for(schema);
  if (plan->in_place && key.has_value()) {  // nothing new to check against the CPU kernel
    plan->checked = true;
    remember(*key, plan);
  }
  return plan;
}
// LITERALINCLUDE END: BORROWED_STEP_PLAN

// LITERALINCLUDE START: BORROWED_ALLOCATE_LIKE
at::Tensor allocate_like(const at::Tensor& meta, c10::Device device) {
  if (!meta.defined()) return meta;  // an output not asked for
  return empty_strided(meta.sizes(), meta.strides(), meta.scalar_type(), std::nullopt, device,
                       std::nullopt);
}
// LITERALINCLUDE END: BORROWED_ALLOCATE_LIKE

// LITERALINCLUDE START: BORROWED_STEP_BIND
// Step 2, on the host: the results. In-place and out= results are their
// arguments (resized as the Meta kernel resized them); new results are
// allocated on the device with the planned shapes and strides.
std::vector<c10::IValue> bind_results(const Plan& plan, const torch::jit::Stack& stack,
                                      size_t first, c10::Device device) {
  std::vector<c10::IValue> results;
  for (size_t r = 0; r < plan.written.size(); ++r) {
    const c10::IValue& meta = plan.results[r];
    if (plan.written[r] < 0) {
      results.push_back(map_tensors(meta, [&](const at::Tensor& t) { return allocate_like(t, device); }));
      continue;
    }
    results.push_back(stack[first + plan.written[r]]);
    if (results.back().isTensor() && meta.isTensor() &&
        results.back().toTensor().sizes() != meta.toTensor().sizes()) {
      results.back().toTensor().resize_(meta.toTensor().sizes());
    }
  }
  return results;
}
// LITERALINCLUDE END: BORROWED_STEP_BIND

// LITERALINCLUDE START: BORROWED_STEP_LAUNCH
// Step 3: queue the kernel. It runs the operator's CPU kernel on CPU views of
// the device's memory: the operator itself when it writes in place, else a
// writer or the .out overload filling the new results, else the functional
// operator and a copy into them.
struct BorrowedCall {
  BorrowedCall(const c10::OperatorHandle& op, const Plan& plan, const torch::jit::Stack& stack,
               size_t first, const std::vector<c10::IValue>& results)
      : op(op),
        in_place(plan.in_place),
        out(plan.out),
        out_failed(plan.out_failed),
        writer(plan.writer),
        args(stack.data() + first, stack.data() + stack.size()),
        outs(results.data(), results.data() + results.size()) {}

  c10::OperatorHandle op;
  bool in_place;
  std::optional<c10::OperatorHandle> out;
  std::shared_ptr<std::atomic<bool>> out_failed;
  Writer writer;
  Captured args;
  Captured outs;

  void operator()() const {
    torch::jit::Stack cpu;
    args.append_to(cpu);
    if (in_place) return op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &cpu);
    if (writer != nullptr) {
      torch::jit::Stack results;
      outs.append_to(results);
      if (writer(cpu, results)) return;
    }
    if (out && !out_failed->load(std::memory_order_relaxed)) {
      size_t n = cpu.size();
      outs.append_to(cpu);
      WarningBuffer buffer;
      try {
        c10::WarningUtils::WarningHandlerGuard guard(&buffer);
        out->redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &cpu);
        for (const auto& w : buffer.warnings) c10::warn(w);
        return;
      } catch (const c10::Error& e) {
        // It wanted to resize an output (mse_loss.out with a reduction does).
        // Outputs are resized before anything is written: nothing changed.
        if (std::string(e.what()).find("not resizable") == std::string::npos) throw;
        out_failed->store(true);
      }
      cpu.resize(n);  // drop the outputs: the functional operator takes the arguments only
    }
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &cpu);
    torch::jit::Stack dst;
    outs.append_to(dst);
    for (size_t r = 0; r < dst.size(); ++r) {  // functional results: copy them over
      std::vector<at::Tensor> src;
      for_each_tensor(cpu[r], [&](const at::Tensor& t) { src.push_back(t); });
      size_t i = 0;
      for_each_tensor(dst[r], [&](const at::Tensor& t) {
        if (t.defined()) t.copy_(src[i]);
        ++i;
      });
    }
  }
};

// The call is built once, in place in the kernel body's memory: the captures
// take about 1.5 KB, and moving them (into a lambda, into the body) showed as
// about 5% of a small operator's host time in a profile.
void launch(const c10::OperatorHandle& op, const Plan& plan, const torch::jit::Stack& stack,
            size_t first, const std::vector<c10::IValue>& results) {
  c10::openreg::launch_new_kernel<BorrowedCall>(op, plan, stack, first, results);
}
// LITERALINCLUDE END: BORROWED_STEP_LAUNCH

// LITERALINCLUDE START: BORROWED_RUN_AND_WAIT
// For outputs whose shapes only the kernel knows (nonzero, masked_select,
// boolean indexing, unique): run the CPU kernel on the device's memory, wait
// for it, and move its results to the device. The synchronization is the
// one a GPU needs for the same operators. Also run once for every new plan,
// to check the Meta kernel's shapes against what the CPU kernel produces.
std::vector<c10::IValue> run_and_wait(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                      size_t first) {
  refuse_while_capturing(op.schema().name());
  Captured args(stack.data() + first, stack.data() + stack.size());
  std::vector<size_t> outs;  // out= arguments: the CPU kernel sizes them, the host copies them
  for (size_t a = 0; a < op.schema().arguments().size(); ++a) {
    if (op.schema().arguments()[a].is_out()) outs.push_back(a);
  }
  struct Produced {
    torch::jit::Stack results;
    std::exception_ptr error;  // the operator's own error, raised on the host as it was raised
  };
  auto produced = std::make_shared<Produced>();
  launch_kernel([op, args = std::move(args), outs = std::move(outs), produced] {
    try {
    torch::jit::Stack cpu;
    args.append_to(cpu);
    for (size_t a : outs) {
      cpu[a] = map_tensors(cpu[a], [](const at::Tensor& t) { return at::empty({0}, t.options()); });
    }
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &cpu);
    for (auto& r : cpu) {  // a result over device memory (a view of an input) is read now
      r = map_tensors(r, [](const at::Tensor& t) {
        return t.defined() && !t.storage().resizable() ? t.clone() : t;
      });
    }
    produced->results = std::move(cpu);
    } catch (...) {
      produced->error = std::current_exception();
    }
  });
  c10::openreg::getCurrentOpenRegStream().synchronize();
  if (produced->error) std::rethrow_exception(produced->error);
  return std::move(produced->results);
}
// LITERALINCLUDE END: BORROWED_RUN_AND_WAIT

// LITERALINCLUDE START: BORROWED_RESULTS_FROM_CPU
// The results of run_and_wait as the operator returns them: arguments written
// in place are the arguments; new tensors are copied to the device, with the
// layout the CPU kernel gave them.
std::vector<c10::IValue> device_results(const c10::FunctionSchema& schema,
                                        const torch::jit::Stack& produced,
                                        const torch::jit::Stack& stack, size_t first,
                                        c10::Device device) {
  std::vector<int> written = written_arguments(schema);
  std::vector<c10::IValue> results;
  for (size_t r = 0; r < written.size(); ++r) {
    if (written[r] >= 0) {
      results.push_back(stack[first + written[r]]);
      if (schema.arguments()[written[r]].is_out() && produced[r].isTensor()) {
        const at::Tensor& out = results.back().toTensor();
        out.resize_(produced[r].toTensor().sizes());
        out.copy_(produced[r].toTensor());
      }
      continue;
    }
    results.push_back(map_tensors(produced[r], [&](const at::Tensor& t) {
      if (!t.defined()) return t;
      at::Tensor d = empty_strided(t.sizes(), t.strides(), t.scalar_type(), std::nullopt, device,
                                   std::nullopt);
      d.copy_(t);
      return d;
    }));
  }
  return results;
}

// A new plan whose results are what the CPU kernel produced, where the Meta
// kernel said otherwise (native_batch_norm in eval mode: Meta says save_mean
// has shape [C], the CPU kernel returns it empty; native_layer_norm on
// bfloat16: Meta says mean and rstd are float32, the CPU kernel returns them
// in bfloat16).
std::shared_ptr<const Plan> checked(std::shared_ptr<const Plan> plan, const torch::jit::Stack& produced) {
  auto fixed = std::make_shared<Plan>();
  fixed->written = plan->written;
  fixed->in_place = plan->in_place;
  fixed->out = plan->out;
  fixed->out_failed = plan->out_failed;
  fixed->writer = plan->writer;
  fixed->checked = true;
  for (size_t r = 0; r < plan->results.size(); ++r) {
    if (plan->written[r] >= 0 || !produced[r].isTensor() || !plan->results[r].isTensor()) {
      fixed->results.push_back(plan->results[r]);
      continue;
    }
    const at::Tensor& meta = plan->results[r].toTensor();
    const at::Tensor& cpu = produced[r].toTensor();
    if (cpu.defined() && (cpu.is_conj() || cpu.is_neg())) {
      // The CPU kernel returns a conjugate view (linalg_lu_solve with
      // left=False), a bit its .out overload sets on the CPU view of our
      // result, where the host never sees it: every call of these arguments
      // runs as the first did, and copies the values over.
      fixed->from_data = true;
    }
    if (meta.defined() && cpu.defined() &&
        (meta.sizes() != cpu.sizes() || meta.scalar_type() != cpu.scalar_type())) {
      fixed->results.push_back(at::empty_strided(cpu.sizes(), cpu.strides(),
                                                 cpu.options().device(c10::kMeta)));
      fixed->out.reset();  // the .out overload would want the Meta shapes and dtypes
      fixed->writer = nullptr;  // and so would a writer
    } else if (meta.defined() && cpu.defined() && meta.strides() != cpu.strides()) {
      // Same shape, another layout (max_unpool2d's Meta kernel says channels
      // last where the CPU kernel writes contiguous rows, and its .out
      // overload writes rows whatever the strides): the CPU's layout.
      fixed->results.push_back(at::empty_strided(cpu.sizes(), cpu.strides(),
                                                 meta.options()));
    } else {
      fixed->results.push_back(plan->results[r]);
    }
  }
  return fixed;
}
// LITERALINCLUDE END: BORROWED_RESULTS_FROM_CPU
}  // namespace

torch::jit::Stack call_borrowed(const c10::OperatorHandle& op, torch::jit::Stack args) {
  borrowed_kernel(op, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), &args);
  return args;
}

// LITERALINCLUDE START: BORROWED_SET_WRITER
void set_writer(const char* op, Writer writer) {
  std::lock_guard<std::mutex> lock(writers_mu);
  writers()[op] = writer;
}
// LITERALINCLUDE END: BORROWED_SET_WRITER

// LITERALINCLUDE START: BORROWED_KERNEL
void borrowed_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const size_t n = schema.arguments().size();
  const size_t first = stack->size() - n;
  if (borrowing_disabled()) return cpu_fallback(op, stack);
  std::optional<c10::Device> device = check_same_device(op, *stack);
  TORCH_CHECK(device.has_value(), schema.name(), ": expected an openreg tensor argument");
  c10::DeviceGuard guard(*device);

  std::optional<MetaKey> key;
  std::shared_ptr<const Plan> plan = plan_call(op, *stack, key);
  std::vector<c10::IValue> results;
  if (plan != nullptr && (plan->checked || plan->in_place || !key ||
                          c10::openreg::getCurrentOpenRegStream().is_capturing())) {
    results = bind_results(*plan, *stack, first, *device);
    launch(op, *plan, *stack, first, results);
  } else {  // the shapes depend on the data, or a new plan is checked against the CPU kernel
    if (plan != nullptr) {
      bind_results(*plan, *stack, first, *device);  // resizes out= arguments as Meta says
    }
    torch::jit::Stack produced = run_and_wait(op, *stack, first);
    if (plan != nullptr && key.has_value()) remember(std::move(*key), checked(plan, produced));
    results = device_results(schema, produced, *stack, first, *device);
  }
  torch::jit::drop(*stack, n);
  for (auto& r : results) stack->push_back(std::move(r));
}
// LITERALINCLUDE END: BORROWED_KERNEL

}  // namespace at::native::openreg
