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

// Pinned host copies of the device tensors of one collective, keyed by the
// device tensor they stand for. CPU tensors stand for themselves.
class StagedTensors {
 public:
  // A pinned buffer holding `device` once the comm stream reaches this point.
  void stage_in(const at::Tensor& device);
  // A pinned buffer the collective writes into; copied back by finish().
  void stage_out(const at::Tensor& device);
  // The host tensor the collective library sees in place of `device`.
  at::Tensor host(const at::Tensor& device) const;
  std::vector<at::Tensor> host(const std::vector<at::Tensor>& device) const;
  // Queues the copies of every output back to its device tensor.
  void copy_back() const;

 private:
  at::Tensor& slot(const at::Tensor& device);
  std::vector<std::pair<at::Tensor, at::Tensor>> pairs_;  // (device, host)
  std::vector<at::Tensor> outputs_;
};

// LITERALINCLUDE START: DISTRIBUTED_WORK_CLASS
class OpenRegWork : public c10d::Work {
 public:
  OpenRegWork(int rank, c10d::OpType op, std::vector<at::Tensor> outputs,
              std::shared_ptr<StagedTensors> staged, bool host_blocking);

  // Called on the comm stream's worker when the collective library failed.
  void set_error(std::exception_ptr error);
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
  void rethrow_if_failed() const;

  std::vector<at::Tensor> outputs_;
  std::shared_ptr<StagedTensors> staged_;  // alive until the work is dropped
  bool host_blocking_;                     // barrier: wait() blocks the host
  c10::Event end_{c10::DeviceType::PrivateUse1};
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  mutable std::mutex mu_;
  std::exception_ptr error_;
};
// LITERALINCLUDE END: DISTRIBUTED_WORK_CLASS

}  // namespace c10::openreg
