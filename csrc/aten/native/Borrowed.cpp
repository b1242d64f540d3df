// Borrowed.cpp: PyTorch's CPU kernels run on device memory, with shapes from the Meta kernels.
// LITERALINCLUDE START: BORROWED_BORROWED_INCLUDES
#include "Borrowed.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DeviceGuard.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "../../runtime/OpenRegFunctions.h"
#include "../../runtime/OpenRegLaunch.h"
#include "Fallback.h"
#include "Minimal.h"
// LITERALINCLUDE END: BORROWED_BORROWED_INCLUDES

namespace at::native::openreg {

namespace {
using c10::openreg::KernelTensor;

// LITERALINCLUDE START: BORROWED_PIECE
// One tensor of an argument, as the kernel sees it.
struct Piece {
  std::optional<KernelTensor> device;  // an openreg tensor, through the kernel view
  at::Tensor host;                     // a CPU tensor (a 0-dim value), or undefined

  static Piece of(const at::Tensor& t) {
    if (t.defined() && t.is_privateuseone()) return {KernelTensor(t), {}};
    return {std::nullopt, t};  // the caller cannot change it: 0-dim CPU values are fresh
  }
  at::Tensor cpu() const { return device ? device->cpu() : host; }
};
// LITERALINCLUDE END: BORROWED_PIECE

// LITERALINCLUDE START: BORROWED_ARG
// One argument of the CPU call, captured at launch.
struct Arg {
  enum class Kind { Value, Tensor, TensorList, OptionalTensorList } kind = Kind::Value;
  c10::IValue value;
  std::vector<std::optional<Piece>> pieces;

  static Arg of(const c10::IValue& v) {
    Arg a;
    if (v.isTensor()) {
      a.kind = Kind::Tensor;
      a.pieces.push_back(Piece::of(v.toTensor()));
    } else if (v.isTensorList()) {
      a.kind = Kind::TensorList;
      for (const at::Tensor& t : v.toTensorVector()) a.pieces.push_back(Piece::of(t));
    } else if (v.isOptionalTensorList()) {
      a.kind = Kind::OptionalTensorList;
      for (const std::optional<at::Tensor> t : v.toOptionalTensorList()) {
        a.pieces.push_back(t.has_value() ? std::optional<Piece>(Piece::of(*t)) : std::nullopt);
      }
    } else {
      a.value = v;
    }
    return a;
  }

