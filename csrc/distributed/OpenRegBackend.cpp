// OpenRegBackend.cpp: openreg collectives, staged through pinned host memory for the transport.
#include "OpenRegBackend.h"

#include <algorithm>

#include <ATen/ops/empty.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/tensor.h>
#include <c10/core/StreamGuard.h>
#include <c10/util/irange.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/exception.h>

#include <runtime/OpenRegFunctions.h>
#include <runtime/OpenRegLaunch.h>

namespace c10::openreg {

namespace {

bool on_device(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

std::vector<at::Tensor> flatten(const std::vector<std::vector<at::Tensor>>& lists) {
  std::vector<at::Tensor> out;
  for (const auto& list : lists) out.insert(out.end(), list.begin(), list.end());
  return out;
}

std::vector<std::vector<at::Tensor>> host_lists(const StagedTensors& staged,
                                                const std::vector<std::vector<at::Tensor>>& lists) {
  std::vector<std::vector<at::Tensor>> out;
  for (const auto& list : lists) out.push_back(staged.host(list));
  return out;
}

// LITERALINCLUDE START: DISTRIBUTED_CHECK_PEERS
// Ranks that disagree on a tensor's dtype or size would make the transport
// hang or mix bytes; one small all-gather of (dtype, numel) per collective
// turns that into an error naming both ranks.
void check_same_tensor(c10d::Backend& transport, const char* op, const at::Tensor& t) {
  at::Tensor mine = at::tensor({static_cast<int64_t>(t.scalar_type()), t.numel()}, at::kLong);
  at::Tensor all = at::empty({transport.getSize() * 2}, at::kLong);
  transport._allgather_base(all, mine)->wait();
  auto* v = all.const_data_ptr<int64_t>();
  for (const auto r : c10::irange(transport.getSize())) {
    auto dtype = static_cast<c10::ScalarType>(v[2 * r]);
    if (dtype != t.scalar_type() || v[2 * r + 1] != t.numel()) {
      C10_THROW_ERROR(
          DistBackendError,
          c10::str(op, ": rank ", r, " passed ", v[2 * r + 1], " elements of ", dtype, " but rank ",
                   transport.getRank(), " passed ", t.numel(), " elements of ", t.scalar_type(),
                   "; every rank must pass the same shape and dtype"));
    }
  }
}
// LITERALINCLUDE END: DISTRIBUTED_CHECK_PEERS

// ReduceOp::PREMUL_SUM: the inputs are scaled, then the transport sums. A
// collective whose inputs are its outputs (all_reduce, reduce) scales them in
// place; reduce_scatter scales copies (`keep_inputs`): its inputs may be the
// caller's device memory, which a collective only reads.
c10d::ReduceOp host_reduce_op(const c10d::ReduceOp& op, std::vector<at::Tensor>& host,
                              bool keep_inputs = false) {
  if (op != c10d::ReduceOp::PREMUL_SUM) return op;
  auto* factor = dynamic_cast<c10d::PreMulSumSupplement*>(op.supplement_.get());
  TORCH_CHECK(factor != nullptr, "PREMUL_SUM without a factor");
  for (auto& t : host) {
    at::Tensor scale = factor->tensor_factor.defined() ? factor->tensor_factor.to(c10::kCPU)
                                                       : at::scalar_tensor(factor->double_factor);
    if (keep_inputs) {
      t = t.mul(scale);
    } else {
      t.mul_(scale);
    }
  }
  return c10d::ReduceOp(c10d::ReduceOp::SUM);
}

}  // namespace

OpenRegBackend::OpenRegBackend(c10::intrusive_ptr<c10d::Backend> transport, int rank, int size)
    : c10d::Backend(rank, size),
      transport_(std::move(transport)),
      stage_collectives_(env_flag("OPENREG_STAGE_COLLECTIVES")) {
  TORCH_CHECK(transport_, "OpenRegBackend needs a transport backend");
  TORCH_CHECK(transport_->getRank() == rank && transport_->getSize() == size,
              "the transport is rank ", transport_->getRank(), " of ", transport_->getSize(),
              ", not rank ", rank, " of ", size);
}

OpenRegBackend::~OpenRegBackend() {
  // The functions on the comm streams refer to in_flight_: let them finish.
  for (auto& [device, stream] : comm_streams_) {
    try {
      stream.synchronize();
    } catch (...) {
      // A failed collective was reported to its waiters; nothing to do here.
    }
  }
}

OpenRegStream OpenRegBackend::comm_stream(c10::DeviceIndex device) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = comm_streams_.find(device);
  if (it == comm_streams_.end()) {
    // A high-priority pool stream, as ProcessGroupNCCL takes for its kernels.
    it = comm_streams_.emplace(device, getStreamFromPool(/*priority=*/-1, device)).first;
  }
  return it->second;
}

// LITERALINCLUDE START: DISTRIBUTED_RUN
c10::intrusive_ptr<c10d::Work> OpenRegBackend::run(c10d::OpType op,
                                                   const std::vector<at::Tensor>& inputs,
                                                   const std::vector<at::Tensor>& outputs,
                                                   HostCall call, bool host_blocking,
                                                   bool post_now) {
  c10::DeviceIndex device = -1;
  for (const auto* list : {&inputs, &outputs}) {
    for (const auto& t : *list) {
      TORCH_CHECK(on_device(t) || t.is_cpu(),
                  "the orccl backend takes openreg or CPU tensors, got ", t.device());
      if (!on_device(t)) continue;
      TORCH_CHECK(device < 0 || device == t.device().index(),
                  "tensors of one collective must be on one openreg device, got openreg:", device,
                  " and ", t.device());
      device = t.device().index();
    }
  }
  if (device < 0) device = getCurrentOpenRegStream().device_index();

  // The comm stream starts after the work already queued on the caller's stream.
  OpenRegStream comm = comm_stream(device);
  c10::Event ready(c10::DeviceType::PrivateUse1);
  ready.record(getCurrentOpenRegStream(device).unwrap());
  ready.block(comm.unwrap());

  c10::StreamGuard guard(comm.unwrap());
  // A collective runs inside the comm stream's function and uses the device
  // tensors in place. A send or receive is handed to the transport from this
  // thread, outside any kernel, so it goes through pinned copies.
  bool in_place = !post_now && !stage_collectives_;
  auto staged = std::make_shared<StagedTensors>();
  for (const auto& t : inputs) {
    if (on_device(t)) t.record_stream(comm.unwrap());  // not reused before the comm stream is done
    in_place ? staged->use_in_place(t) : staged->stage_in(t);
  }
  for (const auto& t : outputs) {
    if (on_device(t)) t.record_stream(comm.unwrap());
    in_place ? staged->use_in_place(t) : staged->stage_out(t);
  }
  auto work = c10::make_intrusive<OpenRegWork>(rank_, op, outputs, staged, host_blocking);
  Pending pending{std::move(call), staged, work, {}, post_now, post_now && !inputs.empty()};
  if (post_now && !coalescing_) {
    // Point-to-point: handed to the transport now, from this thread, so that
    // a receive is posted even while the comm stream waits for a send (the
    // usual isend-then-irecv between two ranks). Only the wait goes on the stream.
    std::vector<Pending> one;
    one.push_back(std::move(pending));
    post(one, device);
    pending = std::move(one.front());
  }
  if (coalescing_) {  // queued until endCoalescing() launches the batch as one
    TORCH_CHECK(coalescing_device_ < 0 || coalescing_device_ == device,
                "a coalesced batch must stay on one openreg device");
    coalescing_device_ = device;
    coalesced_.push_back(std::move(pending));
    return work;
  }
  std::vector<Pending> batch;
  batch.push_back(std::move(pending));
  launch(device, std::move(batch));
  return work;
}
// LITERALINCLUDE END: DISTRIBUTED_RUN

// LITERALINCLUDE START: DISTRIBUTED_POST
void OpenRegBackend::post(std::vector<Pending>& p2p_ops, c10::DeviceIndex device) {
  // The transport matches a receive to the messages of its peer and tag in
  // the order receives were posted. Posted in program order, here, they keep
  // the pairing of the caller (pipeline schedules send one tag's microbatches
  // back to back); posted later by the comm stream, a batch behind it could
  // take the message meant for a receive issued after it.
  if (std::any_of(p2p_ops.begin(), p2p_ops.end(), [](const auto& p) { return p.send; })) {
    c10::Event copied(c10::DeviceType::PrivateUse1);  // sends read their staged copies
    copied.record(comm_stream(device).unwrap());
    copied.synchronize();
  }
  for (auto& p : p2p_ops) p.posted = p.call(*transport_, *p.staged);
}
// LITERALINCLUDE END: DISTRIBUTED_POST

// LITERALINCLUDE START: DISTRIBUTED_LAUNCH
void OpenRegBackend::launch(c10::DeviceIndex device, std::vector<Pending> batch) {
  // Batches that finished are dropped here, on the caller's thread.
  std::erase_if(in_flight_, [](const auto& f) { return f->done.load(); });
  OpenRegStream comm = comm_stream(device);
  c10::StreamGuard guard(comm.unwrap());
  auto* flight = in_flight_.emplace_back(std::make_unique<InFlight>()).get();
  flight->batch = std::move(batch);
  // A host function on the comm stream: it runs once the staging copies are
  // done and holds the stream until the transport finished. This body is the
  // part a vendor replaces by a launch of its own collective kernels.
  launch_kernel([transport = transport_.get(), flight] {
    for (const auto& p : flight->batch) p.staged->enter_kernel();
    try {
      Works works;
      for (const auto& p : flight->batch) {  // start them all, then wait: batched p2p
        for (auto& w : p.posted.empty() ? p.call(*transport, *p.staged) : p.posted) {
          works.push_back(std::move(w));
        }
      }
      for (auto& w : works) w->wait();
    } catch (...) {
      for (const auto& p : flight->batch) p.work->status()->set_error(std::current_exception());
    }
    for (const auto& p : flight->batch) p.staged->leave_kernel();
    flight->done = true;
  });
  for (const auto& p : flight->batch) p.staged->copy_back();
  for (const auto& p : flight->batch) p.work->record_end(comm);
}
// LITERALINCLUDE END: DISTRIBUTED_LAUNCH

void OpenRegBackend::startCoalescing() {
  TORCH_CHECK(!coalescing_, "startCoalescing called twice without endCoalescing");
  coalescing_ = true;
  coalescing_device_ = -1;
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::endCoalescing() {
  TORCH_CHECK(coalescing_, "endCoalescing without startCoalescing");
  coalescing_ = false;
  auto batch = std::move(coalesced_);
  coalesced_.clear();
  c10::DeviceIndex device =
      coalescing_device_ >= 0 ? coalescing_device_ : getCurrentOpenRegStream().device_index();
  // batch_isend_irecv: posted now, like the sends and receives outside a batch.
  if (!batch.empty() &&
      std::all_of(batch.begin(), batch.end(), [](const auto& p) { return p.p2p; })) {
    post(batch, device);
  }
  // The batch's work ends where its last operation ends: they share one launch.
  std::vector<at::Tensor> outputs;
  for (const auto& p : batch) {
    auto r = p.work->result();
    outputs.insert(outputs.end(), r.begin(), r.end());
  }
  auto work = c10::make_intrusive<OpenRegWork>(rank_, c10d::OpType::COALESCED, outputs, nullptr,
                                               /*host_blocking=*/false);
  batch.push_back(Pending{[](c10d::Backend&, const StagedTensors&) { return Works{}; },
                          std::make_shared<StagedTensors>(),
                          work,
                          {}});
  launch(device, std::move(batch));
  return work;
}

// LITERALINCLUDE START: DISTRIBUTED_BACKEND_SPLIT
// ProcessGroup::splitGroup hands every backend of the group the same options,
// taken from the parent: the transport's, so Gloo's own split reads its kind.
c10::intrusive_ptr<c10d::Backend::Options> OpenRegBackend::getBackendOptions() {
  return transport_->getBackendOptions();
}

c10::intrusive_ptr<c10d::Backend> OpenRegBackend::split(
    const c10::intrusive_ptr<c10d::Store>& store, const std::vector<int>& ranks,
    const c10::intrusive_ptr<Options>& opts) {
  // The subgroup's store is shared with the group's CPU backend (Gloo, which
  // splits too): the transport keeps to its own keys, as in _create_backend.
  auto transport_store = c10::make_intrusive<c10d::PrefixStore>("transport/", store);
  auto transport = transport_->split(transport_store, ranks, opts);
  if (!transport) return nullptr;  // this rank is in none of the subgroups
  return c10::make_intrusive<OpenRegBackend>(transport, transport->getRank(), transport->getSize());
}
// LITERALINCLUDE END: DISTRIBUTED_BACKEND_SPLIT

void OpenRegBackend::setTimeout(std::chrono::milliseconds timeout) {
  transport_->setTimeout(timeout);
}

void OpenRegBackend::setSequenceNumberForGroup() { transport_->setSequenceNumberForGroup(); }

uint64_t OpenRegBackend::getSequenceNumberForGroup() {
  return transport_->getSequenceNumberForGroup();
}

// LITERALINCLUDE START: DISTRIBUTED_ALLREDUCE
c10::intrusive_ptr<c10d::Work> OpenRegBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                         const c10d::AllreduceOptions& opts) {
  return run(c10d::OpType::ALLREDUCE, tensors, tensors,
             [tensors, opts](c10d::Backend& transport, const StagedTensors& staged) {
               auto host = staged.host(tensors);
               for (const auto& t : host) check_same_tensor(transport, "all_reduce", t);
               c10d::AllreduceOptions host_opts = opts;
               host_opts.reduceOp = host_reduce_op(opts.reduceOp, host);
               return Works{transport.allreduce(host, host_opts)};
             });
}
// LITERALINCLUDE END: DISTRIBUTED_ALLREDUCE

c10::intrusive_ptr<c10d::Work> OpenRegBackend::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  return run(c10d::OpType::ALLREDUCE_COALESCED, tensors, tensors,
             [tensors, opts](c10d::Backend& transport, const StagedTensors& staged) {
               Works works;
               for (const auto& t : staged.host(tensors)) {  // any mix of dtypes
                 std::vector<at::Tensor> one{t};
                 c10d::AllreduceOptions host_opts;
                 host_opts.reduceOp = host_reduce_op(opts.reduceOp, one);
                 host_opts.timeout = opts.timeout;
                 works.push_back(transport.allreduce(one, host_opts));
               }
               return works;
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                         const c10d::BroadcastOptions& opts) {
  return run(c10d::OpType::BROADCAST, tensors, tensors,
             [tensors, opts](c10d::Backend& transport, const StagedTensors& staged) {
               auto host = staged.host(tensors);
               for (const auto& t : host) check_same_tensor(transport, "broadcast", t);
               return Works{transport.broadcast(host, opts)};
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::reduce(std::vector<at::Tensor>& tensors,
                                                      const c10d::ReduceOptions& opts) {
  return run(c10d::OpType::REDUCE, tensors, tensors,
             [tensors, opts](c10d::Backend& transport, const StagedTensors& staged) {
               auto host = staged.host(tensors);
               for (const auto& t : host) check_same_tensor(transport, "reduce", t);
               c10d::ReduceOptions host_opts = opts;
               host_opts.reduceOp = host_reduce_op(opts.reduceOp, host);
               return Works{transport.reduce(host, host_opts)};
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  return run(c10d::OpType::ALLGATHER, inputs, flatten(outputs),
             [outputs, inputs, opts](c10d::Backend& transport, const StagedTensors& staged) {
               auto host_in = staged.host(inputs);
               for (const auto& t : host_in) check_same_tensor(transport, "all_gather", t);
               auto host_out = host_lists(staged, outputs);
               return Works{transport.allgather(host_out, host_in, opts)};
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::_allgather_base(at::Tensor& output,
                                                               at::Tensor& input,
                                                               const c10d::AllgatherOptions& opts) {
  return run(c10d::OpType::_ALLGATHER_BASE, {input}, {output},
             [output, input, opts](c10d::Backend& transport, const StagedTensors& staged) {
               at::Tensor in = staged.host(input), out = staged.host(output);
               check_same_tensor(transport, "all_gather_into_tensor", in);
               return Works{transport._allgather_base(out, in, opts)};
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  return run(c10d::OpType::ALLGATHER_COALESCED, inputs, flatten(outputs),
             [outputs, inputs, opts](c10d::Backend& transport, const StagedTensors& staged) {
               auto host_in = staged.host(inputs);
               auto host_out = host_lists(staged, outputs);
               return Works{transport.allgather_coalesced(host_out, host_in, opts)};
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  return run(c10d::OpType::COALESCED, inputs, outputs,
             [outputs, inputs, opts](c10d::Backend& transport, const StagedTensors& staged) {
               Works works;
               for (const auto i : c10::irange(inputs.size())) {
                 at::Tensor in = staged.host(inputs[i]), out = staged.host(outputs[i]);
                 works.push_back(transport._allgather_base(out, in, opts));
               }
               return works;
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                      std::vector<at::Tensor>& inputs,
                                                      const c10d::GatherOptions& opts) {
  return run(c10d::OpType::GATHER, inputs, flatten(outputs),
             [outputs, inputs, opts](c10d::Backend& transport, const StagedTensors& staged) {
               auto host_in = staged.host(inputs);
               auto host_out = host_lists(staged, outputs);
               return Works{transport.gather(host_out, host_in, opts)};
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::scatter(std::vector<at::Tensor>& outputs,
                                                       std::vector<std::vector<at::Tensor>>& inputs,
                                                       const c10d::ScatterOptions& opts) {
  return run(c10d::OpType::SCATTER, flatten(inputs), outputs,
             [outputs, inputs, opts](c10d::Backend& transport, const StagedTensors& staged) {
               auto host_out = staged.host(outputs);
               auto host_in = host_lists(staged, inputs);
               return Works{transport.scatter(host_out, host_in, opts)};
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  return run(c10d::OpType::REDUCE_SCATTER, flatten(inputs), outputs,
             [outputs, inputs, opts](c10d::Backend& transport, const StagedTensors& staged) {
               auto host_out = staged.host(outputs);
               for (const auto& t : host_out) check_same_tensor(transport, "reduce_scatter", t);
               auto host_in = host_lists(staged, inputs);
               c10d::ReduceScatterOptions host_opts = opts;
               for (auto& list : host_in) {
                 host_opts.reduceOp = host_reduce_op(opts.reduceOp, list, /*keep_inputs=*/true);
               }
               return Works{transport.reduce_scatter(host_out, host_in, host_opts)};
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  return run(c10d::OpType::_REDUCE_SCATTER_BASE, {input}, {output},
             [output, input, opts](c10d::Backend& transport, const StagedTensors& staged) {
               at::Tensor out = staged.host(output);
               std::vector<at::Tensor> in{staged.host(input)};
               check_same_tensor(transport, "reduce_scatter_tensor", out);
               c10d::ReduceScatterOptions host_opts = opts;
               host_opts.reduceOp = host_reduce_op(opts.reduceOp, in, /*keep_inputs=*/true);
               return Works{transport._reduce_scatter_base(out, in[0], host_opts)};
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  return run(c10d::OpType::COALESCED, inputs, outputs,
             [outputs, inputs, opts](c10d::Backend& transport, const StagedTensors& staged) {
               Works works;
               for (const auto i : c10::irange(inputs.size())) {
                 at::Tensor out = staged.host(outputs[i]);
                 std::vector<at::Tensor> in{staged.host(inputs[i])};
                 c10d::ReduceScatterOptions host_opts = opts;
                 host_opts.reduceOp = host_reduce_op(opts.reduceOp, in, /*keep_inputs=*/true);
                 works.push_back(transport._reduce_scatter_base(out, in[0], host_opts));
               }
               return works;
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_split_sizes,
    std::vector<int64_t>& input_split_sizes, const c10d::AllToAllOptions& opts) {
  return run(c10d::OpType::ALLTOALL_BASE, {input}, {output},
             [output, input, output_split_sizes, input_split_sizes, opts](
                 c10d::Backend& transport, const StagedTensors& staged) {
               at::Tensor out = staged.host(output), in = staged.host(input);
               auto out_splits = output_split_sizes;
               auto in_splits = input_split_sizes;
               return Works{transport.alltoall_base(out, in, out_splits, in_splits, opts)};
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::alltoall(std::vector<at::Tensor>& outputs,
                                                        std::vector<at::Tensor>& inputs,
                                                        const c10d::AllToAllOptions& opts) {
  return run(c10d::OpType::ALLTOALL, inputs, outputs,
             [outputs, inputs, opts](c10d::Backend& transport, const StagedTensors& staged) {
               auto host_out = staged.host(outputs);
               auto host_in = staged.host(inputs);
               return Works{transport.alltoall(host_out, host_in, opts)};
             });
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::send(std::vector<at::Tensor>& tensors, int dst_rank,
                                                    int tag) {
  return run(
      c10d::OpType::SEND, tensors, {},
      [tensors, dst_rank, tag](c10d::Backend& transport, const StagedTensors& staged) {
        auto host = staged.host(tensors);
        return Works{transport.send(host, dst_rank, tag)};
      },
      /*host_blocking=*/false, /*post_now=*/true);
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::recv(std::vector<at::Tensor>& tensors, int src_rank,
                                                    int tag) {
  return run(
      c10d::OpType::RECV, {}, tensors,
      [tensors, src_rank, tag](c10d::Backend& transport, const StagedTensors& staged) {
        auto host = staged.host(tensors);
        return Works{transport.recv(host, src_rank, tag)};
      },
      /*host_blocking=*/false, /*post_now=*/true);
}

c10::intrusive_ptr<c10d::Work> OpenRegBackend::barrier(const c10d::BarrierOptions& opts) {
  // The only host-blocking work: dist.barrier() returns once every rank got here.
  return run(
      c10d::OpType::BARRIER, {}, {},
      [opts](c10d::Backend& transport, const StagedTensors&) {
        return Works{transport.barrier(opts)};
      },
      /*host_blocking=*/true);
}

}  // namespace c10::openreg
