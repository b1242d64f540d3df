// BorrowedPlan.h: what the host knows about a borrowed call before launching it, cached by metadata.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/SmallVector.h>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "Borrowed.h"

namespace at::native::openreg {

// ---- the Meta cache ----
// Meta kernels written in Python (relu, addmm, convolution, ...) cost far
// more than the kernel they plan when tensors are small. A model repeats the
// same shapes every step, so the plans are cached by operator and argument
// metadata: Meta runs once per distinct call.
struct MetaKey {
  c10::SmallVector<int64_t, 48> words;
  bool operator==(const MetaKey& o) const { return words == o.words; }
};

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
  Writer writer = nullptr;  // fills the new results directly, if set (set_writer)
  bool checked = false;     // the shapes were compared with the CPU kernel's
  bool from_data = false;   // no plan: the shapes depend on the data, or the
                            // CPU kernel returns a conjugate or negative view
};
// LITERALINCLUDE END: BORROWED_PLAN_TYPE

// Step 1 of the borrowed kernel (BORROWED_STEP_PLAN): the plan for a call of
// `op` with the arguments on top of `stack`. `key` is set to the call's cache
// key, or left empty when an argument cannot be encoded in one.
std::shared_ptr<const Plan> plan_call(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                      std::optional<MetaKey>& key);

// Caches `plan` for calls whose arguments have the metadata `key` encodes.
void remember(MetaKey key, std::shared_ptr<const Plan> plan);

std::vector<int> written_arguments(const c10::FunctionSchema& schema);

}  // namespace at::native::openreg
