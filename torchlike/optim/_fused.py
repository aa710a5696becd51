"""One jitted update over every parameter of every group per ``step()``.

An optimizer built on ``FusedOptimizer`` gives its maths as two pure functions, mirroring
torch's ``_single_tensor_<name>``:

    _init(static, h, p, scalar_dtype) -> {state key: array}      # lazy state, torch's key order
    _prepare(static, h, scalars) -> {name: per-parameter vector}  # step-dependent scalars
    _update(static, h, p, g, state, c) -> (new p, {state key: new array})

``_prepare`` computes from a parameter's 0-dim states (``step``...) what torch computes from them
in Python (bias corrections...) and ``_update`` gets them as ``c``. ``fused_update`` traces ``_update`` once per parameter
(complex ones through their real view, as torch does) into one XLA program. (Concatenating all parameters into one flat vector would
make a smaller program, but splitting the result back into 100 parameters costs XLA more to
compile than the per-parameter updates.)

``static`` is a hashable tuple of the group's structural options (flags, ``x != 0`` tests that
torch makes in Python); ``h`` is a float64 vector of the group's hyper-parameters. Both are
arguments of the jitted call, so changing ``param_groups[i]['lr']`` takes effect at the next
step without recompiling; a different static tuple compiles once more. Results are written back
through ``Tensor._assign``, the one mutation door.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from .._core import _xla_tiers, cold_kernels, lazy
from .._core import tensor as T
from .._core.tensor import Tensor
from . import _math as M
from .optimizer import Optimizer, _closure_loss, _get_scalar_dtype

_FLAG_DEFAULTS = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False,
                  "decoupled_weight_decay": False, "fused": None}  # fmt: skip
_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]
_ZERO = np.int64(0)


def _real_view(a: Any) -> Any:
    return jnp.stack([a.real, a.imag], axis=-1)


def _complex_view(a: Any) -> Any:
    return jax.lax.complex(a[..., 0], a[..., 1])


def _one(update: Callable, static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
    if not jnp.iscomplexobj(p):
        return update(static, h, p, g, st, c)
    # torch: complex parameters are updated through torch.view_as_real
    shape = p.shape
    st_r = {k: _real_view(v) if v.shape == shape and jnp.iscomplexobj(v) else v for k, v in st.items()}
    new_p, new_st = update(static, h, _real_view(p), _real_view(g), st_r, c)
    rshape = shape + (2,)
    return _complex_view(new_p), {k: _complex_view(v) if v.shape == rshape else v for k, v in new_st.items()}


def _group_update(cls: type, static: tuple, h: Any, ps: list, gs: list, ss: list) -> list:
    # Off the CPU (no exact torch rounding to reproduce) an optimizer may run as optax transformations.
    optax_path = not M._exact[0] and cls._update_optax is not None and cls._optax_ok(static)
    update = cls._update_optax if optax_path else cls._update
    out = []
    for p, g, s in zip(ps, gs, ss):
        # NOTE: computing these scalars for all parameters at once (stacked) makes XLA's compile time grow
        # much faster with the number of parameters than this per-parameter form does
        coef = cls._prepare(static, h, {k: s[k] for k in cls._scalar_keys if k in s})
        # optax mixes its hyper-parameters straight into the arithmetic: float64 ones would promote
        # every moment and update to float64, so they enter in the parameter's compute type
        hp = h.astype(M._opmath(jnp.real(p).dtype)) if optax_path else h
        out.append(_one(update, static, hp, p, g, s, coef))
    return out


def _fused_update(cls: type, statics: tuple, hypers: list, params: list, grads: list, states: list, zero: Any,
                 exact: bool = True) -> list:
    """The whole optimizer step: every parameter of every group, one XLA program.

    ``zero`` is a runtime 0 for the rounding fences of ``_math``. ``exact`` (CPU parameters)
    reproduces torch's CPU rounding; on GPUs, where torch's own fused kernels round differently
    anyway, plain arithmetic lets XLA fuse freely.
    """
    with M.fence_zero(zero, exact):
        return [_group_update(cls, *args) for args in zip(statics, hypers, params, grads, states)]


fused_update = jax.jit(_fused_update, static_argnums=(0, 1, 7))
_fused_update_one_op: list = []  # built at the first step (the backend is known then): no autotuning on a GPU


def _update_kernel() -> Callable | None:
    """``fused_update`` built by ``one_op_jit`` on a GPU; None elsewhere (``fused_update`` itself)."""
    if not _fused_update_one_op:
        _fused_update_one_op.append(_xla_tiers.one_op_jit(_fused_update, static_argnums=(0, 1, 7))
                                    if _xla_tiers.one_op_cold() else None)
    return _fused_update_one_op[0]


@functools.partial(jax.jit, static_argnums=(0, 1, 3))
def _fused_init(init: Callable, static: tuple, h: Any, scalar_dtype: Any, params: list) -> list:
    return [init(static, h, p, scalar_dtype) for p in params]


# Set by torchlike.compile (a room above) when it loads: reads a hyperparameter as a program input.
read_hyper: Callable[[Any, Any], Any] | None = None


def _hp(container: Any, key: Any) -> Any:
    """``container[key]``; inside ``torchlike.compile`` an input of the compiled program instead of a
    constant baked into it, so a scheduler's new lr reaches compiled steps without recompiling."""
    if T.hook is None or read_hyper is None:
        return container[key]
    return read_hyper(container, key)


