// OpenRegWork.cpp: pinned staging buffers and the Work handle of openreg collectives.
#include "OpenRegWork.h"

#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/ivalue.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/StreamGuard.h>
#include <torch/csrc/distributed/c10d/exception.h>

#include <chrono>
#include <thread>

#include <runtime/OpenRegLaunch.h>

namespace c10::openreg {

// LITERALINCLUDE START: DISTRIBUTED_SLOT
namespace {
void check_contiguous(const at::Tensor& device) {
  TORCH_CHECK(device.is_contiguous(),
              "openreg collectives need contiguous tensors, got one of sizes ", device.sizes(),
              " and strides ", device.strides());
}

bool same(const at::Tensor& a, const at::Tensor& b) {
  return a.unsafeGetTensorImpl() == b.unsafeGetTensorImpl();
}
}  // namespace

// The pinned host buffer of a device tensor, made when the collective first
// names the tensor: a tensor that is input and output (all_reduce) has one.
at::Tensor& StagedTensors::slot(const at::Tensor& device) {
  for (auto& [dev, host] : pairs_) {
    if (same(dev, device)) return host;
  }
  check_contiguous(device);
  auto options = device.options().device(c10::kCPU).pinned_memory(true);
  pairs_.emplace_back(device, at::empty(device.sizes(), options));
  return pairs_.back().second;
}
// LITERALINCLUDE END: DISTRIBUTED_SLOT

// LITERALINCLUDE START: DISTRIBUTED_IN_PLACE
void StagedTensors::use_in_place(const at::Tensor& device) {
  if (device.is_cpu()) return;
  check_contiguous(device);
  for (const auto& t : in_place_) {
    if (same(t, device)) return;  // input and output of the same collective
  }
  in_place_.push_back(device);
}

// The comm stream's function is a kernel: device memory is reachable through
// the kernel view, so the transport reads and writes the caller's tensors
// where they lie, as NCCL's kernels do on a GPU. The views are plain CPU
// tensors that own nothing, and they are dropped before the function ends.
void StagedTensors::enter_kernel() {
  for (const auto& t : in_place_) {
    auto options = t.options().device(c10::kCPU);
    at::Tensor view = t.numel() == 0
                          ? at::empty(t.sizes(), options)
                          : at::from_blob(kernel_pointer(t.data_ptr()), t.sizes(), options);
    views_.emplace_back(t, std::move(view));
  }
}

void StagedTensors::leave_kernel() { views_.clear(); }
// LITERALINCLUDE END: DISTRIBUTED_IN_PLACE

void StagedTensors::stage_in(const at::Tensor& device) {
  if (device.is_cpu()) return;
  // Queued on the current stream (the comm stream): returns at once.
  slot(device).copy_(device, /*non_blocking=*/true);
}

void StagedTensors::stage_out(const at::Tensor& device) {
  if (device.is_cpu()) return;
  slot(device);
  outputs_.push_back(device);
}

at::Tensor StagedTensors::host(const at::Tensor& device) const {
  if (device.is_cpu()) return device;
  for (const auto& list : {&views_, &pairs_}) {
    for (const auto& [dev, host] : *list) {
      if (same(dev, device)) return host;
    }
  }
  TORCH_INTERNAL_ASSERT(false, "a device tensor was neither staged nor in a running collective");
}

std::vector<at::Tensor> StagedTensors::host(const std::vector<at::Tensor>& device) const {
  std::vector<at::Tensor> out;
  out.reserve(device.size());
  for (const auto& t : device) out.push_back(host(t));
  return out;
}

// LITERALINCLUDE START: DISTRIBUTED_COPY_BACK
void StagedTensors::copy_back() const {
  // The collective writes the caller's tensor the way NCCL writes device
  // memory: below autograd. A recv into a leaf that requires grad (pipeline
  // parallelism receives its activations so) is no in-place op of the graph.
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  for (const auto& device : outputs_) {
    const_cast<at::Tensor&>(device).copy_(host(device), /*non_blocking=*/true);
  }
}
// LITERALINCLUDE END: DISTRIBUTED_COPY_BACK

namespace {
std::vector<c10::Device> devices_of(const std::vector<at::Tensor>& tensors) {
  for (const auto& t : tensors) {
    if (t.device().type() == c10::DeviceType::PrivateUse1) return {t.device()};
  }
  return {};
}
}  // namespace

OpenRegWork::OpenRegWork(int rank, c10d::OpType op, std::vector<at::Tensor> outputs,
                         std::shared_ptr<StagedTensors> staged, bool host_blocking)
    : c10d::Work(rank, op),
      outputs_(std::move(outputs)),
      staged_(std::move(staged)),
      host_blocking_(host_blocking),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::ofTensors(),
                                                       devices_of(outputs_))) {}

// LITERALINCLUDE START: DISTRIBUTED_WORK_END
void OpenRegWork::record_end(const OpenRegStream& comm) {
  end_.record(comm.unwrap());
  // Like NCCL's: the future is complete for the host now; whoever uses its
  // value (a DDP comm hook, then()) has its stream wait for the comm stream.
  c10::StreamGuard guard(comm.unwrap());
  future_->markCompleted(c10::IValue(outputs_));
}
// LITERALINCLUDE END: DISTRIBUTED_WORK_END

bool OpenRegWork::isCompleted() { return end_.query(); }

bool OpenRegWork::isSuccess() const { return status_->get() == nullptr; }

std::exception_ptr OpenRegWork::exception() const { return status_->get(); }

// LITERALINCLUDE START: DISTRIBUTED_WORK_WAIT
void OpenRegWork::synchronize() {
  c10::DeviceGuard device_guard(c10::Device(c10::DeviceType::PrivateUse1, end_.device_index()));
  auto current = getCurrentOpenRegStream();
  end_.block(current.unwrap());
  status_->rethrow_if_failed();  // already known: raise now, once
  // Otherwise a failure is known only once the collective ran: a kernel
  // queued after the wait reports it to the next synchronize of the caller's
  // stream, so nobody reads stale outputs silently.
  launch_kernel([status = status_] { status->rethrow_if_failed(); });
}

bool OpenRegWork::wait(std::chrono::milliseconds timeout) {
  if (!host_blocking_) {
    synchronize();
    return true;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!end_.query()) {
    if (timeout != ::kNoTimeout && std::chrono::steady_clock::now() > deadline) {
      C10_THROW_ERROR(DistBackendError,
                      "openreg work timed out after " + std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  status_->rethrow_if_failed();
  return true;
}
// LITERALINCLUDE END: DISTRIBUTED_WORK_WAIT

}  // namespace c10::openreg
