// OpenRegExit.h: what the backend does when the Python interpreter exits.
#pragma once

namespace c10::openreg {

// Waits until autograd's worker thread of every openreg device has let go of
// the last backward pass it ran. Called by torch.openreg at interpreter exit,
// without the GIL; errors are swallowed (the process is ending).
void settle_autograd_threads() noexcept;

}  // namespace c10::openreg
