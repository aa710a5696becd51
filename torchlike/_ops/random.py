"""Random numbers: torch's CPU stream bit for bit, a jax.random stream for CUDA tensors.

Each random op is one ``registry.defrandom`` entry: the in-place samplers share the body ``_fill``, the
factories ``_new_filled`` (see CONTRIBUTING.md). CPU draws come from ``_core.generator`` (numpy,
vectorised) on the host and enter as an array. CUDA tensors draw from a ``jax.random`` key stream seeded
by the same ``manual_seed`` (torch's Philox stream is not reproduced). A compiled step
(torchlike.compile) installs ``trace_rng`` so draws come from a key carried as explicit state.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Callable, Iterator, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .._core import buckets, cold_kernels
from .._core import device as _device
from .._core import dtype as D
from .._core import generator as G
from .._core import lazy
from .._core import tensor as T
from .._core.tensor import Tensor
from .._core import grad_mode, graph
from . import registry
from ._gamma_grad import standard_gamma_grad
from .creation import REQUIRED, _dev, _factory, parse_size, size_args
from .registry import expose


@expose("torch")
class Generator:
    """torch.Generator: on 'cpu' torch's mt19937 stream; on 'cuda' a jax.random key stream."""

    def __init__(self, device: Any = "cpu") -> None:
        dev = _device.canonical(device)
        self.device = dev
        if dev.type == "cpu":
            self._cpu = G.Generator()
        else:
            self._cpu = None
            self._seed = G._DEFAULT_SEED
            self._counter = 0

    def manual_seed(self, seed: int) -> Generator:
        if self._cpu is not None:
            self._cpu.manual_seed(seed)
        else:
            self._seed = int(seed) & ((1 << 64) - 1)
            self._counter = 0
        return self

    def seed(self) -> int:
        if self._cpu is not None:
            return self._cpu.seed()
        s = int.from_bytes(np.random.bytes(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._cpu.initial_seed() if self._cpu is not None else self._seed

    def get_state(self) -> Tensor:
        if self._cpu is not None:
            state = self._cpu.get_state()
        else:
            state = np.frombuffer(np.array([self._seed, self._counter], np.uint64).tobytes(), np.uint8)
        return T.make(jnp.asarray(state), _device.CPU, D.uint8)

    def set_state(self, new_state: Tensor) -> Generator:
        if not isinstance(new_state, Tensor) or new_state.dtype is not D.uint8:
            raise TypeError("expected a torch.ByteTensor")
        arr = np.asarray(new_state._data())
        if self._cpu is not None:
            self._cpu.set_state(arr)
        else:
            self._seed, self._counter = (int(v) for v in np.frombuffer(arr.tobytes(), np.uint64))
        return self

    def get_offset(self) -> int:
        if self._cpu is not None:
            return self._cpu.get_offset()
        return self._counter

    def set_offset(self, offset: int) -> Generator:
        if self._cpu is not None:
            self._cpu.set_offset(offset)
        self._counter = offset
        return self

    def clone_state(self) -> Generator:
        g = Generator(self.device)
        g.set_state(self.get_state())
        return g

    def _next_key(self) -> Any:
        key = jax.random.fold_in(jax.random.PRNGKey(self._seed & 0xFFFFFFFF), self._counter)
        self._counter += 1
        return key

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {id(self):#x}>"


default_generator = Generator("cpu")
expose("torch", "default_generator")(default_generator)
_cuda_generators: dict = {}


def cuda_generator(index: int) -> Generator:
    g = _cuda_generators.get(index)
    if g is None:
        g = _cuda_generators[index] = Generator(_device.device("cuda", index))
        g.manual_seed(default_generator.initial_seed())
    return g


@expose("torch")
def manual_seed(seed: int) -> Generator:
    """Seed the CPU generator (torch's stream) and every CUDA key stream."""
    seed = int(seed)
    default_generator.manual_seed(seed)
    for g in _cuda_generators.values():
        g.manual_seed(seed)
    return default_generator


@expose("torch")
def seed() -> int:
    s = default_generator.seed()
    for g in _cuda_generators.values():
        g.manual_seed(s)
    return s


@expose("torch")
def initial_seed() -> int:
    return default_generator.initial_seed()


@expose("torch")
def get_rng_state() -> Tensor:
    return default_generator.get_state()


@expose("torch")
def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)


# --- where the numbers come from -------------------------------------------------------------------

trace_rng: Any = None  # set by torchlike.compile: an object with .draw(kind, shape, dtype, **params)


def _generator_for(generator: Generator | None, dev: _device.device) -> Generator:
    if generator is not None:
        if generator.device.type != dev.type:
            raise RuntimeError(
                f"Expected a '{dev.type}' device type for generator but found '{generator.device.type}'"
            )
        return generator
    return default_generator if dev.type == "cpu" else cuda_generator(dev.index)


vmap_randomness: str | None = None  # set by torchlike.func.vmap


def _check_vmap() -> None:
    if vmap_randomness == "error":
        raise RuntimeError(
            "vmap: called random operation while in randomness error mode. Please either use the 'same' or "
            "'different' randomness flags on vmap or perform the randomness operation out of vmap"
        )
    if vmap_randomness == "different":
        raise NotImplementedError("torchlike: vmap(randomness='different') is not supported; use 'same'")


def _draw(kind: str, gen: Generator, shape: tuple, dt: D.dtype, contiguous: bool = True, **params: Any) -> Any:
    """An array of random values in memory order for a tensor of ``shape`` (C order if contiguous)."""
    if vmap_randomness is not None:
        _check_vmap()
    if trace_rng is not None:
        return trace_rng.draw(kind, shape, dt, **params)
    if gen._cpu is None:
        return _key_stream_draw(kind, gen, shape, dt, params)
    cpu = gen._cpu
    if kind == "uniform":
        return G.uniform(cpu, shape, dt, params["low"], params["high"])
    if kind == "normal":
        return G.normal(cpu, shape, dt, params["mean"], params["std"], contiguous=contiguous)
    if kind == "random":
        if params["low"] is None:  # random_() without bounds
            return G.random_(cpu, shape, dt)
        return G.random_from_to(cpu, shape, dt, params["low"], params["high"])
    if kind == "exponential":
        return G.exponential(cpu, shape, dt, params["lambd"])
    if kind == "geometric":
        return G.geometric(cpu, shape, dt, params["p"])
    if kind == "log_normal":
        return G.log_normal(cpu, shape, dt, params["mean"], params["std"])
    if kind == "cauchy":
        return G.cauchy(cpu, shape, dt, params["median"], params["sigma"])
    if kind == "bernoulli":
        return G.bernoulli(cpu, params["p"], shape, dt)
    raise ValueError(kind)


def item_draw(kind: str, low: Any, high: Any) -> Any:
    """``torch.empty(1).uniform_(low, high).item()`` (``kind`` "uniform") or ``torch.randint(low, high, (1,)).item()``
    ("random") as a Python number, drawn from the default CPU generator without a tensor, or None where the
    tensor path must run (another default device, a draw being traced or vmapped, a torch-function hook, bounds
    torch refuses: those raise there). Transforms draw their parameters one at a time: the tensor, the fill
    op and the read cost far more than the draw. The same words of the same stream, so the same values."""
    if trace_rng is not None or vmap_randomness is not None or T.hook is not None:
        return None
    dev = _device._default.dev
    if dev is not None and dev.type != "cpu":
        return None
    cpu = default_generator._cpu
    if cpu is None or type(low) not in _NUMBERS or type(high) not in _NUMBERS or not low < high:
        return None
    if kind == "uniform":
        dt = D.get_default_dtype()
        low, high = float(low), float(high)
        if dt is D.float32 and -_BOUND < low and high < _BOUND:  # (in range, and high - low too)
            return G._uniform_one(cpu, low == 0.0 and high == 1.0, low, high)
        return G.uniform(cpu, (1,), dt, low, high)[0].item()
    if type(low) is not int or type(high) is not int:
        return None
    if -_BOUND < low and high < _BOUND:
        return G.randint_one(cpu, low, high)
    return G.random_from_to(cpu, (1,), D.int64, low, high)[0].item()


_NUMBERS = frozenset((int, float))
_BOUND = 2**62  # bounds whose one-number draws skip the range checks: they pass them
_draw_kernels: dict = {}


def _key_stream_draw(kind: str, gen: Generator, shape: tuple, dt: D.dtype, params: dict) -> Any:
    """A draw from ``gen``'s key stream as one kernel of (seed, counter, parameters): a single dispatch
    eagerly, and a node of the pending graph in lazy mode. The counter and the distribution's numbers are
    arguments (Python numbers stay weakly typed), so every step and every new mean, std or bound reuses the
    program; only a parameter's absence (None) or its kind (int or float) selects another one."""
    names = tuple(params)
    values = []
    for v in params.values():
        if v is None or type(v) is bool:
            values.append(v)
        elif isinstance(v, (int, float)):  # numpy scalars become Python numbers (weakly typed in the kernel)
            values.append(float(v) if isinstance(v, float) else int(v))
        else:  # an array-valued parameter (bernoulli's p): drawn as before
            return _jax_draw(kind, gen._next_key(), shape, dt, **params)
    k = _draw_kernel((kind, shape, dt, names, tuple(None if v is None else type(v) for v in values), gen.device))
    counter = gen._counter
    gen._counter += 1
    return lazy.call(k, (np.int64(gen._seed & 0xFFFFFFFF), np.int64(counter), tuple(values)))


def _draw_kernel(key: tuple) -> lazy.PerNode:
    """The kernel of one (kind, shape, dtype, parameter names, parameter types, device)."""
    k = _draw_kernels.get(key)
    if k is None:
        if len(_draw_kernels) > 1024:
            _draw_kernels.clear()
        kind, shape, dt, names, _, dev = key

        def draw(seed: Any, counter: Any, values: tuple) -> Any:
            key = jax.random.fold_in(jax.random.PRNGKey(seed), counter)
            return _jax_draw(kind, key, shape, dt, **dict(zip(names, values)))

        placed = None if dev.type == "cpu" else jax.sharding.SingleDeviceSharding(_device.jax_device(dev))
        jitted = jax.jit(draw, out_shardings=placed)
        k = _draw_kernels[key] = lazy.PerNode(jitted, lambda *args: _bucketed_draw(key, jitted, args), "draw")
    return k


def _bucketed_draw(key: tuple, exact: Any, args: tuple) -> Any:
    """A draw in a lazy structure whose shapes keep changing: drawn flat at its size's coarse bucket and cut on
    the host, no compile per shape. The values are the exact kernel's: JAX's partitionable threefry draws each
    position from its flat index alone, and every distribution here maps positions one to one."""
    kind, shape, dt, names, types, dev = key
    if not jax.config.jax_threefry_partitionable:
        return exact(*args)
    n = math.prod(shape)
    # (powers of two, whatever the shape: the cut values do not depend on the bucket, and a draw compiles slowly)
    flat = _draw_kernel((kind, (max(1 << (n - 1).bit_length(), buckets.COARSE),), dt, names, types, dev))
    out = np.asarray(flat.jitted(*args))[:n].reshape(shape)
    return jax.device_put(out, _device.jax_device(dev))


def _jax_draw(kind: str, key: Any, shape: tuple, dt: D.dtype, **p: Any) -> Any:
    """The same distributions from a jax.random key (CUDA tensors and compiled code)."""
    np_dt = dt.np
    wide = jnp.float32 if dt.itemsize < 4 or not dt.is_floating_point else np_dt
    if kind == "uniform":
        return jax.random.uniform(key, shape, wide, p["low"], p["high"]).astype(np_dt)
    if kind == "normal":
        return (jax.random.normal(key, shape, wide) * p["std"] + p["mean"]).astype(np_dt)
    if kind == "random":
        lo = 0 if p["low"] is None else p["low"]
        hi = p["high"]
        if hi is None:
            hi = 2 ** min(D.finfo(dt).bits if dt.is_floating_point else dt.itemsize * 8 - (dt.is_signed), 53) if dt is not D.bool else 2
            hi = hi + 1 if dt.is_floating_point else hi
        return jax.random.randint(key, shape, lo, hi, dtype=jnp.int64).astype(np_dt)
    if kind == "exponential":
        return (jax.random.exponential(key, shape, wide) / p["lambd"]).astype(np_dt)
    if kind == "geometric":
        return jax.random.geometric(key, p["p"], shape).astype(np_dt)
    if kind == "log_normal":
        return jnp.exp(jax.random.normal(key, shape, wide) * p["std"] + p["mean"]).astype(np_dt)
    if kind == "cauchy":
        return (jax.random.cauchy(key, shape, wide) * p["sigma"] + p["median"]).astype(np_dt)
    if kind == "bernoulli":
        prob = p["p"]
        return jax.random.bernoulli(key, jnp.asarray(prob), shape).astype(np_dt)
    raise ValueError(kind)


def _memory_order(values: Any, shape: tuple, stride: tuple) -> Any:
    """Arrange values drawn in memory order into C order (torch fills strided outputs by address)."""
    if not shape or len(shape) == 1 and stride[0] >= 0:
        return values.reshape(shape)
    offsets = np.zeros(shape, np.int64)
    for d, (n, st) in enumerate(zip(shape, stride)):
        idx_shape = [1] * len(shape)
        idx_shape[d] = n
        offsets = offsets + (np.arange(n) * st).reshape(idx_shape)
    rank = np.empty(offsets.size, np.int64)
    rank[np.argsort(offsets.reshape(-1), kind="stable")] = np.arange(offsets.size)
    return np.asarray(values).reshape(-1)[rank].reshape(shape)


_complex_kernel = jax.jit(lambda v: jax.lax.complex(v[..., 0], v[..., 1]))


def _pairs_to_complex(values: Any) -> Any:
    """(real, imaginary) pairs in the last axis -> complex values (host draws in NumPy, device draws as a kernel)."""
    if isinstance(values, np.ndarray):
        return values[..., 0] + 1j * values[..., 1]
    return lazy.call(_complex_kernel, (values,))


def _to_device(values: Any, dev: _device.device) -> Any:
    if isinstance(values, np.ndarray):
        values = cold_kernels.to_jax(values)
    if dev.type == "cpu" or isinstance(values, (jax.core.Tracer, lazy.LazyArray)):  # key-stream draws are placed
        return values
    return jax.device_put(values, _device.jax_device(dev))


def _fill(entry: registry.RandomDef, self: Tensor, generator: Generator | None, params: dict) -> Tensor:
    """The in-place samplers' one body: draw ``entry.sampler`` with ``params`` in the tensor's memory order
    and write through the door."""
    grad_name, sources = params.pop("grad", (entry.grad_name, ()))
    track = grad_mode._state.enabled and (self._rg or self._base_t is not None or any(t._rg for t in sources))
    if track:
        graph.check_inplace(self)
    dev = self.device
    gen = _generator_for(generator, dev)
    if self._view is None and self._buf.np_strides is None:  # a base tensor is C-contiguous (unless numpy's)
        shape, stride, contiguous = tuple(self._shape), (), True
    else:
        shape, stride, _ = self._geometry()
        shape, stride = tuple(shape), tuple(stride)
        contiguous = self.is_contiguous()
    dt = self._dtype
    if dt.is_complex:  # torch: fill view_as_real(self), real and imaginary parts interleaved in memory
        shape, stride, dt = shape + (2,), tuple(2 * s for s in stride) + (1,), dt.to_real()
    values = _draw(entry.sampler, gen, shape, dt, contiguous, **params)
    if not contiguous and isinstance(values, np.ndarray):
        values = _memory_order(values, shape, stride)
    if self._dtype.is_complex:
        values = _pairs_to_complex(values)
    shape = tuple(self._shape)
    if isinstance(values, np.ndarray):  # a host draw is shaped on the host: the transfer is its only JAX call
        values = values.reshape(shape)
        if dev.type == "cpu" and self._view is None and not track:  # it stays there (host-backed) until a
            self._assign(values)  # kernel reads it
            return self
    values = _to_device(values, dev)
    if tuple(values.shape) != shape:
        values = values.reshape(shape)
    if values.dtype != self._dtype.np:
        values = values.astype(self._dtype.np)
    if track and (self._rg or any(t._rg for t in sources) or self._base_t._rg):
        # torch: a node over the overwritten tensor (and a tensor p) whose gradient is zero
        result = T.make(values, dev, self._dtype)
        graph.zero_gradient(result, grad_name, (self, *sources))
        graph.commit_inplace(self, result)
    else:
        self._assign(values)
    return self


def _float_check(name: str, dt: D.dtype) -> None:
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for \'{D.cpp_name(dt)}\'')


def _continuous_check(what: str, name: Callable, dt: D.dtype) -> None:
    if not dt.is_floating_point:
        raise RuntimeError(
            f"{what} distribution is a continuous probability distribution. dtype must be a floating point but you "
            f"specified {name(dt)}"
        )


def _not_complex(name: str, dt: D.dtype) -> None:
    if dt.is_complex:
        raise NotImplementedError(f'"{name}" not implemented for \'{D.cpp_name(dt)}\'')


# The in-place samplers: each entry checks its arguments as torch does and returns its sampler's parameters.


@registry.defrandom(_fill, sampler="uniform", grad_name="UniformBackward0", namespaces=("Tensor",))
def uniform_(self: Tensor, from_: float = 0, to: float = 1, *, generator: Generator | None = None) -> dict:
    _float_check("check_uniform_bounds", self._dtype.to_real())
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    return {"low": float(from_), "high": float(to)}


@registry.defrandom(_fill, sampler="normal", grad_name="NormalBackward0", namespaces=("Tensor",))
def normal_(self: Tensor, mean: float = 0, std: float = 1, *, generator: Generator | None = None) -> dict:
    _float_check("normal_kernel_cpu", self._dtype.to_real())
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if self._dtype.is_complex:  # torch: each part gets std / sqrt(2), so the complex variance is std**2
        std = std / math.sqrt(2)
    return {"mean": float(mean), "std": float(std)}


@registry.defrandom(_fill, sampler="random", grad_name="RandomBackward0", namespaces=("Tensor",))
def random_(self: Tensor, from_: int | None = None, to: int | None = None, *,
            generator: Generator | None = None) -> dict:  # fmt: skip
    """No bounds: the dtype's whole range, as torch draws it (``low=None``); one bound: ``[0, from_)``."""
    if from_ is None and to is None:
        return {"low": None, "high": None, "grad": ("RandomBackward2", ())}
    if to is None and from_ is not None:
        return {"low": 0, "high": int(from_), "grad": ("RandomBackward1", ())}
    return {"low": int(from_), "high": None if to is None else int(to)}


@registry.defrandom(_fill, sampler="exponential", grad_name="ExponentialBackward0", namespaces=("Tensor",))
def exponential_(self: Tensor, lambd: float = 1, *, generator: Generator | None = None) -> dict:
    _continuous_check("Exponential", D.cpp_name, self._dtype)
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return {"lambd": float(lambd)}


@registry.defrandom(_fill, sampler="geometric", grad_name="GeometricBackward0", namespaces=("Tensor",))
def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> dict:
    _not_complex("geometric_cpu", self._dtype)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return {"p": float(p)}


@registry.defrandom(_fill, sampler="log_normal", grad_name="LogNormalBackward0", namespaces=("Tensor",))
def log_normal_(self: Tensor, mean: float = 1, std: float = 2, *, generator: Generator | None = None) -> dict:
    _float_check("log_normal_cpu", self._dtype)
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return {"mean": float(mean), "std": float(std)}


@registry.defrandom(_fill, sampler="cauchy", grad_name="CauchyBackward0", namespaces=("Tensor",))
def cauchy_(self: Tensor, median: float = 0, sigma: float = 1, *, generator: Generator | None = None) -> dict:
    _continuous_check("Cauchy", D.c_type, self._dtype)
    return {"median": float(median), "sigma": float(sigma)}


@registry.defrandom(_fill, sampler="bernoulli", grad_name="BernoulliBackward2", namespaces=("Tensor",))
def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> dict:
    _not_complex("bernoulli_tensor_cpu_self_" if isinstance(p, Tensor) else "bernoulli_scalar_cpu_", self._dtype)
    if isinstance(p, Tensor):  # its dtype picks torch's float or double draw
        return {"p": np.asarray(p.detach()._host()), "grad": ("BernoulliBackward1", (p,))}
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return {"p": p}


# --- out-of-place draws ------------------------------------------------------------------------------


def _finish(t: Tensor, requires_grad: bool, out: Tensor | None) -> Tensor:
    if out is not None:
        registry.copy_to_out(t, out)
        return out
    if requires_grad:
        t._new_requires_grad()
    return t


def _random_size(fname: str, args: tuple, size: Any, kwargs: tuple) -> tuple:
    """torch's size arguments of rand/randn: with no argument at all, its message lists both signatures."""
    if not args and size is REQUIRED and all(v is None or v is False for v in kwargs):
        sig = ("torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
               "bool requires_grad = False)")  # fmt: skip
        raise TypeError(
            f"{fname}() received an invalid combination of arguments - got (), but expected one of:\n"
            f" * (tuple of ints size, *, torch.Generator generator, Tensor out = None, torch.dtype dtype = None, {sig}\n"
            f" * (tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, {sig}\n"
        )
    return size_args(fname, args, size)


def _new_filled(entry: registry.RandomDef, generator: Generator | None, out: Tensor | None, requires_grad: bool,
                new: tuple) -> Tensor:  # fmt: skip
    """The factories' one body: ``new = (size, dtype, device, arguments)`` is a new tensor filled by the entry's
    in-place sampler ``fill`` with those arguments (its checks included), then torch's ``out=`` or
    ``requires_grad``."""
    size, dtype, device, args = new
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if trace_rng is None and _dev(device).type == "cpu":  # drawn on the host, kept there (T.make_host)
        t = T.make_host(np.empty(parse_size(size, entry.name), dt.np), dt)
    else:
        t = _factory(entry.name, size, 0, dt, device, False)
    with grad_mode.no_grad():
        entry.fill(t, *args, generator=generator)
    return _finish(t, requires_grad, out)


def _sized(fname: str) -> Callable:
    """The argument function of ``fname`` (``rand``/``randn``): a tensor of the given size filled at the
    sampler's default parameters; the size as ``*size`` or ``size=``, as torch takes it."""

    def sized(*args: Any, size: Any = REQUIRED, generator: Generator | None = None, out: Tensor | None = None,
              dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
              pin_memory: bool = False) -> tuple:  # fmt: skip
        size = _random_size(fname, args, size, (generator, out, dtype, layout, device, requires_grad, pin_memory))
        return size, dtype, device, ()

    sized.__name__ = sized.__qualname__ = fname
    return sized


def _like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
          memory_format: Any = None, generator: Generator | None = None) -> tuple:  # fmt: skip
    """A tensor of ``input``'s size, dtype and device filled at the sampler's default parameters."""
    return (input._shape,), dtype or input._dtype, device or input.device, ()


