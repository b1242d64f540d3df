// Borrowed.cpp: the borrowed kernel: PyTorch's CPU kernels run on device memory, as planned.
#include "Borrowed.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>

#include <atomic>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "../../runtime/OpenRegFunctions.h"
#include "../../runtime/OpenRegLaunch.h"
#include "BorrowedPlan.h"
#include "Boxed.h"
#include "Fallback.h"
#include "Minimal.h"
#include "SameDevice.h"

namespace at::native::openreg {

namespace {
using c10::openreg::launch_kernel;

// Collects warnings, to re-emit them only if the attempt that raised them stands.
struct WarningBuffer final : c10::WarningHandler {
  std::vector<c10::Warning> warnings;
  void process(const c10::Warning& warning) override { warnings.push_back(warning); }
};

// OPENREG_NO_BORROWED=1 sends every borrowed operator to the CPU fallback:
// a switch for bisecting a suspected kernel, and for measuring the fallback.
bool borrowing_disabled() {
  static const bool disabled = c10::openreg::env_flag("OPENREG_NO_BORROWED");
  return disabled;
}

at::Tensor allocate_like(const at::Tensor& meta, c10::Device device) {
  if (!meta.defined()) return meta;  // an output not asked for
  return empty_strided(meta.sizes(), meta.strides(), meta.scalar_type(), std::nullopt, device,
                       std::nullopt);
}

// The ZeroTensor key's fallback gives most operators real zeros in place of a
// storage-less zero tensor, but lets a few through (dot, vdot, mul.Scalar,
// add.Scalar) for kernels that treat zeros specially. A borrowed kernel runs
// on CPU views of device memory, which such a tensor does not have: it gets
// real zeros too.
void materialize_zero_tensors(torch::jit::Stack& stack, size_t first) {
  for (size_t i = first; i < stack.size(); ++i) {
    if (stack[i].isTensor() && stack[i].toTensor().unsafeGetTensorImpl()->_is_zerotensor()) {
      const at::Tensor& zero = stack[i].toTensor();
      stack[i] = at::zeros(zero.sizes(), zero.options());
    }
  }
}

// Some CPU kernels lay out an out= argument of the right size anew (a
// padding backward makes its gradient channels-last like its input): on the
// CPU the tensor takes the new strides; here the kernel restrides only its
// CPU view of the memory. The device tensor takes the layout the CPU kernel
// gave it (`planned`, recorded on the first call), so that it reads the
// values where the kernel wrote them.
void adopt_layout(const at::Tensor& arg, const at::Tensor& planned) {
  if (!arg.defined() || !planned.defined() || arg.sizes() != planned.sizes() ||
      arg.strides() == planned.strides() || !arg.is_non_overlapping_and_dense() ||
      !planned.is_non_overlapping_and_dense()) {
    return;
  }
  arg.as_strided_(planned.sizes(), planned.strides());
}

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
      results.push_back(
          map_tensors(meta, [&](const at::Tensor& t) { return allocate_like(t, device); }));
      continue;
    }
    results.push_back(stack[first + plan.written[r]]);
    if (results.back().isTensor() && meta.isTensor()) {
      const at::Tensor& arg = results.back().toTensor();
      if (arg.sizes() != meta.toTensor().sizes()) arg.resize_(meta.toTensor().sizes());
      adopt_layout(arg, meta.toTensor());
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
      // The functional operator takes the arguments again, rebuilt: the failed
      // call consumed the stack (the boxed-to-unboxed wrapper moves some
      // arguments out, an optional tensor among them: binary_cross_entropy's
      // weight would be None on the retry, its loss silently unweighted).
      cpu.clear();
      args.append_to(cpu);
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
// are large (inline vectors of values and operands), and moving them into a
// lambda and then into the body would copy them twice more on every call.
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
// to check the Meta kernel's shapes against what the CPU kernel produces, and
// to let the CPU kernel make its own argument checks (dtypes of out=
// arguments, overlaps, ranges) before the call returns. With `sized_outs`
// the host already sized the out= arguments as planned, and the kernel
// writes them where they are, so that it sees what they overlap. The
// kernel's warnings are raised again on the host, as Python warnings; a call
// that warns sets `warned`, and its plan is not cached: every such call warns.
std::vector<c10::IValue> run_and_wait(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                      size_t first, bool sized_outs, bool& warned) {
  refuse_while_capturing(op.schema().name());
  Captured args(stack.data() + first, stack.data() + stack.size());
  std::vector<size_t> outs;  // out= arguments: the CPU kernel sizes them, the host copies them
  for (size_t a = 0; a < op.schema().arguments().size() && !sized_outs; ++a) {
    if (op.schema().arguments()[a].is_out()) outs.push_back(a);
  }
  struct Produced {
    torch::jit::Stack results;
    std::exception_ptr error;  // the operator's own error, raised on the host as it was raised
    std::vector<c10::Warning> warnings;
  };
  auto produced = std::make_shared<Produced>();
  launch_kernel([op, args = std::move(args), outs = std::move(outs), produced] {
    WarningBuffer buffer;
    c10::WarningUtils::WarningHandlerGuard guard(&buffer);
    try {
      torch::jit::Stack cpu;
      args.append_to(cpu);
      for (size_t a : outs) {
        cpu[a] =
            map_tensors(cpu[a], [](const at::Tensor& t) { return at::empty({0}, t.options()); });
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
    produced->warnings = std::move(buffer.warnings);
  });
  c10::openreg::getCurrentOpenRegStream().synchronize();
  for (const auto& w : produced->warnings) c10::warn(w);
  warned = !produced->warnings.empty();
  if (produced->error) std::rethrow_exception(produced->error);
  return std::move(produced->results);
}
// LITERALINCLUDE END: BORROWED_RUN_AND_WAIT

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
        adopt_layout(out, produced[r].toTensor());  // a resized one too: the CPU kernel's layout
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
std::shared_ptr<const Plan> corrected_plan(std::shared_ptr<const Plan> plan,
                                           const torch::jit::Stack& produced) {
  auto fixed = std::make_shared<Plan>();
  fixed->written = plan->written;
  fixed->in_place = plan->in_place;
  fixed->out = plan->out;
  fixed->out_failed = plan->out_failed;
  fixed->writer = plan->writer;
  fixed->checked = true;
  for (size_t r = 0; r < plan->results.size(); ++r) {
    if (plan->written[r] >= 0 && produced[r].isTensor() && plan->results[r].isTensor() &&
        produced[r].toTensor().defined() && plan->results[r].toTensor().defined()) {
      // A written argument: the sizes and layout the CPU kernel gave it.
      const at::Tensor& cpu = produced[r].toTensor();
      fixed->results.push_back(
          at::empty_strided(cpu.sizes(), cpu.strides(), plan->results[r].toTensor().options()));
      continue;
    }
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
      fixed->results.push_back(
          at::empty_strided(cpu.sizes(), cpu.strides(), cpu.options().device(c10::kMeta)));
      fixed->out.reset();       // the .out overload would want the Meta shapes and dtypes
      fixed->writer = nullptr;  // and so would a writer
    } else if (meta.defined() && cpu.defined() && meta.strides() != cpu.strides()) {
      // Same shape, another layout (max_unpool2d's Meta kernel says channels
      // last where the CPU kernel writes contiguous rows, and its .out
      // overload writes rows whatever the strides): the CPU's layout.
      fixed->results.push_back(at::empty_strided(cpu.sizes(), cpu.strides(), meta.options()));
    } else {
      fixed->results.push_back(plan->results[r]);
    }
  }
  return fixed;
}
// LITERALINCLUDE START: BORROWED_CHECK_AND_RUN
// The first call of a plan, or a call without one: the CPU kernel runs
// before the call returns, so that its argument checks raise here. Written
// arguments are first shown to the kernel as the caller passed them: the
// kernel decides whether they need resizing (a Meta kernel written in Python
// resizes a 2x3 out= of arange(6) to 6 elements, where the CPU kernel keeps
// it, strides and all) and checks overlaps against the memory as it is (an
// out= that is part of an input). Wanting other sizes, it raises "not resizable"
// before writing anything: the kernel then sizes new results itself, as the
// CPU resizes an out= argument, in the layout it chooses (exp(x, out=empty(0))
// of a transposed x is transposed), and the host gives the out= arguments
// those sizes and that layout (device_results).
torch::jit::Stack check_and_run(const c10::OperatorHandle& op, const Plan* plan,
                                const torch::jit::Stack& stack, size_t first, bool& warned) {
  if (plan != nullptr) {
    try {
      return run_and_wait(op, stack, first, true, warned);
    } catch (const c10::Error& e) {
      if (std::string(e.what()).find("not resizable") == std::string::npos) throw;
    }
  }
  return run_and_wait(op, stack, first, false, warned);
}
// LITERALINCLUDE END: BORROWED_CHECK_AND_RUN
}  // namespace

torch::jit::Stack call_borrowed(const c10::OperatorHandle& op, torch::jit::Stack args) {
  borrowed_kernel(op, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), &args);
  return args;
}

void refuse_while_capturing(std::string_view op) {
  TORCH_CHECK(!c10::openreg::getCurrentOpenRegStream().is_capturing(), op,
              " has outputs whose shapes depend on the data: it synchronizes with the device, "
              "which a stream being captured into a graph cannot do");
}

// LITERALINCLUDE START: BORROWED_KERNEL
void borrowed_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const size_t n = schema.arguments().size();
  const size_t first = stack->size() - n;
  if (borrowing_disabled()) return cpu_fallback(op, stack);
  std::optional<c10::Device> device = check_same_device(op, *stack);
  TORCH_CHECK(device.has_value(), schema.name(), ": expected an openreg tensor argument");
  c10::DeviceGuard guard(*device);
  materialize_zero_tensors(*stack, first);

  std::optional<MetaKey> key;
  std::shared_ptr<const Plan> plan = plan_call(op, *stack, key);
  std::vector<c10::IValue> results;
  if (plan != nullptr &&
      (plan->checked || !key || c10::openreg::getCurrentOpenRegStream().is_capturing())) {
    results = bind_results(*plan, *stack, first, *device);
    launch(op, *plan, *stack, first, results);
  } else {  // the shapes depend on the data, or a new plan is checked against the CPU kernel
    bool warned = false;
    torch::jit::Stack produced = check_and_run(op, plan.get(), *stack, first, warned);
    if (plan != nullptr && key.has_value() && !warned)
      remember(std::move(*key), corrected_plan(plan, produced));
    results = device_results(schema, produced, *stack, first, *device);
  }
  torch::jit::drop(*stack, n);
  for (auto& r : results) stack->push_back(std::move(r));
}
// LITERALINCLUDE END: BORROWED_KERNEL

}  // namespace at::native::openreg
