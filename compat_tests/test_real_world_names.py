"""Names real scripts touch that are not ops: torch.accelerator, torch.onnx, torch.version, thread and
determinism settings, grad modes as bare decorators, the CUDA RNG state lists and Tensor's device flags."""

from __future__ import annotations

import importlib
import warnings

import pytest
import torch
from _harness import check_raises

import torchlike


def both(fn):  # noqa: ANN001, ANN201
    return fn(torch), fn(torchlike)


def same(fn) -> None:  # noqa: ANN001
    ref, got = both(fn)
    assert got == ref, f"torchlike: {got!r}\ntorch:     {ref!r}"


def test_accelerator_without_one() -> None:
    # both libraries run on the CPU here: no accelerator
    same(lambda t: (str(t.accelerator.current_accelerator()), t.accelerator.is_available()))
    same(lambda t: (t.accelerator.device_count(), str(t.accelerator.current_accelerator(check_available=True))))
    for call in ("current_device_index", "synchronize", "empty_cache", "memory_allocated"):
        check_raises(lambda t, call=call: getattr(t.accelerator, call)())
    check_raises(lambda t: t.accelerator.set_device_index(0))
    check_raises(lambda t: t.ones(2).pin_memory())

    def index_none(t):  # noqa: ANN001, ANN202
        with t.accelerator.device_index(None):
            return "entered"

    same(index_none)


def test_onnx_module() -> None:
    same(lambda t: importlib.import_module(f"{t.__name__}.onnx").is_in_onnx_export())
    with pytest.raises(torchlike.onnx.OnnxExporterError, match="torchlike does not provide torch.onnx.export"):
        torchlike.onnx.export(torchlike.nn.Linear(2, 2), (torchlike.ones(1, 2),), "model.onnx")
    assert issubclass(torchlike.onnx.OnnxExporterError, RuntimeError)
    assert issubclass(torch.onnx.OnnxExporterError, RuntimeError)


def test_version() -> None:
    same(lambda t: (t.version.__version__.split("+")[0], t.version.cuda, t.version.hip, t.version.debug))
    same(lambda t: t.__version__ == t.version.__version__)
    same(lambda t: type(t.version.git_version).__name__)


def test_threads() -> None:
    def threads(t):  # noqa: ANN001, ANN202
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            before = t.get_num_threads()
            t.set_num_threads(1)
            after = t.get_num_threads()
            t.set_num_threads(before)
        return isinstance(before, int) and before > 0, after, t.get_num_interop_threads() > 0

    same(threads)
    check_raises(lambda t: t.set_num_threads(0))


def test_deterministic_algorithms() -> None:
    def flags(t):  # noqa: ANN001, ANN202
        out = [t.are_deterministic_algorithms_enabled(), t.get_deterministic_debug_mode()]
        t.use_deterministic_algorithms(True, warn_only=True)
        out += [t.are_deterministic_algorithms_enabled(), t.is_deterministic_algorithms_warn_only_enabled(),
                t.get_deterministic_debug_mode()]  # fmt: skip
        t.set_deterministic_debug_mode("error")
        out += [t.get_deterministic_debug_mode(), t.is_deterministic_algorithms_warn_only_enabled()]
        t.use_deterministic_algorithms(False)
        return out + [t.are_deterministic_algorithms_enabled()]

    same(flags)
    check_raises(lambda t: t.use_deterministic_algorithms(1))
    check_raises(lambda t: t.set_deterministic_debug_mode("sometimes"))


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode"])
def test_grad_modes_as_bare_decorators(mode: str) -> None:
    def run(t):  # noqa: ANN001, ANN202
        @getattr(t, mode)
        def f(x):  # noqa: ANN001, ANN202
            return x * 2, t.is_grad_enabled()

        @getattr(t, mode)
        def gen(x):  # noqa: ANN001, ANN202
            yield t.is_grad_enabled()

        x = t.ones(2, requires_grad=True)
        y, enabled = f(x)
        with t.no_grad():
            y2, enabled2 = f(x)
        return y.requires_grad, enabled, y2.requires_grad, enabled2, list(gen(x)), f.__name__

    same(run)


def test_cuda_rng_state_lists_without_gpu() -> None:
    def run(t):  # noqa: ANN001, ANN202
        states = t.cuda.get_rng_state_all()
        t.cuda.set_rng_state_all(states)
        return states

    same(run)


def test_tensor_device_flags() -> None:
    def flags(t):  # noqa: ANN001, ANN202
        x = t.ones(2)
        return x.is_xpu, x.is_mps, x.is_meta, x.is_cpu, x.is_cuda, x.is_pinned()

    same(flags)


@pytest.mark.parametrize(
    "module", ["", ".nn", ".nn.functional", ".optim", ".cuda", ".autograd", ".linalg", ".fft", ".special",
               ".utils.data", ".distributions", ".onnx"],
)  # fmt: skip
def test_missing_attribute_names_the_torch_name(module: str) -> None:
    check_raises(lambda t: getattr(importlib.import_module(t.__name__ + module), "no_such_name_xyz"), match_message=False)
    with pytest.raises(AttributeError, match=rf"torchlike does not provide torch{module}\.no_such_name_xyz yet"):
        getattr(importlib.import_module("torchlike" + module), "no_such_name_xyz")


def test_shipped_tensor_method_list_is_current() -> None:
    from gen_torch_tensor_methods import torch_tensor_methods

    from torchlike.compat._torch_tensor_methods import TORCH_TENSOR_METHODS

    assert TORCH_TENSOR_METHODS == frozenset(torch_tensor_methods()), "run compat_tests/gen_torch_tensor_methods.py"


def test_xpu_and_mps_queries() -> None:
    def run(t):  # noqa: ANN001, ANN202
        t.mps.manual_seed(0)
        return t.xpu.is_available(), t.xpu.device_count(), t.mps.is_available(), t.mps.device_count()

    same(run)


def test_math_constants() -> None:
    import math

    ref, got = both(lambda t: (t.inf, t.pi, t.e, t.newaxis, math.isnan(t.nan)))
    assert got == ref
    same(lambda t: t.full((2,), t.inf).tolist())
    same(lambda t: t.ones(3)[t.newaxis].shape)
