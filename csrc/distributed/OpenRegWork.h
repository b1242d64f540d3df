// OpenRegWork.h: the handle of one openreg collective, with CUDA/NCCL stream semantics.
#pragma once

#include <torch/csrc/distributed/c10d/Work.hpp>

#include <c10/core/Event.h>

#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include <runtime/OpenRegStream.h>

namespace c10::openreg {

// The host tensors the transport sees in place of the device tensors of one
// collective, keyed by the device tensor they stand for. CPU tensors stand for
// themselves. A device tensor is either staged (a pinned host copy, copied in
// before and out after the transport runs) or used in place (the transport
// works on the device memory itself, through the kernel view, while the comm
// stream's function runs).
class StagedTensors {
 public:
  // A pinned buffer holding `device` once the comm stream reaches this point.
  void stage_in(const at::Tensor& device);
  // A pinned buffer the collective writes into; copied back by copy_back().
  void stage_out(const at::Tensor& device);
  // No copy: inside the comm stream's function, host() is the device memory.
  void use_in_place(const at::Tensor& device);
  // On the comm stream's worker, around the transport's calls: the CPU tensors
  // on the kernel view of the in-place tensors exist only in between.
  void enter_kernel();
  void leave_kernel();
  // The host tensor the collective library sees in place of `device`.
  at::Tensor host(const at::Tensor& device) const;
  std::vector<at::Tensor> host(const std::vector<at::Tensor>& device) const;
  // Queues the copies of every staged output back to its device tensor.
  void copy_back() const;

 private:
  at::Tensor& slot(const at::Tensor& device);
  std::vector<std::pair<at::Tensor, at::Tensor>> pairs_;  // (device, pinned host copy)
  std::vector<at::Tensor> outputs_;
  std::vector<at::Tensor> in_place_;
  std::vector<std::pair<at::Tensor, at::Tensor>> views_;  // (device, kernel view), in a kernel
};

// How a work ended, shared with the functions queued on streams. Those run on
// the driver's worker threads and must never own a tensor a Python object
// refers to: dropping it there would take the GIL, which the host thread may
// hold while it synchronizes.
struct WorkStatus {
  void set_error(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mu);
    error = std::move(e);
  }
  std::exception_ptr get() const {
    std::lock_guard<std::mutex> lock(mu);
    return error;
  }
  void rethrow_if_failed() const {
    if (auto e = get()) std::rethrow_exception(e);
  }

  mutable std::mutex mu;
  std::exception_ptr error;
};

// LITERALINCLUDE START: DISTRIBUTED_WORK_CLASS
class OpenRegWork : public c10d::Work {
 public:
  OpenRegWork(int rank, c10d::OpType op, std::vector<at::Tensor> outputs,
              std::shared_ptr<StagedTensors> staged, bool host_blocking);

  // Set on the comm stream's worker when the collective library failed.
  const std::shared_ptr<WorkStatus>& status() const { return status_; }
  // Marks the end of the work on `comm`: the event every wait() waits for.
  void record_end(const OpenRegStream& comm);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override { return outputs_; }
  // The caller's current stream waits for the work; the host does not.
  void synchronize() override;
  bool wait(std::chrono::milliseconds timeout = ::kNoTimeout) override;
  void blockCurrentStream() override { synchronize(); }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  std::vector<at::Tensor> outputs_;
  std::shared_ptr<StagedTensors> staged_;  // alive until the work is dropped
  bool host_blocking_;                     // barrier: wait() blocks the host
  c10::Event end_{c10::DeviceType::PrivateUse1};
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::shared_ptr<WorkStatus> status_ = std::make_shared<WorkStatus>();
};
// LITERALINCLUDE END: DISTRIBUTED_WORK_CLASS

}  // namespace c10::openreg
