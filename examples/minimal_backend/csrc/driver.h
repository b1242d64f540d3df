// LITERALINCLUDE START: MINIMAL_BACKEND_DRIVER_API
// driver.h: minidrv, the backend's own small driver. Its C API is what a vendor's driver
// offers (CUDA's runtime has the same shape): device memory the host cannot touch, copies
// in three directions, streams, events and kernel launches. This first driver runs every
// kernel and copy before the call returns, so a stream is always idle and an event is
// complete when recorded: a valid first step, and what the backend above must not rely on.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
typedef enum { mdSuccess = 0, mdErrorOutOfMemory, mdErrorInvalidValue } mdError;
typedef enum { mdHostToDevice, mdDeviceToHost, mdDeviceToDevice } mdMemcpyKind;
typedef struct mdStream_* mdStream;  // nullptr is the default stream
typedef struct mdEvent_* mdEvent;
typedef void (*mdKernel)(void* args);

const char* mdGetErrorString(mdError error);
int mdDeviceCount();
mdError mdDeviceSynchronize();

// Memory: `*ptr` is a device address. The host may keep and compare it, never read it.
mdError mdMalloc(void** ptr, size_t nbytes);
mdError mdFree(void* ptr);
mdError mdMemcpy(void* dst, const void* src, size_t nbytes, mdMemcpyKind kind);
mdError mdMemset(void* ptr, int value, size_t nbytes);
// For kernels only: where the device reads and writes the bytes at a device address
// (nullptr if the address is not device memory). A real device dereferences the
// address itself; this emulated one needs the translation.
void* mdDeviceView(const void* ptr);

mdError mdStreamCreate(mdStream* stream);
mdError mdStreamQuery(mdStream stream);  // mdSuccess: every job on it has finished
mdError mdStreamSynchronize(mdStream stream);
mdError mdStreamWaitEvent(mdStream stream, mdEvent event);
mdError mdLaunch(mdStream stream, mdKernel kernel, void* args);

mdError mdEventCreate(mdEvent* event);
mdError mdEventDestroy(mdEvent event);
mdError mdEventRecord(mdEvent event, mdStream stream);
mdError mdEventQuery(mdEvent event);
mdError mdEventSynchronize(mdEvent event);
mdError mdEventElapsedTime(float* ms, mdEvent start, mdEvent end);
}
// LITERALINCLUDE END: MINIMAL_BACKEND_DRIVER_API