rand = registry.defrandom(_new_filled, name="rand", fill=uniform_)(_sized("rand"))
randn = registry.defrandom(_new_filled, name="randn", fill=normal_)(_sized("randn"))
rand_like = registry.defrandom(_new_filled, name="rand_like", fill=uniform_)(_like)
randn_like = registry.defrandom(_new_filled, name="randn_like", fill=normal_)(_like)


def _int_range(low: int, high: int) -> tuple:
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return int(low), int(high)


@registry.defrandom(_new_filled, fill=random_)
def randint(*args: Any, generator: Generator | None = None, out: Tensor | None = None, dtype: Any = None,
            layout: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
            size: Any = None, low: int | None = None, high: int | None = None) -> tuple:  # fmt: skip
    """torch.randint(high, size) or torch.randint(low, high, size)."""
    args = list(args)
    if size is None:
        size = args.pop()
    if high is None:
        high = args.pop() if args else None
    if low is None:
        low = args.pop() if args else 0
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    return (tuple(size),), D.int64 if dtype is None else dtype, device, _int_range(low, high)


@registry.defrandom(_new_filled, fill=random_)
def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, dtype: Any = None, layout: Any = None,
                 device: Any = None, requires_grad: bool = False, memory_format: Any = None,
                 generator: Generator | None = None) -> tuple:  # fmt: skip
    if high is None:
        low, high = 0, low
    return (tuple(input._shape),), dtype or input._dtype, device or input.device, _int_range(low, high)


