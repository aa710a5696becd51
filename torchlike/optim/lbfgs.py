"""torch.optim.LBFGS (with torch's strong-Wolfe line search).

LBFGS is driven by the host: it calls the closure several times per step and branches on scalar
results. The vector work of each iteration is one jitted call (gathering the flat gradient,
moving the parameters along the direction, the two-loop recursion over the history), and the
scalar bookkeeping uses numpy scalars of the parameters' dtype, which round and compare the way
torch's 0-dim tensors do. Dot products are XLA reductions, whose summation order differs from
torch's BLAS, so results agree to rounding, not bit for bit.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from .._core import cold_kernels
from .._core import tensor as T
from .._core.tensor import Tensor
from ..autograd import grad_mode
from . import _math as M
from ._fused import _ZERO
from .optimizer import Optimizer

__all__ = ["LBFGS"]


def _real(a: Any) -> Any:
    return jnp.stack([a.real, a.imag], axis=-1) if jnp.iscomplexobj(a) else a


@jax.jit
def _gather_flat_grad(params: list, grads: list) -> tuple:
    """torch's ``_gather_flat_grad`` (zeros for params without grad), with its abs max and abs sum."""
    views = [_real(g if g is not None else jnp.zeros_like(p)).reshape(-1) for p, g in zip(params, grads)]
    flat = jnp.concatenate(views) if len(views) > 1 else views[0]
    a = jnp.abs(flat)
    return flat, jnp.max(a), jnp.sum(a)


@jax.jit
def _add_grad(params: list, d: Any, step_size: Any, zero: Any) -> list:
    """``p.add_(d[offset:offset + numel].view_as(p), alpha=step_size)`` for every parameter."""
    out, offset = [], 0
    with M.fence_zero(zero):
        for p in params:
            pr = _real(p)
            piece = d[offset : offset + pr.size].reshape(pr.shape)
            offset += pr.size
            new = M.add(pr, piece, step_size)
            out.append(jax.lax.complex(new[..., 0], new[..., 1]) if jnp.iscomplexobj(p) else new)
    return out


@jax.jit
def _curvature(flat_grad: Any, prev_flat_grad: Any, d: Any, t: Any, zero: Any) -> tuple:
    with M.fence_zero(zero):
        y = M.sub(flat_grad, prev_flat_grad)
        s = M.mul_scalar(d, t)
    return y, s, jnp.dot(y, s), jnp.dot(y, y)


@jax.jit
def _two_loop(flat_grad: Any, dirs: tuple, stps: tuple, ro: tuple, num_old: Any, h_diag: Any, zero: Any) -> tuple:
    """The L-BFGS two-loop recursion over the first ``num_old`` history entries (lists padded)."""
    dt = flat_grad.dtype
    dirs_a, stps_a = jnp.stack(dirs), jnp.stack(stps)
    ro_a = jnp.stack([jnp.asarray(r, dt) for r in ro])

    with M.fence_zero(zero):

        def first(k: Any, carry: tuple) -> tuple:
            q, al = carry
            i = num_old - 1 - k
            al_i = M.mul(jnp.dot(stps_a[i], q), ro_a[i])
            return M.add(q, dirs_a[i], -al_i), al.at[i].set(al_i)

        q, al = jax.lax.fori_loop(0, num_old, first, (-flat_grad, jnp.zeros(len(dirs), dt)))
        r = M.mul(q, jnp.asarray(h_diag, dt))

        def second(i: Any, r: Any) -> Any:
            be_i = M.mul(jnp.dot(dirs_a[i], r), ro_a[i])
            return M.add(r, stps_a[i], M.sub(al[i], be_i))

        r = jax.lax.fori_loop(0, num_old, second, r)
    return r, al


@jax.jit
def _abs_max_scaled(d: Any, t: Any, zero: Any) -> Any:
    with M.fence_zero(zero):
        return jnp.max(jnp.abs(M.mul_scalar(d, t)))


@jax.jit
def _dot(a: Any, b: Any) -> Any:
    return jnp.dot(a, b)


def _cubic_interpolate(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any, bounds: Any = None) -> Any:
    # torch's code on 0-dim tensors; numpy scalars of the same dtype round the same way
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(
    obj_func: Callable, x: Any, t: Any, d: Any, f: Any, g: Any, gtd: Any, c1: float = 1e-4, c2: float = 0.9,
    tolerance_change: float = 1e-9, max_ls: int = 25,
) -> tuple:  # fmt: skip
    d_norm = d.abs_max
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f, bracket_g, bracket_gtd = (
                [t_prev, t],
                [f_prev, f_new],
                [g_prev, g_new],
                [gtd_prev, gtd_new],
            )
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f, bracket_g, bracket_gtd = (
                [t_prev, t],
                [f_prev, f_new],
                [g_prev, g_new],
                [gtd_prev, gtd_new],
            )
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new, gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos], bracket_g[high_pos], bracket_gtd[high_pos] = (
                t,
                f_new,
                g_new,
                gtd_new,
            )
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos] = bracket[low_pos]
                bracket_f[high_pos] = bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos], bracket_g[low_pos], bracket_gtd[low_pos] = t, f_new, g_new, gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class _Vec:
    """A flat vector of the step (a JAX array) with the host-side scalars LBFGS asks of it."""

    __slots__ = ("a", "sdt", "_abs_max", "abs_sum")

    def __init__(self, a: Any, sdt: Any, abs_max: Any = None, abs_sum: Any = None) -> None:
        self.a = a
        self.sdt = sdt
        self._abs_max = abs_max
        self.abs_sum = abs_sum

    def dot(self, other: _Vec) -> Any:
        return self.sdt(_dot(self.a, other.a))

    @property
    def abs_max(self) -> Any:
        if self._abs_max is None:
            self._abs_max = jnp.max(jnp.abs(self.a))
        return self.sdt(self._abs_max)


