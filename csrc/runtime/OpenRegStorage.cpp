// OpenRegStorage.cpp: the storage bounds check every kernel and copy runs first.
#include "OpenRegStorage.h"

#include <ATen/native/Resize.h>

namespace c10::openreg {

// LITERALINCLUDE START: SERIALIZATION_STORAGE_BOUNDS
void check_storage_fits(const at::Tensor& tensor) {
  const c10::Storage& storage = tensor.storage();
  // The common case costs one comparison: a storage at least as large as
  // the tensor's last byte. Otherwise PyTorch's own check words the error.
  size_t itemsize = tensor.dtype().itemsize();
  size_t last = static_cast<size_t>(tensor.storage_offset());
  for (int64_t d = 0; d < tensor.dim(); ++d) {
    if (tensor.size(d) == 0) return;  // no element, nothing to read
    last += static_cast<size_t>(tensor.size(d) - 1) * static_cast<size_t>(tensor.stride(d));
  }
  if ((last + 1) * itemsize <= storage.nbytes()) return;
  at::native::checkInBoundsForStorage(tensor.sizes(), tensor.strides(), tensor.storage_offset(),
                                      tensor.dtype(), storage);
}
// LITERALINCLUDE END: SERIALIZATION_STORAGE_BOUNDS

}  // namespace c10::openreg
