/* openreg.h: the C API of the emulated OpenReg accelerator (the "vendor driver"). */
#ifndef OPENREG_H
#define OPENREG_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define OR_API __declspec(dllexport)
#else
#define OR_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Every call returns an error code; orGetErrorString names it and
 * orGetLastErrorDetail says what went wrong in the last failed call of this
 * thread. */
typedef enum orError {
  orSuccess = 0,
  orErrorInvalidValue = 1,
  orErrorMemoryAllocation = 2,
  orErrorInvalidDevice = 3,
  orErrorInvalidMemcpyDirection = 4,
  orErrorInvalidDevicePointer = 5,
  orErrorInvalidResourceHandle = 6,
  orErrorNotReady = 7,
  orErrorLaunchFailure = 8,
  orErrorNotPermitted = 9,
  orErrorInitializationError = 10,
} orError_t;

typedef enum orMemcpyKind {
  orMemcpyHostToHost = 0,
  orMemcpyHostToDevice = 1,
  orMemcpyDeviceToHost = 2,
  orMemcpyDeviceToDevice = 3,
} orMemcpyKind;

typedef enum orMemoryType {
  orMemoryTypeUnregistered = 0, /* ordinary host memory the driver does not know */
  orMemoryTypeHost = 1,         /* pinned host memory from orMallocHost */
  orMemoryTypeDevice = 2,       /* device memory from orMalloc */
} orMemoryType;

typedef struct orPointerAttributes {
  orMemoryType type;
  int device;  /* -1 unless type is orMemoryTypeDevice */
  void* base;  /* start of the allocation containing the pointer */
  size_t size; /* size of that allocation */
} orPointerAttributes;

typedef struct orDeviceProp {
  char name[64];
  size_t totalGlobalMem;
  int major;
  int minor;
  int multiProcessorCount;
  int pciBusID; /* the physical device behind this index (see OPENREG_VISIBLE_DEVICES) */
} orDeviceProp;

typedef struct orStream_st* orStream_t; /* NULL: the current device's default stream */
typedef struct orEvent_st* orEvent_t;
typedef struct orGraph_st* orGraph_t; /* work captured from a stream, replayable */

/* A kernel runs on a stream's worker. Inside it, and only there,
 * orGetKernelPointer turns device pointers into addresses it may touch. */
typedef void (*orKernelFn)(void* args);
typedef void (*orHostFn)(void* user_data);

enum {
  orEventDefault = 0,
  orEventDisableTiming = 1,
};

/* Errors */
OR_API const char* orGetErrorString(orError_t error);
OR_API const char* orGetLastErrorDetail(void);

/* Devices */
OR_API orError_t orGetDeviceCount(int* count);
OR_API orError_t orGetDevice(int* device);
OR_API orError_t orSetDevice(int device);
OR_API orError_t orGetDeviceProperties(orDeviceProp* prop, int device);
OR_API orError_t orDeviceSynchronize(void);
OR_API orError_t orMemGetInfo(size_t* free_bytes, size_t* total_bytes);

/* LITERALINCLUDE START: DRIVER_API_MEMORY */
/* Memory */
OR_API orError_t orMalloc(void** dev_ptr, size_t size);
OR_API orError_t orFree(void* dev_ptr);
OR_API orError_t orMallocHost(void** host_ptr, size_t size);
OR_API orError_t orFreeHost(void* host_ptr);
OR_API orError_t orPointerGetAttributes(orPointerAttributes* attr, const void* ptr);
OR_API orError_t orMemcpy(void* dst, const void* src, size_t count, orMemcpyKind kind);
OR_API orError_t orMemcpyAsync(void* dst, const void* src, size_t count, orMemcpyKind kind,
                               orStream_t stream);
OR_API orError_t orMemset(void* dev_ptr, int value, size_t count);
OR_API orError_t orMemsetAsync(void* dev_ptr, int value, size_t count, orStream_t stream);
/* LITERALINCLUDE END: DRIVER_API_MEMORY */

/* LITERALINCLUDE START: DRIVER_API_STREAMS */
/* Streams */
OR_API orError_t orStreamCreate(orStream_t* stream);
OR_API orError_t orStreamCreateWithPriority(orStream_t* stream, int priority);
OR_API orError_t orStreamDestroy(orStream_t stream);
OR_API orError_t orStreamGetDevice(orStream_t stream, int* device);
OR_API orError_t orStreamGetPriority(orStream_t stream, int* priority);
OR_API orError_t orStreamSynchronize(orStream_t stream);
OR_API orError_t orStreamQuery(orStream_t stream);
OR_API orError_t orStreamWaitEvent(orStream_t stream, orEvent_t event);
OR_API orError_t orDeviceGetStreamPriorityRange(int* least, int* greatest);

