// graph.cpp: graphs, work captured from a stream instead of run, then replayed as one task.
#include "internal.h"

using namespace openreg;

namespace {
// LITERALINCLUDE START: DRIVER_RUN_GRAPH
void run_graph(void* p) {
  for (const Task& node : static_cast<orGraph_t>(p)->nodes) {
    Task task = node;  // each replay gets its own copy of copied arguments
    run_task(task);
  }
}
// LITERALINCLUDE END: DRIVER_RUN_GRAPH
}  // namespace

extern "C" {

// LITERALINCLUDE START: DRIVER_GRAPH_CAPTURE
orError_t orStreamBeginCapture(orStream_t stream) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (stream == nullptr) {
    return fail(orErrorNotPermitted, "the default stream cannot be captured; use another stream");
  }
  std::lock_guard<std::mutex> lock(stream->mu);
  if (stream->capture.load() != nullptr)
    return fail(orErrorNotPermitted, "the stream is already capturing");
  stream->capture.store(new orGraph_st{stream->device, {}});
  return ok();
}

orError_t orStreamEndCapture(orStream_t stream, orGraph_t* graph) {
  if (stream == nullptr || graph == nullptr)
    return fail(orErrorInvalidValue, "orStreamEndCapture: NULL argument");
  std::lock_guard<std::mutex> lock(stream->mu);
  if (stream->capture.load() == nullptr)
    return fail(orErrorNotPermitted, "the stream is not capturing");
  *graph = stream->capture.exchange(nullptr);
  return ok();
}

orError_t orGraphLaunch(orGraph_t graph, orStream_t stream) {
  OR_REFUSE_IN_FORKED_CHILD();
  if (graph == nullptr) return fail(orErrorInvalidResourceHandle, "orGraphLaunch: graph is NULL");
  orStream_t s = resolve_stream(stream);
  if (orError_t err = refuse_if_capturing(s, "launching a graph")) return err;
  // One task runs every node in order; kernel nodes keep their access to device memory.
  submit(s, boxed_task(run_graph, graph, TaskKind::Host));
  return config().launch_blocking ? take_stream_error(s) : ok();
}
// LITERALINCLUDE END: DRIVER_GRAPH_CAPTURE

orError_t orStreamIsCapturing(orStream_t stream, int* capturing) {
  if (capturing == nullptr) return fail(orErrorInvalidValue, "orStreamIsCapturing: NULL output");
  *capturing = stream != nullptr && is_capturing(stream) ? 1 : 0;
  return ok();
}

orError_t orGraphGetNodeCount(orGraph_t graph, size_t* count) {
  if (graph == nullptr || count == nullptr)
    return fail(orErrorInvalidValue, "orGraphGetNodeCount: NULL argument");
  *count = graph->nodes.size();
  return ok();
}

orError_t orGraphDestroy(orGraph_t graph) {
  if (graph == nullptr) return ok();
  // Launches still queued must finish before the nodes' arguments go away.
  if (orError_t err = synchronize_device(graph->device)) return err;
  for (const Task& node : graph->nodes) node.release_arguments();
  delete graph;
  return ok();
}

}  // extern "C"
