"""Seeding and RNG state of the openreg devices' default generators (as torch.cuda.random)."""

from collections.abc import Iterable

import torch

from ._utils import _get_device_index

_DeviceLike = torch.device | str | int | None


def _generator(device: _DeviceLike = None) -> torch.Generator:
    from . import default_generators

    return default_generators[_get_device_index(device, optional=True)]


def _all() -> Iterable[torch.Generator]:
    from . import default_generators

    return iter(default_generators)


def _get_generator(device: torch.device) -> torch.Generator:
    """``device``'s default generator (AOTAutograd asks for it to run random ops graph-safe)."""
    return _generator(device)


def manual_seed(seed: int) -> None:
    """Seeds the current device's default generator."""
    _generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seeds every device's default generator."""
    for g in _all():
        g.manual_seed(int(seed))


def seed() -> None:
    """Seeds the current device's default generator with a random number."""
    _generator().seed()


def seed_all() -> None:
    """Seeds every device's default generator with one random number."""
    value = _generator().seed()
    for g in _all():
        g.manual_seed(value)


def initial_seed() -> int:
    """The seed the current device's default generator was last seeded with."""
    return _generator().initial_seed()


# LITERALINCLUDE START: RANDOM_PYTHON_STATE
def get_rng_state(device: _DeviceLike = None) -> torch.Tensor:
    """The state of ``device``'s default generator as a CPU uint8 tensor."""
    return _generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: _DeviceLike = None) -> None:
    """Restores ``device``'s default generator from ``get_rng_state``."""
    _generator(device).set_state(new_state)


def get_rng_state_all() -> list:
    """The states of all devices' default generators."""
    return [g.get_state() for g in _all()]


def set_rng_state_all(new_states: Iterable[torch.Tensor]) -> None:
    """Restores all devices' default generators."""
    for g, state in zip(_all(), new_states):
        g.set_state(state)
# LITERALINCLUDE END: RANDOM_PYTHON_STATE