class _Hyper:
    """A param group seen through ``_hp``: what ``_hyper`` reads."""

    __slots__ = ("group",)

    def __init__(self, group: dict) -> None:
        self.group = group

    def __getitem__(self, key: str) -> Any:
        return _hp(self.group, key)


def _hyper_vector(values: tuple) -> Any:
    if all(isinstance(v, (int, float, np.number)) for v in values):
        return np.array(values, dtype=np.float64)
    return jnp.stack([jnp.asarray(v, jnp.float64) for v in values])


class FusedOptimizer(Optimizer):
    """Base of the optimizers whose step is one jitted update (all but LBFGS)."""

    _init: Callable | None = None
    _update: Callable
    # The same update written with optax transformations, used where torch's CPU rounding needn't be
    # reproduced (parameters on a GPU); ``_optax_ok(static)`` says which option sets it covers.
    _update_optax: Callable | None = None

    @staticmethod
    def _optax_ok(static: tuple) -> bool:
        return True
    _state_order: tuple[str, ...] = ()
    _scalar_keys: tuple[str, ...] = ("step",)  # the 0-dim states, stacked for ``_prepare``
    # torch's wording of the capturable device check, and whether XLA counts as supported
    _capturable_what = "params and state_steps"
    _capturable_xla = True

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        if defaults.get("differentiable"):
            raise NotImplementedError(
                f"torchlike: {type(self).__name__}(differentiable=True) is not supported: optimizer steps run "
                "outside autograd as one compiled update"
            )
        super().__init__(params, defaults)

    def _static(self, group: dict[str, Any]) -> tuple:
        """The group's structural options; most updates need ``(maximize, has weight decay)``."""
        return (group["maximize"], group["weight_decay"] != 0)

    def _hyper(self, group: dict[str, Any]) -> tuple:
        raise NotImplementedError

    def _check_capturable(self, params: list) -> None:
        devices = _CAPTURABLE_DEVICES if self._capturable_xla else [d for d in _CAPTURABLE_DEVICES if d != "xla"]
        for p in params:
            if p.device.type not in devices:
                raise AssertionError(
                    f"If capturable=True, {self._capturable_what} must be on supported devices: {devices}."
                )

    def _init_states(self, group: dict[str, Any], static: tuple, h: Any, params: list) -> None:
        init = type(self)._init
        if init is None:
            return
        sdt = np.dtype(_get_scalar_dtype(group.get("fused")).np)
        arrays = lazy.call(_init_kernel(init, static, sdt), (h, [p._peek() for p in params]))
        for p, d in zip(params, arrays):
            st = self.state[p]
            dev = p.device
            for key in self._state_order:
                if key in d:
                    st[key] = T.make(d[key], dev)

    def step(self, closure: Callable[[], float] | None = None) -> Any:
        """One optimization step (the closure, if given, is run first with grad enabled)."""
        loss = _closure_loss(closure)
        self._fused_step()
        if lazy._on:  # the step ends a training iteration: launch it (asynchronously) as one program
            lazy.flush("optimizer step")
        return loss

    def _fused_step(self) -> None:
        statics, hypers, plist, params, grads, states = [], [], [], [], [], []
        state = self.state
        for group in self.param_groups:
            ps = [p for p in group["params"] if p._grad is not None]
            if not ps:
                continue
            static = self._static(group)
            h = _hyper_vector(self._hyper(_Hyper(group)))
            if group.get("capturable"):
                self._check_capturable(ps)
            fresh = [p for p in ps if not state.get(p)]
            if fresh:
                self._init_states(group, static, h, fresh)
            statics.append(static)
            hypers.append(h)
            plist.append(ps)
            params.append([p._peek() for p in ps])
            grads.append([p._grad._peek() for p in ps])
            states.append([_arrays(state.get(p)) for p in ps])
        if not plist:
            return
        # torch's CPU rounding is reproduced in eager steps only: like torch.compile, a compiled step
        # promises the same maths, not the same last bits, and the fences would stop XLA fusing it
        exact = T.hook is None and all(p.device.type == "cpu" for ps in plist for p in ps)
        out = lazy.call(_step_kernel(type(self), tuple(statics), exact), (hypers, params, grads, states, _ZERO))
        for ps, results in zip(plist, out):
            for p, (new_p, new_state) in zip(ps, results):
                p._assign(new_p)
                if not new_state:
                    continue
                st = state[p]
                for key, arr in new_state.items():
                    t = st.get(key)
                    if t is None:
                        st[key] = T.make(arr, p.device)
                    else:
                        t._assign(arr)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        from .._ops import creation

        for group in self.param_groups:
            for key, value in self._group_defaults().items():
                group.setdefault(key, value)
            for p in group["params"]:
                p_state = self.state.get(p)
                if not p_state:
                    continue
                for key in self._scalar_keys:
                    if key in p_state and not isinstance(p_state[key], Tensor):
                        p_state[key] = creation.tensor(float(p_state[key]), dtype=_get_scalar_dtype())

    def _group_defaults(self) -> dict[str, Any]:
        """Options that old state dicts may lack (torch's ``__setstate__`` setdefaults): the flags among
        this optimizer's defaults; a subclass adds its own (Adam's ``amsgrad``)."""
        return {k: v for k, v in _FLAG_DEFAULTS.items() if k in self.defaults}

    @staticmethod
    def _prepare(static: tuple, h: Any, s: dict) -> dict:
        """The scalars a parameter's update needs, from its 0-dim states (torch's Python-float maths)."""
        return {"step": s["step"] + 1} if "step" in s else {}


