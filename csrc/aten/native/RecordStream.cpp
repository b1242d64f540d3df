// RecordStream.cpp: Tensor.record_stream, which tells the allocator about cross-stream use.
#include "RecordStream.h"

#include "../../runtime/OpenRegDeviceAllocator.h"

namespace at::native::openreg {

// LITERALINCLUDE START: RECORD_STREAM_KERNEL
void record_stream(at::Tensor& self, c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "record_stream: expected an openreg stream, got ", stream);
  TORCH_CHECK(stream.device() == self.device(), "record_stream: the tensor is on ", self.device(),
              " but the stream is on ", stream.device());
  c10::openreg::device_allocator()->recordStream(self.storage().data_ptr(), stream);
}
// LITERALINCLUDE END: RECORD_STREAM_KERNEL

}  // namespace at::native::openreg
