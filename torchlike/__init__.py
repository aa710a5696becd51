"""torchlike: PyTorch's Python API running on JAX. ``import torchlike as torch``."""

from __future__ import annotations

import sys as _sys


def _is_cli() -> bool:
    """Whether this process is `python -m torchlike ...` or the `torchlike` script."""
    argv0 = _sys.argv[0] if _sys.argv else ""
    if argv0 == "-m":  # runpy is importing the package on its way to __main__
        orig = getattr(_sys, "orig_argv", [])
        return any(a == "-m" and b == __name__ or a == "-m" + __name__ for a, b in zip(orig, orig[1:] + [""]))
    return argv0.rsplit("/", 1)[-1].rsplit("\\", 1)[-1] == __name__


if _is_cli():  # --help, --version and usage errors answer before JAX loads
    from ._cli import answer_early as _answer_early

    _answer_early()

import os as _os  # noqa: E402

# torch rounds every float16/bfloat16 op's result; XLA keeps float32 between fused half-precision ops unless
# told not to (a lazy GPU step computed x.bfloat16() * 0.3 from the unrounded x: 538 of 2048 results one ulp
# off). Read when the backend starts, below; a user's own setting of the flag wins.
if "xla_allow_excess_precision" not in _os.environ.get("XLA_FLAGS", ""):
    _os.environ["XLA_FLAGS"] = (_os.environ.get("XLA_FLAGS", "") + " --xla_allow_excess_precision=false").strip()

import jax as _jax  # noqa: E402

# torch's int64/float64 need JAX's x64 mode; torch's float32 matmuls are full precision;
# torch's default device is the CPU even when JAX sees a GPU.
_jax.config.update("jax_enable_x64", True)
_jax.config.update("jax_default_matmul_precision", "highest")
_jax.config.update("jax_default_device", _jax.local_devices(backend="cpu")[0])  # this process's CPU

from . import _cache  # noqa: E402

_cache.configure()  # compiled programs persist between runs (TORCHLIKE_CACHE=0 turns it off)

from ._core import dtype as _dtype_mod  # noqa: E402
from ._core.device import device, get_default_device, set_default_device  # noqa: E402
from ._core.dtype import (  # noqa: E402
    bfloat16, bool, can_cast, complex64, complex128, dtype, finfo, float16, float32, float64, get_default_dtype,
    iinfo, int8, int16, int32, int64, promote_types, set_default_dtype, uint8, uint16, uint32, uint64,
)  # fmt: skip
from ._core.layout import (  # noqa: E402
    channels_last, channels_last_3d, contiguous_format, layout, memory_format, preserve_format, sparse_coo, strided,
)  # fmt: skip
from ._core.printing import set_printoptions, get_printoptions  # noqa: E402
from ._core.size import Size  # noqa: E402
from ._core.tensor import Tensor  # noqa: E402
from ._core import storage as _storage  # noqa: E402,F401  (attaches Tensor.storage, untyped_storage)
from ._core import shared_memory as _shared_memory  # noqa: E402,F401  (Tensor.share_memory_, is_shared)
from . import autograd  # noqa: E402
from ._core.grad_mode import (  # noqa: E402
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)  # fmt: skip
from . import _ops  # noqa: E402
from ._ops import return_types  # noqa: E402

_sys.modules[__name__ + ".return_types"] = return_types  # importable as torch.return_types is (pickle needs it)
from ._public import *  # noqa: E402,F403
from ._runtime import *  # noqa: E402,F403
from ._precision import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402
from ._core.kernel_cache import compile_stats, get_kernel_cache_size, set_kernel_cache_size  # noqa: E402,F401
from . import backends, cuda, random  # noqa: E402
from . import linalg  # noqa: E402
from ._compile import compile  # noqa: E402
from . import compiler, _dynamo  # noqa: E402,F401
from . import amp, cpu, func  # noqa: E402,F401
from .amp import autocast  # noqa: E402
from .amp.autocast_mode import (  # noqa: E402,F401
    get_autocast_dtype, is_autocast_cache_enabled, is_autocast_enabled, set_autocast_cache_enabled,
    set_autocast_dtype, set_autocast_enabled,
)  # fmt: skip
from . import utils  # noqa: E402  (submodules such as utils.data load lazily)
from . import nn  # noqa: E402
from . import optim  # noqa: E402
from . import multiprocessing  # noqa: E402  (registers how tensors cross process boundaries, as torch does)
from . import distributions, fft, jit, masked, signal, special, testing  # noqa: E402
from . import lazy  # noqa: E402
from . import accelerator, mps, onnx, profiler, version, xpu  # noqa: E402
from .autograd.anomaly_mode import (  # noqa: E402
    is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled,
)  # fmt: skip
from . import serialization  # noqa: E402
from .serialization import load, save  # noqa: E402
from .random import Generator, default_generator, fork_rng  # noqa: E402,F401

globals().update(_ops.names("torch"))  # the op table's installer generates torch's op namespace
from ._ops.legacy_types import CPU_TYPES as _CPU_TYPES, set_default_tensor_type  # noqa: E402

globals().update(_CPU_TYPES)  # torch.FloatTensor and friends: the legacy tensor types

from . import sparse  # noqa: E402
from .sparse._coo import sparse_coo_tensor  # noqa: E402
from .sparse._matmul import spmm  # noqa: E402

# the ops that take a sparse operand too (torch.mm(adjacency, features), torch.sum(adj, dim=1), ...)
for _name, _sparse_fn in {**sparse._matmul.SPARSE_FORMS, **sparse._functions.SPARSE_FORMS}.items():
    globals()[_name] = sparse._matmul.sparse_first(globals()[_name], _sparse_fn)
del _name, _sparse_fn

float = float32
double = float64
half = float16
cfloat = complex64
cdouble = complex128
long = int64
int = int32
short = int16

__version__ = version.__version__


# A full garbage collection walks every tracked object, and importing JAX and torchlike leaves about 130,000
# that live as long as the process: a training loop paid 100-350 ms every few dozen steps walking them again
# (bench/host_cost.py's GPT step, docs/lazy.md). They move to the permanent generation once; what is made
# later is collected as usual (TORCHLIKE_GC_FREEZE=0 leaves the collector alone).
if _os.environ.get("TORCHLIKE_GC_FREEZE", "1") != "0":
    import gc as _gc

    _gc.freeze()


def __getattr__(name: str) -> object:
    from .compat._names import missing_attribute_error

    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise missing_attribute_error(__name__, name)
