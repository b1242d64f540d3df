"""Generators: per-device defaults, torch.Generator(device="openreg"), seeding and state."""

import torch


def test_default_generators_per_device():
    gens = list(torch.openreg.default_generators)
    assert len(gens) == torch.openreg.device_count()
    assert [g.device for g in gens] == [torch.device("openreg", i) for i in range(len(gens))]
    assert gens[0] is torch.openreg.default_generators[0]  # the same object each time


def test_new_generator_from_hooks():
    g = torch.Generator(device="openreg")
    assert g.device == torch.device("openreg:0")
    g.manual_seed(1234)
    assert g.initial_seed() == 1234


def test_seeding_functions_take_effect():
    torch.openreg.manual_seed(7)
    assert torch.openreg.initial_seed() == 7
    torch.openreg.manual_seed_all(11)
    assert [g.initial_seed() for g in torch.openreg.default_generators] == [11, 11]
    torch.openreg.seed_all()
    seeds = {g.initial_seed() for g in torch.openreg.default_generators}
    assert len(seeds) == 1 and 11 not in seeds


def test_state_round_trips_and_validates():
    g = torch.openreg.default_generators[1]
    g.manual_seed(99)
    state = torch.openreg.get_rng_state(1)
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    torch.openreg.manual_seed_all(0)
    torch.openreg.set_rng_state(state, 1)
    assert g.initial_seed() == 99
    states = torch.openreg.get_rng_state_all()
    torch.openreg.set_rng_state_all(states)
    try:
        torch.openreg.set_rng_state(torch.zeros(3, dtype=torch.uint8), 1)
    except RuntimeError as e:
        assert "openreg generator state is a CPU uint8 tensor of 16 bytes" in str(e)
    else:
        raise AssertionError("a malformed state must be rejected")