@registry.defrandom()
def randperm(n: int, *, generator: Generator | None = None, out: Tensor | None = None, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    if n < 0:
        if out is None:  # torch: the result is made first, with its own check
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
        raise RuntimeError(f"n must be non-negative, got{n}")
    dt = D.to_dtype(dtype) if dtype is not None else D.int64
    dev = _dev(device)
    gen = _generator_for(generator, dev)
    if trace_rng is not None:
        values = trace_rng.permutation(n, dt)
    elif gen._cpu is None:
        values = jax.random.permutation(gen._next_key(), n).astype(dt.np)
    else:
        values = G.randperm(gen._cpu, n, dt)
    if isinstance(values, np.ndarray) and dev.type == "cpu":
        t = T.make_host(values, dt)
    else:
        t = T.make(_to_device(values, dev), dev, dt)
    return _finish(t, requires_grad, out)


def _draw_name(static: tuple, dyn: tuple) -> str:
    return static[0]


@registry.defop("_attach_draw", promote=None, method=False, grad_name=_draw_name, saves=())
def _attach_draw(values: registry.RawTensor, first: registry.OptRawTensor, second: registry.OptRawTensor,
                 node: str) -> Any:  # fmt: skip
    """``values`` drawn from distributions with parameters ``first``/``second``, as a graph node: torch's
    gradient through normal(mean, std) and bernoulli(p) is zero, but the result is differentiable."""
    return values


def _on_graph(values: Tensor, node: str, first: Any, second: Any = None) -> Tensor:
    params = [t if isinstance(t, Tensor) and t.requires_grad else None for t in (first, second)]
    if not grad_mode.is_grad_enabled() or all(p is None for p in params):
        return values
    return _attach_draw(values, params[0], params[1], node)


@registry.defrandom(fill=normal_)
def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Generator | None = None,
           out: Tensor | None = None, dtype: Any = None, layout: Any = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.normal: (Tensor, Tensor), (Tensor, float), (float, Tensor) or (float, float, size); the last is a
    factory filled by ``normal_``."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        gen = _generator_for(generator, ref.device)
        m = mean.detach()._host() if isinstance(mean, Tensor) else mean
        s = std.detach()._host() if isinstance(std, Tensor) else std
        if isinstance(std, Tensor) and (np.asarray(s) < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        if gen._cpu is not None and trace_rng is None:
            values = G.normal_tensor(gen._cpu, m, s)
        else:
            shape = np.broadcast_shapes(np.shape(m), np.shape(s))
            values = _draw("normal", gen, shape, ref._dtype, mean=0.0, std=1.0) * jnp.asarray(s) + jnp.asarray(m)
        t = T.make(_to_device(np.asarray(values) if isinstance(values, np.ndarray) else values, ref.device).astype(ref._dtype.np), ref.device, ref._dtype)
        if out is None:
            kind = 3 if isinstance(mean, Tensor) and isinstance(std, Tensor) else 1 if isinstance(mean, Tensor) else 2
            t = _on_graph(t, f"NormalBackward{kind}", mean, std)
        return _finish(t, requires_grad, out)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - got (float, float), but expected "
                        "(float mean, float std, tuple of ints size, *, torch.Generator generator, Tensor out, ...)")
    new = ((tuple(size),), dtype, device, (float(mean), float(std)))
    return _new_filled(registry.RANDOM["normal"], generator, out, requires_grad, new)


@registry.defrandom(namespaces=("torch", "Tensor"))
def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None,
              out: Tensor | None = None) -> Tensor:
    """torch.bernoulli: draws with probabilities ``input`` (or ``p``), through ``bernoulli_``."""
    t = T.make_on(jnp.zeros(tuple(input._shape), input._dtype.np), input.device, input._dtype)
    with grad_mode.no_grad():
        bernoulli_(t, input if p is None else p, generator=generator)
    if p is None and out is None:
        t = _on_graph(t, "BernoulliBackward0", input)
    return _finish(t, False, out)


