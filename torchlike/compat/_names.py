"""torch's module names <-> torchlike's, and the error for a torch attribute torchlike lacks.

Standard library only, so any room may use it without importing the import alias itself."""

from __future__ import annotations

_TORCH = "torch"
_TORCHLIKE = "torchlike"
# torchvision's transforms live in torchlike.vision (torch users import them from torchvision)
_EXTRA = {"torchvision": "torchlike.vision"}


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def torch_name(name: str) -> str:
    """`torchlike.nn.functional` -> `torch.nn.functional`; torch names pass through unchanged."""
    for theirs, ours in _EXTRA.items():
        if _under(name, ours):
            return theirs + name[len(ours) :]
    if _under(name, _TORCHLIKE):
        return _TORCH + name[len(_TORCHLIKE) :]
    return name


def torchlike_name(name: str) -> str:
    """`torch.nn.functional` -> `torchlike.nn.functional`, `torchvision.transforms` -> `torchlike.vision.transforms`."""
    if _under(name, _TORCH):
        return _TORCHLIKE + name[len(_TORCH) :]
    for theirs, ours in _EXTRA.items():
        if _under(name, theirs):
            return ours + name[len(theirs) :]
    return name


def missing_attribute_error(module_name: str, attr: str) -> AttributeError:
    """The error for a torch attribute torchlike lacks, phrased with torch's module path.

    Meant for module-level ``__getattr__``: ``raise missing_attribute_error(__name__, name)``.
    """
    module = torch_name(module_name)
    return AttributeError(
        f"module '{module}' has no attribute '{attr}' (torchlike does not provide {module}.{attr} yet)",
        name=attr,
    )