  c10::IValue materialize() const {  // inside the kernel
    switch (kind) {
      case Kind::Tensor: return pieces[0]->cpu();
      case Kind::TensorList: {
        std::vector<at::Tensor> list;
        for (const auto& p : pieces) list.push_back(p->cpu());
        return list;
      }
      case Kind::OptionalTensorList: {
        c10::List<std::optional<at::Tensor>> list;
        for (const auto& p : pieces) list.push_back(p ? std::optional<at::Tensor>(p->cpu()) : std::nullopt);
        return list;
      }
      case Kind::Value: return value;
    }
    return value;
  }
};
// LITERALINCLUDE END: BORROWED_ARG

// LITERALINCLUDE START: BORROWED_TO_META
at::Tensor to_meta(const at::Tensor& t) {
  if (!t.defined() || !t.is_privateuseone()) return t;
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
}
// LITERALINCLUDE END: BORROWED_TO_META

c10::IValue to_meta(const c10::IValue& v) {
  if (v.isTensor()) return to_meta(v.toTensor());
  if (v.isTensorList()) {
    std::vector<at::Tensor> list;
    for (const at::Tensor& t : v.toTensorVector()) list.push_back(to_meta(t));
    return list;
  }
  if (v.isOptionalTensorList()) {
    c10::List<std::optional<at::Tensor>> list;
    for (const std::optional<at::Tensor> t : v.toOptionalTensorList()) {
      list.push_back(t.has_value() ? std::optional<at::Tensor>(to_meta(*t)) : std::nullopt);
    }
    return list;
  }
  return v;
}

// LITERALINCLUDE START: BORROWED_META_KEY
// ---- the Meta cache ----
// Meta kernels written in Python (relu, addmm, convolution, ...) cost 100-300
// us a call. A model repeats the same shapes every step, so the results are
// cached by operator and argument metadata: Meta runs once per distinct call.
struct MetaKey {
  std::vector<int64_t> words;
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
void encode(const at::Tensor& t, std::vector<int64_t>& w) {
  if (!t.defined()) {
    w.push_back(-1);
    return;
  }
  w.push_back(t.is_privateuseone() ? 1 : 2);
  w.push_back(static_cast<int64_t>(t.scalar_type()));
  w.push_back(t.dim());
  for (int64_t d : t.sizes()) w.push_back(d);
  for (int64_t d : t.strides()) w.push_back(d);
  if (!t.is_privateuseone()) w.push_back(t.unsafeGetTensorImpl()->is_wrapped_number());
}
// LITERALINCLUDE END: BORROWED_ENCODE

// False when an argument's kind is not understood: then no caching.
bool encode(const c10::IValue& v, std::vector<int64_t>& w) {
  if (v.isTensor()) {
    encode(v.toTensor(), w);
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
  } else if (v.isTensorList()) {
    w.push_back(-8);
    for (const at::Tensor& t : v.toTensorVector()) encode(t, w);
    w.push_back(-9);
  } else if (v.isOptionalTensorList()) {
    w.push_back(-10);
    for (const std::optional<at::Tensor> t : v.toOptionalTensorList()) encode(t.value_or(at::Tensor()), w);
    w.push_back(-11);
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

// LITERALINCLUDE START: BORROWED_PLAN
// What the host learned about one call: the results' metadata, and the
// operator's .out overload if it can write into results of those shapes.
struct Plan {
  std::vector<c10::IValue> results;
  std::optional<c10::OperatorHandle> out;
};
// LITERALINCLUDE END: BORROWED_PLAN

std::mutex meta_cache_mu;
// LITERALINCLUDE START: BORROWED_META_CACHE
std::unordered_map<MetaKey, Plan, MetaKeyHash>& meta_cache() {
  static auto* cache = new std::unordered_map<MetaKey, Plan, MetaKeyHash>();
  return *cache;
}
// LITERALINCLUDE END: BORROWED_META_CACHE
// LITERALINCLUDE START: BORROWED_K_META_CACHE_LIMIT
constexpr size_t kMetaCacheLimit = 8192;
// LITERALINCLUDE END: BORROWED_K_META_CACHE_LIMIT

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

// LITERALINCLUDE START: BORROWED_NO_META
// Operators without a Meta kernel: they go to the fallback.
OperatorSet& no_meta() {
  static auto* ops = new OperatorSet();
  return *ops;
}
// LITERALINCLUDE END: BORROWED_NO_META

// LITERALINCLUDE START: BORROWED_OUT_VARIANT
// The .out overload a functional operator writes into, if it has one whose
// extra arguments are exactly its returns.
std::optional<c10::OperatorHandle> out_variant(const c10::FunctionSchema& schema) {
  const std::string& overload = schema.overload_name();
  auto out = c10::Dispatcher::singleton().findOp(
      {schema.name(), overload.empty() ? "out" : overload + "_out"});
  if (!out.has_value()) return std::nullopt;
  const auto& args = out->schema().arguments();
  if (args.size() != schema.arguments().size() + schema.returns().size()) return std::nullopt;
  for (size_t i = 0; i < schema.returns().size(); ++i) {
    const auto& extra = args[schema.arguments().size() + i];
    if (extra.alias_info() == nullptr || !extra.alias_info()->isWrite() ||
        extra.type()->kind() != schema.returns()[i].type()->kind()) {
      return std::nullopt;
    }
  }
  return out;
}
// LITERALINCLUDE END: BORROWED_OUT_VARIANT

// LITERALINCLUDE START: BORROWED_OUT_UNUSABLE
// Operators whose .out overload turned out, when run, to need outputs of other
// shapes than the functional results.
OperatorSet& out_unusable() {
  static auto* ops = new OperatorSet();
  return *ops;
}
// LITERALINCLUDE END: BORROWED_OUT_UNUSABLE

// Collects warnings, to re-emit them only if the attempt that raised them stands.
struct WarningBuffer final : c10::WarningHandler {
  std::vector<c10::Warning> warnings;
  void process(const c10::Warning& warning) override { warnings.push_back(warning); }
};

// LITERALINCLUDE START: BORROWED_OUT_FITS
// Whether `out` writes results of the functional shapes. Some do not: with a
// reduction, mse_loss.out is elementwise. Checked on Meta tensors with empty
// outputs, which the overload resizes (silently) to what it would write.
bool out_fits(const c10::OperatorHandle& out, const torch::jit::Stack& args,
              const std::vector<c10::IValue>& results) {
  torch::jit::Stack trial;
  for (const auto& a : args) trial.push_back(to_meta(a));
  std::vector<c10::IValue> outs;
  for (const auto& r : results) {
    if (r.isTensor()) {
      if (!r.toTensor().defined()) return false;  // an output not asked for: no .out form
      outs.push_back(at::empty({0}, r.toTensor().options()));
    } else {
      std::vector<at::Tensor> list;
      for (const at::Tensor& t : r.toTensorVector()) list.push_back(at::empty({0}, t.options()));
      outs.push_back(list);
    }
  }
  trial.insert(trial.end(), outs.begin(), outs.end());
  try {
    out.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &trial);
  } catch (const c10::Error&) {
    return false;
  }
  for (size_t r = 0; r < results.size(); ++r) {
    if (results[r].isTensor()) {
      if (outs[r].toTensor().sizes() != results[r].toTensor().sizes()) return false;
    } else {
      auto want = results[r].toTensorVector();
      auto got = outs[r].toTensorVector();
      for (size_t i = 0; i < want.size(); ++i) {
        if (got[i].sizes() != want[i].sizes()) return false;
      }
    }
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

// LITERALINCLUDE START: BORROWED_ALLOCATE_LIKE
at::Tensor allocate_like(const at::Tensor& meta, c10::Device device) {
  return at::empty_strided(meta.sizes(), meta.strides(), meta.options().device(device));
}
// LITERALINCLUDE END: BORROWED_ALLOCATE_LIKE
}  // namespace

// LITERALINCLUDE START: BORROWED_KERNEL
void borrowed_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const size_t n = schema.arguments().size();
  const size_t first = stack->size() - n;
  if (borrowing_disabled()) return cpu_fallback(op, stack);
  std::optional<c10::Device> device = check_same_device(op, *stack);
  TORCH_CHECK(device.has_value(), schema.name(), ": expected an openreg tensor argument");
  c10::DeviceGuard guard(*device);

  // 1. The Meta kernel computes the results' shapes, strides and dtypes on
  //    the host, and performs the operator's argument checks. Its results
  //    are cached by the arguments' metadata.
  MetaKey key;
  key.words.push_back(reinterpret_cast<int64_t>(&schema));
  bool cacheable = true;
  for (size_t i = first; i < stack->size() && cacheable; ++i) cacheable = encode((*stack)[i], key.words);
  Plan plan;
  bool cached = false;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(meta_cache_mu);
    auto hit = meta_cache().find(key);
    if (hit != meta_cache().end()) {
      plan = hit->second;
      cached = true;
    }
  }
  if (!cached && no_meta().contains(op)) return cpu_fallback(op, stack);
  if (!cached) try {
    torch::jit::Stack args(stack->begin() + first, stack->end());
    for (const auto& a : args) plan.results.push_back(to_meta(a));
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &plan.results);
    if (auto out = out_variant(schema); out && out_fits(*out, args, plan.results)) plan.out = out;
    if (cacheable) {
      std::lock_guard<std::mutex> lock(meta_cache_mu);
      if (meta_cache().size() >= kMetaCacheLimit) meta_cache().clear();
      meta_cache().emplace(std::move(key), plan);
    }
  } catch (const c10::NotImplementedError&) {
    no_meta().insert(op);
  } catch (const c10::Error&) {
    throw;  // the operator's own argument check: the user sees its message
  } catch (const std::exception&) {
    // A Python Meta kernel raised: the output shape depends on the data
    // (indexing with a mask), or the arguments are wrong. The fallback runs
    // it on the CPU, which computes it or raises the operator's own error.
    return cpu_fallback(op, stack);
  }
  if (!cached && no_meta().contains(op)) return cpu_fallback(op, stack);