@registry.defrandom(namespaces=("torch", "Tensor"))
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None, out: Tensor | None = None) -> Tensor:
    gen = _generator_for(generator, input.device)
    probs = np.asarray(input.detach()._host(), np.float64)
    if gen._cpu is None or trace_rng is not None:
        key = gen._next_key() if gen._cpu is None else trace_rng.key()
        logits = jnp.log(jnp.asarray(probs))
        if replacement:
            values = jax.random.categorical(key, logits, axis=-1, shape=(num_samples,) + logits.shape[:-1])
            values = jnp.moveaxis(values, 0, -1)
        else:
            g = jax.random.gumbel(key, logits.shape)
            values = jnp.argsort(-(logits + g), axis=-1)[..., :num_samples]
    else:
        values = G.multinomial(gen._cpu, probs, num_samples, replacement)
    t = T.make(_to_device(values, input.device).astype(np.int64), input.device, D.int64)
    return _finish(t, False, out)


@jax.custom_vjp
def _gamma_pass(concentration: Any, sample: Any) -> Any:
    return sample


def _gamma_pass_fwd(concentration: Any, sample: Any) -> tuple:
    return sample, (concentration, sample)


def _gamma_pass_bwd(res: tuple, g: Any) -> tuple:
    concentration, sample = res
    return g * standard_gamma_grad(concentration, sample).astype(g.dtype), jnp.zeros_like(sample)


