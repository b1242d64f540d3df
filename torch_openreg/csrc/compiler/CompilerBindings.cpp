// CompilerBindings.cpp: the launch call that torch.compile's generated Python wrapper makes for each kernel.
#include "../Bindings.h"

#include <torch/csrc/autograd/python_variable.h>

#include <compiler/OpenRegCompiledKernel.h>
#include <runtime/OpenRegStream.h>

#include <cstring>

namespace torch_openreg {
namespace {

// LITERALINCLUDE START: COMPILE_LAUNCH_BINDING
using c10::openreg::CompiledKernelArg;

// An openreg tensor becomes its device address (never dereferenced here), a
// Python int or float the bytes of an int64_t or a double.
CompiledKernelArg kernel_arg(PyObject* obj, size_t index) {
  if (THPVariable_Check(obj)) {
    const at::Tensor& t = THPVariable_Unpack(obj);
    if (!t.is_privateuseone()) {
      throw torch::TypeError(c10::str("compiled openreg kernel: argument ", index,
                                      " is a tensor on ", t.device(), ", not on openreg"));
    }
    auto address = reinterpret_cast<uintptr_t>(t.const_data_ptr());
    return {CompiledKernelArg::Kind::DevicePointer, static_cast<uint64_t>(address)};
  }
  if (PyLong_Check(obj)) {
    int64_t value = PyLong_AsLongLong(obj);
    if (value == -1 && PyErr_Occurred()) throw python_error();
    return {CompiledKernelArg::Kind::Scalar, static_cast<uint64_t>(value)};
  }
  if (PyFloat_Check(obj)) {
    double value = PyFloat_AS_DOUBLE(obj);
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return {CompiledKernelArg::Kind::Scalar, bits};
  }
  throw torch::TypeError(c10::str("compiled openreg kernel: argument ", index,
                                  " has unsupported type ", Py_TYPE(obj)->tp_name));
}

void launch_compiled_kernel(uintptr_t entry, int device, const py::args& args) {
  std::vector<CompiledKernelArg> kernel_args;
  kernel_args.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) kernel_args.push_back(kernel_arg(args[i].ptr(), i));
  c10::openreg::launch_compiled_kernel(reinterpret_cast<c10::openreg::CompiledKernelEntry>(entry),
                                       static_cast<c10::DeviceIndex>(device),
                                       std::move(kernel_args));
}
// LITERALINCLUDE END: COMPILE_LAUNCH_BINDING

void bind_compiler(py::module_& m) {
  m.def("_launch_compiled_kernel",
        translating<uintptr_t, int, const py::args&>(launch_compiled_kernel));
  // The driver handle of a device's current stream: Inductor's get_raw_stream.
  m.def("_current_raw_stream", translating<int>([](int device) {
          auto stream =
              c10::openreg::getCurrentOpenRegStream(static_cast<c10::DeviceIndex>(device));
          return reinterpret_cast<uintptr_t>(stream.stream());
        }));
}

OPENREG_BINDINGS(compiler, bind_compiler);

}  // namespace
}  // namespace torch_openreg
