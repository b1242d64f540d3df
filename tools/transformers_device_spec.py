"""transformers' device specification for openreg: points transformers' own test suite at it.

    cd transformers                      # a clone of transformers, at the installed version
    cp ../torch_openreg/tools/transformers_device_spec.py .
    TRANSFORMERS_TEST_DEVICE_SPEC=transformers_device_spec.py python -m pytest tests/models/gpt2

transformers' testing_utils imports this file by its name, so the variable holds a bare file
name in the directory pytest runs from (docs/ecosystem.md). tests/test_ecosystem.py loads it
through testing_utils, as transformers' tests do.
"""

import torch
import torch_openreg  # noqa: F401  (registers torch.openreg even with autoloading turned off)

# LITERALINCLUDE START: ECOSYSTEM_TRANSFORMERS_DEVICE_SPEC
# The device every test of the suite runs on: testing_utils.torch_device.
DEVICE_NAME = "openreg"
# What testing_utils' backend_manual_seed, backend_empty_cache and backend_device_count call
# for that device.
MANUAL_SEED_FN = torch.openreg.manual_seed
EMPTY_CACHE_FN = torch.openreg.empty_cache
DEVICE_COUNT_FN = torch.openreg.device_count
# LITERALINCLUDE END: ECOSYSTEM_TRANSFORMERS_DEVICE_SPEC
