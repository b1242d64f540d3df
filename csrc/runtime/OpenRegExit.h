// OpenRegExit.h: what the backend does when the Python interpreter exits.
#pragma once

namespace c10::openreg {

// LITERALINCLUDE START: EXIT_DECL
// Waits until autograd's worker thread of every openreg device has let go of
// the last backward pass it ran. Called by torch.openreg at interpreter exit,
// without the GIL; errors are swallowed (the process is ending).
void settle_autograd_threads() noexcept;
// LITERALINCLUDE END: EXIT_DECL

}  // namespace c10::openreg
