// OpenRegBackend.h: torch.distributed's backend for openreg tensors, on a host collective library.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "OpenRegWork.h"

namespace c10::openreg {

// LITERALINCLUDE START: DISTRIBUTED_BACKEND_CLASS
// Every collective: the comm stream waits for the caller's stream, copies the
// device tensors into pinned host buffers, runs the host library on them (as
// a host function on the stream), and copies the results back. The caller
// gets an OpenRegWork whose end is an event on the comm stream.
class OpenRegBackend : public c10d::Backend {
 public:
  // `transport` runs collectives on CPU tensors: torch's ProcessGroupGloo here.
  OpenRegBackend(c10::intrusive_ptr<c10d::Backend> transport, int rank, int size);
  ~OpenRegBackend() override;

  const std::string getBackendName() const override { return "orccl"; }
  bool supportsCoalescing() const override { return true; }
  // Subgroups (DeviceMesh dimensions) split this group: the transport splits
  // itself and a new OpenRegBackend stages for the part.
  bool supportsSplitting() const override { return transport_->supportsSplitting(); }
  c10::intrusive_ptr<Options> getBackendOptions() override;
  c10::intrusive_ptr<c10d::Backend> split(const c10::intrusive_ptr<c10d::Store>& store,
                                          const std::vector<int>& ranks,
                                          const c10::intrusive_ptr<Options>& opts) override;
  void startCoalescing() override;
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;
  void setTimeout(std::chrono::milliseconds timeout) override;
  void setSequenceNumberForGroup() override;
  uint64_t getSequenceNumberForGroup() override;

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_split_sizes,
                                               std::vector<int64_t>& input_split_sizes,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst_rank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src_rank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

 private:
  using Works = std::vector<c10::intrusive_ptr<c10d::Work>>;
  // What runs on the comm stream: the transport's calls on the host tensors.
  using HostCall = std::function<Works(c10d::Backend& transport, const StagedTensors& staged)>;
  struct Pending {
    HostCall call;
    std::shared_ptr<StagedTensors> staged;
    c10::intrusive_ptr<OpenRegWork> work;
    Works posted;       // point-to-point: already handed to the transport
    bool p2p = false;   // a send or receive: posted in program order
    bool send = false;  // reads its staged copy once posted
  };
  void post(std::vector<Pending>& p2p_ops, c10::DeviceIndex device);

  c10::intrusive_ptr<c10d::Work> run(c10d::OpType op, const std::vector<at::Tensor>& inputs,
                                     const std::vector<at::Tensor>& outputs, HostCall call,
                                     bool host_blocking = false, bool post_now = false);
  // A launched batch: owned here, not by the function on the stream (see WorkStatus).
  struct InFlight {
    std::vector<Pending> batch;
    std::atomic<bool> done{false};
  };
  void launch(c10::DeviceIndex device, std::vector<Pending> batch);
  OpenRegStream comm_stream(c10::DeviceIndex device);

  c10::intrusive_ptr<c10d::Backend> transport_;
  // OPENREG_STAGE_COLLECTIVES=1: collectives go through pinned copies too, as
  // on a device whose memory the transport cannot reach (benchmarks compare).
  bool stage_collectives_;
  std::mutex mu_;
  std::unordered_map<c10::DeviceIndex, OpenRegStream> comm_streams_;
  bool coalescing_ = false;
  c10::DeviceIndex coalescing_device_ = -1;
  std::vector<Pending> coalesced_;
  std::vector<std::unique_ptr<InFlight>> in_flight_;  // dropped on this thread once done
};
// LITERALINCLUDE END: DISTRIBUTED_BACKEND_CLASS

}  // namespace c10::openreg
