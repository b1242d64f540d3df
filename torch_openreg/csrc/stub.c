/* stub.c: the Python entry point of torch_openreg._C; all bindings live in libtorch_bindings. */
#include <Python.h>

/* LITERALINCLUDE START: BINDINGS_STUB */
extern PyObject* initModule(void);

PyMODINIT_FUNC PyInit__C(void) { return initModule(); }
/* LITERALINCLUDE END: BINDINGS_STUB */
