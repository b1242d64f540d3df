// BorrowedPlan.cpp: a borrowed call's plan: Meta shapes, cached; how the results get written.
#include "BorrowedPlan.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>

#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include "Boxed.h"
#include "LockedMap.h"

namespace at::native::openreg {

namespace {
at::Tensor to_meta(const at::Tensor& t) {
  if (!t.defined() || !t.is_privateuseone()) return t;
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
}

struct MetaKeyHash {
  size_t operator()(const MetaKey& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t w : k.words) h = (h ^ static_cast<size_t>(w)) * 1099511628211ull;
    return h;
  }
};

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
  } else if (v.isComplexDouble()) {
    c10::complex<double> c = v.toComplexDouble();
    double parts[2] = {c.real(), c.imag()};
    int64_t re, im;
    std::memcpy(&re, &parts[0], sizeof re);
    std::memcpy(&im, &parts[1], sizeof im);
    w.insert(w.end(), {-15, re, im});
  } else if (v.isGenerator()) {
    w.push_back(-16);  // which generator does not change the shapes or the checks
  } else {
    return false;  // other kinds (a list of scalars, ...): not cached
  }
  return true;
}

// How each written argument overlaps each other tensor argument. Kernels
// refuse some overlaps (an out= that is part of an input), a check the Meta
// kernel may not make, so a call whose overlaps differ from the cached
// call's is a new call, checked on the host like any other.
void encode_overlaps(const c10::FunctionSchema& schema, const torch::jit::Stack& stack,
                     size_t first, MetaKey& k) {
  const auto& args = schema.arguments();
  for (size_t a = 0; a < args.size(); ++a) {
    const auto* alias = args[a].alias_info();
    if (alias == nullptr || !alias->isWrite() || !stack[first + a].isTensor()) continue;
    const at::Tensor& written = stack[first + a].toTensor();
    if (!written.defined() || !written.has_storage()) continue;
    for (size_t b = 0; b < args.size(); ++b) {
      if (b == a) continue;
      for_each_tensor(stack[first + b], [&](const at::Tensor& t) {
        if (t.defined() && t.has_storage()) {
          k.words.push_back(static_cast<int64_t>(at::get_overlap_status(written, t)));
        }
      });
    }
  }
}

struct DroppedWarnings final : c10::WarningHandler {
  void process(const c10::Warning&) override {}
};

// A set of operators, found out once each at run time. Keyed by the address of
// the operator's schema, which the dispatcher keeps for the process's life.
using OperatorSet = LockedMap<const c10::FunctionSchema*, bool>;

// Operators whose output shapes the host cannot know before the kernel runs:
// no Meta kernel, or one that raises because the shapes depend on the data.
OperatorSet& shapes_from_data() {
  static auto* ops = new OperatorSet();
  return *ops;
}

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

// The overload a functional operator writes into, if it has one: without
// it, the kernel runs the functional operator into new host memory and copies
// the results over, a second pass over the data. PyTorch names most of them
// `out` (`<overload>_out`); gradients and some losses use `grad_input` and
// `output` (threshold_backward.grad_input, the backward of ReLU); full
// reductions `<name>_out` (all.all_out, any.all_out) or `unary_out` (max,
// min). Others have names of their own (sort.stable writes into
// sort.values_stable): when the usual names miss, every overload of the
// operator is tried. The search runs once per operator (every new plan
// asks), not once per plan.
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
  static auto* found =
      new LockedMap<const c10::FunctionSchema*, std::optional<c10::OperatorHandle>>();
  if (auto hit = found->find(&schema)) return *hit;
  std::optional<c10::OperatorHandle> out = find_out_variant(schema);
  found->set(&schema, out);
  return out;
}
// LITERALINCLUDE END: BORROWED_OUT_VARIANT

LockedMap<std::string, Writer>& writers() {
  static auto* w = new LockedMap<std::string, Writer>();
  return *w;
}

Writer writer_for(const c10::FunctionSchema& schema) {
  std::string name = schema.name().substr(schema.name().find("::") + 2);
  if (!schema.overload_name().empty()) name += "." + schema.overload_name();
  return writers().find(name).value_or(nullptr);
}

// Whether `out` writes results of the functional shapes. Some do not: with a
// reduction, mse_loss.out is elementwise. Checked on Meta tensors with empty
// outputs, which the overload resizes (silently) to what it would write.
bool out_fits(const c10::OperatorHandle& out, const torch::jit::Stack& args,
              const std::vector<c10::IValue>& results) {
  torch::jit::Stack trial;
  for (const auto& a : args)
    trial.push_back(map_tensors(a, [](const at::Tensor& t) { return to_meta(t); }));
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

// A program whose shapes never repeat would grow the cache without end: past
// this many plans, it starts over.
constexpr size_t kMetaCacheLimit = 8192;

using MetaCache = LockedMap<MetaKey, std::shared_ptr<const Plan>, MetaKeyHash>;
MetaCache& meta_cache() {
  static auto* cache = new MetaCache(kMetaCacheLimit);
  return *cache;
}
}  // namespace

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

void remember(MetaKey key, std::shared_ptr<const Plan> plan) {
  meta_cache().set(std::move(key), std::move(plan));
}

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
  if (key.has_value()) encode_overlaps(schema, stack, first, *key);
  if (key.has_value()) {
    if (auto hit = meta_cache().find(*key)) return (*hit)->from_data ? nullptr : std::move(*hit);
  }
  if (shapes_from_data().contains(&op.schema())) return nullptr;

  auto plan = std::make_shared<Plan>();
  torch::jit::Stack args(stack.begin() + first, stack.end());
  for (const auto& a : args) {
    plan->results.push_back(map_tensors(a, [](const at::Tensor& t) { return to_meta(t); }));
  }
  try {
    // The Meta kernel's warnings are dropped: the CPU kernel, which runs the
    // first call of every plan, gives the warnings that call deserves.
    DroppedWarnings dropped;
    c10::WarningUtils::WarningHandlerGuard guard(&dropped);
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &plan->results);
  } catch (const c10::NotImplementedError&) {
    shapes_from_data().set(&op.schema(), true);  // no Meta kernel
    return nullptr;
  } catch (const c10::Error&) {
    // The operator's own argument check, usually, and then the CPU kernel
    // raises it too. But a Meta kernel can refuse what the CPU kernel takes
    // (index_reduce's, on an empty source): the CPU kernel decides, before
    // the call returns. Not cached: a valid call of the same shapes is rare.
    return nullptr;
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
    if (kind != c10::TypeKind::TensorType && kind != c10::TypeKind::ListType)
      plan->from_data = true;
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
  plan->in_place =
      std::all_of(plan->written.begin(), plan->written.end(), [](int a) { return a >= 0; });
  if (auto out = out_variant(schema);
      !plan->in_place && out && out_fits(*out, args, plan->results)) {
    plan->out = out;
  }
  if (!plan->in_place) plan->writer = writer_for(schema);
  return plan;
}
// LITERALINCLUDE END: BORROWED_STEP_PLAN

void set_writer(const char* op, Writer writer) { writers().set(op, writer); }

}  // namespace at::native::openreg
