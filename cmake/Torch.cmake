# LITERALINCLUDE START: BUILD_TORCH_DISCOVERY
# Torch.cmake: torch's headers and libraries, asked of the Python that has torch installed.
# Lighter than find_package(Torch): no CUDA or Kineto probing at configure time.
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)
# Autoload off: an installed but stale torch_openreg must not break its own rebuild.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env TORCH_DEVICE_BACKEND_AUTOLOAD=0 ${Python3_EXECUTABLE} -c
    "import os, torch; print(os.path.dirname(torch.__file__)); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))"
  OUTPUT_VARIABLE _torch_info OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
string(REPLACE "\n" ";" _torch_info "${_torch_info}")
list(GET _torch_info 0 TORCH_ROOT)
list(GET _torch_info 1 TORCH_CXX11_ABI)
set(TORCH_LIB_DIR "${TORCH_ROOT}/lib")
# LITERALINCLUDE END: BUILD_TORCH_DISCOVERY

# LITERALINCLUDE START: BUILD_TORCH_TARGETS
add_library(torch_headers INTERFACE)
target_include_directories(torch_headers SYSTEM INTERFACE
  "${TORCH_ROOT}/include" "${TORCH_ROOT}/include/torch/csrc/api/include")
target_compile_definitions(torch_headers INTERFACE _GLIBCXX_USE_CXX11_ABI=${TORCH_CXX11_ABI})

add_library(torch_libs INTERFACE)
target_link_libraries(torch_libs INTERFACE torch_headers
  "${TORCH_LIB_DIR}/libtorch.so" "${TORCH_LIB_DIR}/libtorch_cpu.so" "${TORCH_LIB_DIR}/libc10.so")

add_library(torch_python_lib INTERFACE)
target_link_libraries(torch_python_lib INTERFACE torch_libs Python3::Module
  "${TORCH_LIB_DIR}/libtorch_python.so")
# LITERALINCLUDE END: BUILD_TORCH_TARGETS
