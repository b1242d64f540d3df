// Bindings.h: how a component adds functions to torch_openreg._C without editing Module.cpp.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/Exceptions.h>

#include <functional>

namespace torch_openreg {

// LITERALINCLUDE START: BINDINGS_REGISTRY
namespace py = pybind11;

// Each component's binding file registers one function that adds its part of _C.
using BindFunction = void (*)(py::module_& module);

struct BindingRegistrar {
  BindingRegistrar(const char* component, BindFunction bind);
};

// Calls every registered function on the new _C module (in Module.cpp's initModule).
void bind_all(py::module_& module);

// OPENREG_BINDINGS(memory, bind_memory) in runtime/MemoryBindings.cpp: picked up by the
// build's glob and by bind_all, with no list to edit.
#define OPENREG_BINDINGS(component, bind) \
  static ::torch_openreg::BindingRegistrar openreg_bindings_##component(#component, bind)
// LITERALINCLUDE END: BINDINGS_REGISTRY

// LITERALINCLUDE START: BINDINGS_TRANSLATING
// Wraps `body(Args...)`, turning C++ errors into the matching Python exceptions
// (c10::OutOfMemoryError -> torch.OutOfMemoryError, c10::Error -> RuntimeError, ...).
template <class... Args, class F>
auto translating(F body) {
  return [body](Args... args) {
    HANDLE_TH_ERRORS
    return body(args...);
    END_HANDLE_TH_ERRORS_PYBIND
  };
}
// LITERALINCLUDE END: BINDINGS_TRANSLATING

}  // namespace torch_openreg