/* Events */
OR_API orError_t orEventCreate(orEvent_t* event);
OR_API orError_t orEventCreateWithFlags(orEvent_t* event, unsigned flags);
OR_API orError_t orEventDestroy(orEvent_t event);
OR_API orError_t orEventRecord(orEvent_t event, orStream_t stream);
OR_API orError_t orEventQuery(orEvent_t event);
OR_API orError_t orEventSynchronize(orEvent_t event);
OR_API orError_t orEventElapsedTime(float* ms, orEvent_t start, orEvent_t end);

/* Work */
OR_API orError_t orLaunchKernel(orStream_t stream, orKernelFn kernel, void* args);
/* As orLaunchKernel; the driver calls release(args) once the kernel can never
 * run again: after it ran, or, if it was captured, when its graph is destroyed. */
OR_API orError_t orLaunchKernelEx(orStream_t stream, orKernelFn kernel, void* args,
                                  orHostFn release);
#define OR_LAUNCH_ARGS_MAX 32
/* Copies `size` bytes of arguments, at most OR_LAUNCH_ARGS_MAX, into the
 * launch, as a GPU copies a kernel's parameters: the caller may reuse `args`
 * at once, and the kernel gets a pointer to the copy (aligned to 8 bytes,
 * valid while it runs). The copy is the kernel's own: a captured kernel gets
 * a fresh one at every replay. */
OR_API orError_t orLaunchKernelWithArgs(orStream_t stream, orKernelFn kernel, const void* args,
                                        size_t size);
OR_API orError_t orLaunchHostFunc(orStream_t stream, orHostFn fn, void* user_data);
OR_API orError_t orGetKernelPointer(void** kernel_ptr, const void* dev_ptr);
OR_API orError_t orKernelFail(const char* message);
/* LITERALINCLUDE END: DRIVER_API_STREAMS */

/* LITERALINCLUDE START: DRIVER_API_WORKER_IDLE */
/* A stream's worker that has had no work for `microseconds` (at most one
 * second) calls `fn` once, on its own thread, before it sleeps on: the place
 * for a runtime to give back what its kernels hold per worker thread, such as
 * a team of threads, while the device idles. NULL turns it off. */
OR_API orError_t orSetWorkerIdleCallback(void (*fn)(void), unsigned microseconds);
/* LITERALINCLUDE END: DRIVER_API_WORKER_IDLE */

/* Graphs: work queued on a capturing stream is recorded instead of run, and a
 * graph replays it, in order, as one unit of work on any stream. */
/* LITERALINCLUDE START: DRIVER_API_GRAPHS */
OR_API orError_t orStreamBeginCapture(orStream_t stream);
OR_API orError_t orStreamEndCapture(orStream_t stream, orGraph_t* graph);
OR_API orError_t orStreamIsCapturing(orStream_t stream, int* capturing);
OR_API orError_t orGraphLaunch(orGraph_t graph, orStream_t stream);
OR_API orError_t orGraphGetNodeCount(orGraph_t graph, size_t* count);
OR_API orError_t orGraphDestroy(orGraph_t graph);
/* LITERALINCLUDE END: DRIVER_API_GRAPHS */

/* ---- Interprocess sharing (src/ipc.cpp) ------------------------------------
 * Each device's memory is one memfd. A range of it is exported as
 * (device, memfd, offset, size); a process that received the descriptor (over
 * a Unix socket, as torch.multiprocessing passes file descriptors) maps that
 * window with the same two views as local memory: device addresses the host
 * cannot touch, a kernel view the driver uses. A control block, a shared page
 * with its own memfd, travels with the range: it carries the exporter's
 * completion marker (the interprocess event) and the importers' reference
 * count, so the exporter knows when every importer has let go. */
/* LITERALINCLUDE START: DRIVER_API_IPC */
typedef struct orIpcMemHandle {
  int device;    /* physical id of the device (orDeviceProp.pciBusID) */
  int fd;        /* the exporter's descriptor of that device's memory; owned by the driver */
  size_t offset; /* where the range starts in the device memory */
  size_t size;
} orIpcMemHandle_t;

typedef struct orIpcControl_st* orIpcControl_t;