_gamma_pass.defvjp(_gamma_pass_fwd, _gamma_pass_bwd)


@registry.defop(promote=None, method=False, grad_name="StandardGammaBackward0")
def _gamma_reparam(concentration: registry.RawTensor, sample: registry.RawTensor) -> Any:
    """``sample`` (drawn from Gamma(concentration)), with the reparameterised gradient to ``concentration``."""
    return _gamma_pass(concentration, sample)


@registry.defop(promote=None, namespaces=("torch",), differentiable=False)
def _standard_gamma_grad(input: registry.RawTensor, output: registry.RawTensor) -> Any:
    """torch._standard_gamma_grad(alpha, sample): d sample / d alpha."""
    return standard_gamma_grad(input, output)


@registry.defop(promote=None, namespaces=("torch",), differentiable=False)
def _dirichlet_grad(x: registry.RawTensor, alpha: registry.RawTensor, total: registry.RawTensor) -> Any:
    """torch._dirichlet_grad: -(d/dalpha CDF) / pdf / (1 - x) of the marginal Beta(alpha, total - alpha) at x.

    torch evaluates series and rational approximations of it; this takes the Beta CDF's derivative by central
    differences in float64, so the two agree to the approximations' accuracy, not bit for bit."""
    xd, a, t = (v.astype(jnp.float64) for v in (x, alpha, total))
    b = t - a
    h = 1e-6 * jnp.maximum(a, 1e-3)
    dcdf = (jax.scipy.special.betainc(a + h, b, xd) - jax.scipy.special.betainc(a - h, b, xd)) / (2 * h)
    log_pdf = (a - 1) * jnp.log(xd) + (b - 1) * jnp.log1p(-xd) - jax.scipy.special.betaln(a, b)
    return (-dcdf / jnp.exp(log_pdf) / (1 - xd)).astype(x.dtype)


