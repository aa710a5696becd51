"""Compat tests import both real torch and torchlike and compare them."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:  # torch's intra-op threads fight JAX and the other test worker for the cores; one is faster here
    import torch

    torch.set_num_threads(1)
except ImportError:
    pass
