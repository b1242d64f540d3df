"""torch.compile for openreg: the Dynamo device interface and Inductor's openreg backend.

Nothing here is imported by ``import torch``: ``torch.openreg`` registers the Dynamo interface
when Dynamo is imported and loads ``backend`` when Inductor first asks for the device's
scheduling (see ``torch_openreg/openreg/_compile.py``).
"""