  // 2. Results: in-place and out= results are their arguments (resized as
  //    the Meta kernel resized them); new results are allocated on the device.
  std::vector<c10::IValue> results;
  bool all_written_in_place = true;
  for (size_t r = 0; r < schema.returns().size(); ++r) {
    const auto* alias = schema.returns()[r].alias_info();
    if (alias != nullptr && alias->isWrite()) {
      for (size_t a = 0; a < n; ++a) {
        const auto* arg_alias = schema.arguments()[a].alias_info();
        if (arg_alias == nullptr || *arg_alias != *alias) continue;
        results.push_back((*stack)[first + a]);
        if (results.back().isTensor() && plan.results[r].isTensor() &&
            results.back().toTensor().sizes() != plan.results[r].toTensor().sizes()) {
          results.back().toTensor().resize_(plan.results[r].toTensor().sizes());
        }
        break;
      }
      continue;
    }
    all_written_in_place = false;
    if (plan.results[r].isTensor()) {
      const at::Tensor& meta = plan.results[r].toTensor();  // undefined: an output not asked for
      results.push_back(meta.defined() ? allocate_like(meta, *device) : at::Tensor());
    } else {
      std::vector<at::Tensor> list;
      for (const at::Tensor& t : plan.results[r].toTensorVector()) list.push_back(allocate_like(t, *device));
      results.push_back(list);
    }
  }