def _gamma_family_draw(sampler: str, input: Tensor, generator: Generator | None) -> Tensor:
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"{'gamma_cpu' if sampler == 'gamma' else 'dirichlet'}\" not implemented for "
                                  f"'{D.cpp_name(input._dtype)}'")  # fmt: skip
    gen = _generator_for(generator, input.device)
    alpha = input.detach()
    if gen._cpu is not None and trace_rng is None:
        host = np.asarray(alpha._host())
        values: Any = (G.standard_gamma if sampler == "gamma" else G.dirichlet)(gen._cpu, host, input._dtype)
    else:  # key stream: reproducible, not torch's numbers
        key = gen._next_key() if gen._cpu is None else trace_rng.key()
        a = alpha._data()
        values = jax.random.gamma(key, a, dtype=a.dtype)
        tiny = jnp.finfo(a.dtype).tiny
        values = jnp.maximum(values, tiny)
        if sampler == "dirichlet":
            values = jnp.clip(values / values.sum(-1, keepdims=True), tiny, jnp.nextafter(jnp.ones((), a.dtype), 0))
    return T.make(_to_device(values, input.device).astype(input._dtype.np), input.device, input._dtype)


@registry.defrandom()
def _standard_gamma(input: Tensor, generator: Generator | None = None) -> Tensor:
    """torch._standard_gamma: Gamma(input, 1) draws (torch's CPU sampler, bit for bit), reparameterised."""
    t = _gamma_family_draw("gamma", input, generator)
    if input.requires_grad and grad_mode.is_grad_enabled():
        t = _gamma_reparam(input, t)
    return t