class LBFGS(Optimizer):
    """torch.optim.LBFGS. ``step(closure)`` needs the closure; state has torch's keys and layout."""

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change, "history_size": history_size, "line_search_fn": line_search_fn,
        }  # fmt: skip
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache: int | None = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(2 * p.numel() if p.is_complex() else p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> _Vec:
        params = [p._data() for p in self._params]
        grads = [None if p._grad is None else p._grad._data() for p in self._params]
        flat, abs_max, abs_sum = _gather_flat_grad(params, grads)
        return _Vec(flat, np.dtype(flat.dtype).type, abs_max, abs_sum)

    def _add_grad(self, step_size: Any, update: _Vec) -> None:
        new = _add_grad([p._data() for p in self._params], update.a, float(step_size), _ZERO)
        for p, a in zip(self._params, new):
            p._assign(a)

    def _clone_param(self) -> list:
        return [p._data() for p in self._params]  # arrays are immutable: holding them is a copy

    def _set_param(self, params_data: list) -> None:
        for p, a in zip(self._params, params_data):
            p._assign(a)

    def _directional_evaluate(self, closure: Callable, x: list, t: Any, d: _Vec) -> tuple:
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable) -> Any:  # type: ignore[override]
        """One optimization step of up to ``max_iter`` iterations; ``closure`` re-evaluates the loss."""
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")
        # compiled kernels throughout: the line search's decisions turn NumPy's last-bit rounding (the cold
        # path's) into a different trajectory from torch's
        with grad_mode.no_grad(), cold_kernels.exact():
            return self._step(grad_mode.enable_grad()(closure))

    def _step(self, closure: Callable) -> Any:
        group = self.param_groups[0]
        lr = group["lr"]
        lr = float(lr) if isinstance(lr, Tensor) else lr
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        sdt = flat_grad.sdt
        if flat_grad.abs_max <= tolerance_grad:
            return orig_loss

        d = _vec_of(state.get("d"), sdt)
        t = _host(state.get("t"), sdt)
        old_dirs = state.get("old_dirs")
        old_stps = state.get("old_stps")
        ro = state.get("ro")
        h_diag = state.get("H_diag")
        prev_flat_grad = _vec_of(state.get("prev_flat_grad"), sdt)
        prev_loss = state.get("prev_loss")

        last_al = None
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = _Vec(-flat_grad.a, sdt)
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y, s, ys, yy = _curvature(flat_grad.a, prev_flat_grad.a, d.a, float(t), _ZERO)
                ys = sdt(ys)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    dev = self._params[0].device
                    old_dirs.append(T.make(y, dev))
                    old_stps.append(T.make(s, dev))
                    ro.append(_scalar_tensor(sdt(1.0) / ys, dev))
                    h_diag = _scalar_tensor(ys / sdt(yy), dev)
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                d, al_vec = self._direction(flat_grad, old_dirs, old_stps, ro, h_diag, history_size)
                last_al = (al_vec, num_old)
                d = _Vec(d, sdt)

            prev_flat_grad = _Vec(flat_grad.a, sdt)  # torch copies into its buffer; arrays are immutable
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, sdt(1.0) / sdt(flat_grad.abs_sum)) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x: list, t: Any, d: _Vec) -> tuple:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = flat_grad.abs_max <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    with grad_mode.enable_grad():
                        loss = closure()
                    loss = float(loss)  # torch: outside enable_grad, so no requires_grad warning
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs_max <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter:
                break
            if current_evals >= max_eval:
                break
            if opt_cond:
                break
            if sdt(_abs_max_scaled(d.a, float(t), _ZERO)) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        dev = self._params[0].device
        if last_al is not None:
            # torch keeps al[i] (0-dim tensors) from the last iteration; views of one vector here
            al_t = T.make(last_al[0], dev)
            for i in range(last_al[1]):
                state["al"][i] = al_t[i]
        state["d"] = T.make(d.a, dev)
        state["t"] = _scalar_tensor(t, dev) if isinstance(t, np.generic) else t
        state["old_dirs"] = old_dirs
        state["old_stps"] = old_stps
        state["ro"] = ro
        state["H_diag"] = h_diag
        state["prev_flat_grad"] = T.make(prev_flat_grad.a, dev)
        state["prev_loss"] = prev_loss
        return orig_loss

    def _direction(self, flat_grad: _Vec, old_dirs: list, old_stps: list, ro: list, h_diag: Any, size: int) -> tuple:
        num_old = len(old_dirs)
        pad = jnp.zeros_like(flat_grad.a)
        dirs = tuple([t._data() for t in old_dirs] + [pad] * (size - num_old))
        stps = tuple([t._data() for t in old_stps] + [pad] * (size - num_old))
        zero = jnp.zeros((), flat_grad.a.dtype)
        ros = tuple([r._data() for r in ro] + [zero] * (size - num_old))
        hd = h_diag._data() if isinstance(h_diag, Tensor) else float(h_diag)
        return _two_loop(flat_grad.a, dirs, stps, ros, np.int32(num_old), hd, _ZERO)


def _scalar_tensor(v: Any, device: Any) -> Tensor:
    return T.make_on(jnp.asarray(np.asarray(v)), device)


def _host(v: Any, sdt: Any) -> Any:
    """A state value as LBFGS computes with it: 0-dim tensors become numpy scalars."""
    return sdt(v._data()) if isinstance(v, Tensor) else v


def _vec_of(v: Any, sdt: Any) -> _Vec | None:
    return None if v is None else _Vec(v._data(), sdt)