OR_API orError_t orIpcGetMemHandle(orIpcMemHandle_t* handle, void* dev_ptr, size_t size);
/* fd: this process's descriptor of the exporter's memory; the caller keeps it. */
OR_API orError_t orIpcOpenMemHandle(void** dev_ptr, const orIpcMemHandle_t* handle, int fd);
/* Waits for this process's work on the device, then unmaps the range. */
OR_API orError_t orIpcCloseMemHandle(void* dev_ptr);

/* Exporter: a new control block and its descriptor (owned by the block). */
OR_API orError_t orIpcControlCreate(orIpcControl_t* control, int* fd);
/* Importer: maps the control block behind fd; the caller keeps fd. */
OR_API orError_t orIpcControlOpen(orIpcControl_t* control, int fd);
OR_API orError_t orIpcControlDestroy(orIpcControl_t control);
/* Exporter: a marker that completes when the work queued so far on every stream
 * of the device is done (the thread that shares memory is often not the one
 * that queued the work writing it). */
OR_API orError_t orIpcControlRecord(orIpcControl_t control, int device, uint64_t* marker);
/* Importer: later work on stream waits for the marker. If the exporter exits
 * before the marker completes, the stream fails instead of waiting forever. */
OR_API orError_t orIpcStreamWaitControl(orStream_t stream, orIpcControl_t control, uint64_t marker);
/* Adds delta to the importers' reference count and returns the new count. */
OR_API orError_t orIpcControlAddRef(orIpcControl_t control, int delta, int64_t* count);
/* LITERALINCLUDE END: DRIVER_API_IPC */
/* ---- Activity records (profiling) ------------------------------------------
 * While recording is on, the driver stamps every kernel, copy and memset with
 * the time its stream's worker started and finished it, as CUPTI's activity
 * API does for CUDA. A launch carries the external correlation id on top of
 * the launching thread's stack, so a profiler can tie it to the operator that
 * queued it. Off by default; when off, a launch pays one relaxed load. */
/* LITERALINCLUDE START: DRIVER_API_ACTIVITY */
typedef enum orActivityKind {
  orActivityKindKernel = 0,
  orActivityKindMemcpy = 1,
  orActivityKindMemset = 2,
} orActivityKind;

typedef struct orActivityRecord {
  orActivityKind kind;
  int device;
  orStream_t stream;        /* the stream it ran on (never NULL) */
  int default_stream;       /* 1 if that is the device's default stream */
  orMemcpyKind memcpy_kind; /* copies only */
  size_t bytes;             /* copies and memsets */
  uint64_t correlation_id;  /* unique per launch, from 1 */
  uint64_t external_id;     /* the launching thread's external id, 0 if none */
  uint64_t queued_ns;       /* orActivityGetTimestamp clock: when it was queued */
  uint64_t start_ns;        /* when the worker started it */
  uint64_t end_ns;          /* when the worker finished it */
} orActivityRecord;

typedef void (*orActivityCallback)(const orActivityRecord* records, size_t count, void* user_data);

OR_API orError_t orActivityEnable(int enable); /* on clears what was recorded */
OR_API orError_t orActivityGetTimestamp(uint64_t* ns);
OR_API orError_t orActivityPushExternalCorrelationId(uint64_t id);
OR_API orError_t orActivityPopExternalCorrelationId(uint64_t* id);
/* Hands every finished record to callback (on this thread) and forgets them. */
OR_API orError_t orActivityFlush(orActivityCallback callback, void* user_data);
/* LITERALINCLUDE END: DRIVER_API_ACTIVITY */
/* Fault injection (for testing how software above the driver fails): the
 * nth through (nth + times - 1)th event of a kind from now fails. nth 0
 * disarms. OPENREG_FAULT_ALLOC / _LAUNCH / _COPY=N arm "the Nth" at start. An
 * allocation fails at the call (orErrorMemoryAllocation); a kernel launch or a
 * copy fails on its stream, reported at the next synchronization, as a device
 * fault would be. A stream delay (OPENREG_STREAM_DELAY_US) makes every task on
 * every stream wait that long first: a slow or stalled device. */
/* LITERALINCLUDE START: DRIVER_API_FAULTS */
typedef enum orFaultKind {
  orFaultAlloc = 0,
  orFaultLaunch = 1,
  orFaultCopy = 2,
} orFaultKind;
OR_API orError_t orFaultInject(orFaultKind kind, unsigned long nth, unsigned long times);
OR_API orError_t orFaultSetStreamDelay(unsigned microseconds);
/* LITERALINCLUDE END: DRIVER_API_FAULTS */

#ifdef __cplusplus
}
#endif

#endif /* OPENREG_H */