  // 3. The kernel: the operator itself when it writes in place, else its .out
  //    overload writing into the new results, else the functional operator and
  //    a copy into them.
  std::vector<Arg> args;
  for (size_t i = first; i < stack->size(); ++i) args.push_back(Arg::of((*stack)[i]));
  std::vector<Arg> results_seen;
  for (const auto& r : results) results_seen.push_back(Arg::of(r));
  bool all_defined = std::all_of(results.begin(), results.end(), [](const c10::IValue& r) {
    return !r.isTensor() || r.toTensor().defined();
  });
  std::optional<c10::OperatorHandle> out;
  if (!all_written_in_place && plan.out && all_defined && !out_unusable().contains(op)) out = plan.out;
  c10::openreg::launch_kernel([op, out, args = std::move(args), results = std::move(results_seen),
                               in_place = all_written_in_place] {
    torch::jit::Stack cpu;
    for (const Arg& a : args) cpu.push_back(a.materialize());
    if (in_place) {
      op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &cpu);
      return;
    }
    if (out.has_value()) {
      torch::jit::Stack with_outs = cpu;
      for (const Arg& r : results) with_outs.push_back(r.materialize());
      WarningBuffer buffer;
      bool fits = true;
      try {
        c10::WarningUtils::WarningHandlerGuard guard(&buffer);
        out->redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &with_outs);
      } catch (const c10::Error& e) {
        // It wanted to resize an output (mse_loss.out with a reduction does).
        // Outputs are resized before anything is written: nothing changed.
        if (std::string(e.what()).find("not resizable") == std::string::npos) throw;
        out_unusable().insert(op);
        fits = false;
      }
      if (fits) {
        for (const auto& w : buffer.warnings) c10::warn(w);
        return;
      }
    }
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &cpu);
    for (size_t r = 0; r < results.size(); ++r) {  // functional results: copy them over
      c10::IValue dst = results[r].materialize();
      if (dst.isTensor()) {
        if (dst.toTensor().defined()) dst.toTensor().copy_(cpu[r].toTensor());
      } else {
        auto src = cpu[r].toTensorVector();
        auto to = dst.toTensorVector();
        for (size_t i = 0; i < to.size(); ++i) to[i].copy_(src[i]);
      }
    }
  });

  torch::jit::drop(*stack, n);
  for (auto& r : results) stack->push_back(std::move(r));
}
// LITERALINCLUDE END: BORROWED_KERNEL

}  // namespace at::native::openreg
