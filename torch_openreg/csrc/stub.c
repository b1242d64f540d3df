/* stub.c: the Python entry point of torch_openreg._C; all bindings live in libtorch_bindings. */
#include <Python.h>

extern PyObject* initModule(void);

PyMODINIT_FUNC PyInit__C(void) { return initModule(); }