def _arrays(st: dict | None) -> dict:
    if not st:
        return {}
    return {k: v._peek() for k, v in st.items() if isinstance(v, Tensor)}


_step_kernels: dict = {}
_init_kernels: dict = {}


def _init_kernel(init: Callable, static: tuple, scalar_dtype: Any) -> Callable:
    """``_fused_init`` with its static arguments bound (one function object per structure, as ``_step_kernel``)."""
    key = (init, static, scalar_dtype)
    k = _init_kernels.get(key)
    if k is None:
        if len(_init_kernels) > 256:
            _init_kernels.clear()

        def k(h: Any, params: list) -> list:
            return _fused_init(init, static, h, scalar_dtype, params)

        _init_kernels[key] = k
    return k


def _step_kernel(cls: type, statics: tuple, exact: bool) -> Callable:
    """``fused_update`` with its static arguments bound: one function object per optimizer structure, so
    a lazy graph's key sees the same node every step."""
    key = (cls, statics, exact)
    k = _step_kernels.get(key)
    if k is None:
        if len(_step_kernels) > 256:
            _step_kernels.clear()

        cold = _update_kernel()

        def k(hypers: list, params: list, grads: list, states: list, zero: Any) -> list:
            return (cold or fused_update)(cls, statics, hypers, params, grads, states, zero, exact)

        # the first steps (and steps of new parameter shapes) run without compiling: see cold_kernels
        k = _step_kernels[key] = cold_kernels.cold(k, "fused_update", direct=True)
    return k


def zeros_init(*keys: str) -> Any:
    """The usual ``_init``: a 0-dim zero ``step`` in the scalar dtype and zeroed buffers shaped like the parameter."""

    def init(static: tuple, h: Any, p: Any, sdt: Any) -> dict:
        return {k: jnp.zeros((), sdt) if k == "step" else jnp.zeros_like(p) for k in keys}

    return staticmethod(init)


def hyper(*values: Any) -> tuple:
    """Hyper-parameters as numbers or arrays (torch accepts 1-element tensors for lr and betas)."""
    return tuple(v._data().reshape(()) if isinstance(v, Tensor) else v for v in values)