@registry.defrandom()
def _sample_dirichlet(input: Tensor, generator: Generator | None = None) -> Tensor:
    """torch._sample_dirichlet: Dirichlet(input) draws over the last dim (torch's CPU sampler, bit for bit)."""
    return _gamma_family_draw("dirichlet", input, generator)


@jax.custom_vjp
def _count_pass(rates: Any, sample: Any) -> Any:
    return sample


def _count_pass_fwd(rates: Any, sample: Any) -> tuple:
    return sample, rates


def _count_pass_bwd(rates: Any, g: Any) -> tuple:
    return jnp.zeros_like(rates), jnp.zeros_like(g)


_count_pass.defvjp(_count_pass_fwd, _count_pass_bwd)


@registry.defop(promote=None, method=False, grad_name="PoissonBackward0")
def _poisson_reparam(rates: registry.RawTensor, sample: registry.RawTensor) -> Any:
    """``sample`` (drawn from Poisson(rates)) joined to the graph with torch's zero gradient to ``rates``."""
    return _count_pass(rates, sample)


@registry.defrandom()
def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """torch.poisson: Poisson(input) draws (torch's CPU sampler, bit for bit), as input's dtype."""
    if not input._dtype.is_floating_point or input._dtype.is_complex:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{D.cpp_name(input._dtype)}'")
    gen = _generator_for(generator, input.device)
    rates = input.detach()
    if gen._cpu is not None and trace_rng is None:
        values: Any = G.poisson(gen._cpu, np.asarray(rates._host()), input._dtype)
    else:  # key stream: reproducible, not torch's numbers
        key = gen._next_key() if gen._cpu is None else trace_rng.key()
        lam = rates._data().astype(jnp.float32)
        values = jax.random.poisson(key, lam, dtype=jnp.int32).astype(lam.dtype)
    t = T.make(_to_device(values, input.device).astype(input._dtype.np), input.device, input._dtype)
    if input.requires_grad and grad_mode.is_grad_enabled():
        t = _poisson_reparam(input, t)
    return t


