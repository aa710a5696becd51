"""Stand-in for torchlike in `compare`'s reference run: a script written as `import torchlike as torch`
(the examples) runs on real torch, with `torchlike.nn`, `torchlike.utils.data`... mapped to torch's.

This directory is only ever put on the path of that reference subprocess, which runs real torch by
definition; the torchlike package itself never imports it, so its runtime stays JAX-only."""

import importlib
import importlib.abc
import importlib.util
import sys

import torch as _torch


class _TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.startswith("torchlike."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("torch" + spec.name[len("torchlike"):])

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _TorchFinder())
sys.modules[__name__] = _torch
