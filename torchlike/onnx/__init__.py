"""torch.onnx: present so scripts that import it run; exporting raises (torchlike cannot export ONNX)."""

from __future__ import annotations

from typing import Any

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError", "dynamo_export"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


def _unsupported(what: str) -> OnnxExporterError:
    return OnnxExporterError(
        f"torchlike does not provide {what}: ONNX export needs torch's own graph capture "
        "(TorchScript or torch.export), which torchlike has no equivalent of"
    )


def export(model: Any, args: Any = (), f: Any = None, **kwargs: Any) -> Any:
    """Raises: torchlike cannot export ONNX."""
    raise _unsupported("torch.onnx.export")


def dynamo_export(model: Any, *model_args: Any, **model_kwargs: Any) -> Any:
    """Raises: torchlike cannot export ONNX."""
    raise _unsupported("torch.onnx.dynamo_export")


def is_in_onnx_export() -> bool:
    return False


def __getattr__(name: str) -> Any:
    from ..compat._names import missing_attribute_error

    raise missing_attribute_error(__name__, name)
