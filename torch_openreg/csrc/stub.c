/* stub.c: the Python entry point of torch_openreg._C; all bindings live in libtorch_bindings. */
// LITERALINCLUDE START: BINDINGS_INCLUDES_OF_STUB
#include <Python.h>
// LITERALINCLUDE END: BINDINGS_INCLUDES_OF_STUB

/* LITERALINCLUDE START: BINDINGS_STUB */
extern PyObject* initModule(void);

PyMODINIT_FUNC PyInit__C(void) { return initModule(); }
/* LITERALINCLUDE END: BINDINGS_STUB */