@registry.defrandom()
def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """torch.binomial: Binomial(count, prob) draws (torch's CPU sampler, bit for bit), as count's dtype."""
    if not count._dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {D.cpp_name(count._dtype)}")
    if prob._dtype is not count._dtype:
        raise RuntimeError(f"Found dtype {D.cpp_name(prob._dtype)} but expected {D.cpp_name(count._dtype)}")
    if count._dtype not in (D.float32, D.float64):
        raise NotImplementedError(f"\"binomial_cpu\" not implemented for '{D.cpp_name(count._dtype)}'")
    err = registry._broadcast_error([count, prob])
    if err is not None:
        raise err
    shape = np.broadcast_shapes(tuple(count.shape), tuple(prob.shape))
    gen = _generator_for(generator, count.device)
    if gen._cpu is not None and trace_rng is None:
        values: Any = G.binomial(gen._cpu, np.asarray(count.detach()._host()), np.asarray(prob.detach()._host()),
                                 count._dtype)  # fmt: skip
    else:  # key stream: reproducible, not torch's numbers
        key = gen._next_key() if gen._cpu is None else trace_rng.key()
        n = jnp.broadcast_to(count.detach()._data(), shape)
        p = jnp.broadcast_to(prob.detach()._data(), shape)
        values = jax.random.binomial(key, n, jnp.clip(p, 0, 1), shape=shape, dtype=n.dtype)
    return T.make(_to_device(values, count.device).astype(count._dtype.np), count.device, count._dtype)


@contextlib.contextmanager
def fork_rng(devices: Sequence[Any] = (), enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda") -> Iterator[None]:
    """torch.random.fork_rng: restore the generators' states on exit."""
    if not enabled:
        yield
        return
    cpu_state = default_generator.get_state()
    cuda_states = {i: g.get_state() for i, g in _cuda_generators.items()}
    try:
        yield
    finally:
        default_generator.set_state(cpu_state)
        for i, s in cuda_states.items():
            _cuda_generators[i].set_state(s)


