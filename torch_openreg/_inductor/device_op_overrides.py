"""The Python snippets Inductor writes into generated code to select openreg devices and streams."""

from torch._inductor.codegen.common import DeviceOpOverrides


# LITERALINCLUDE START: COMPILE_DEVICE_OP_OVERRIDES
class OpenRegDeviceOpOverrides(DeviceOpOverrides):
    def import_get_raw_stream_as(self, name: str) -> str:
        return f"from torch_openreg._inductor.runtime import get_raw_stream as {name}"

    def set_device(self, device_idx: int) -> str:
        return f"torch.openreg.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.openreg.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.openreg.device({device_idx})"

    def current_stream(self) -> str:
        return "torch.openreg.current_stream()"
# LITERALINCLUDE END: COMPILE_DEVICE_OP_OVERRIDES
