"""torch.autograd.gradcheck / gradgradcheck: analytical gradients against central finite differences."""

from __future__ import annotations

import warnings
from typing import Any, Callable

from .._core import lazy as _lazy

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


def _as_tuple(x: Any) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x: Any) -> bool:
    from .._core.tensor import Tensor

    return isinstance(x, Tensor)


def _differentiable_outputs(x: Any) -> tuple:
    return tuple(o for o in _as_tuple(x) if _is_tensor(o) and o.requires_grad)


def _unsupported(**flags: bool) -> None:
    for name, on in flags.items():
        if on:
            raise NotImplementedError(f"torchlike's gradcheck does not support {name}=True yet")


def _numerical(func: Callable, inputs: tuple, diff_idx: list, out_idx: list, eps: float) -> list:
    """jacobians[i][j]: d output j / d input i, shape (numel of input, numel of output)."""
    import torchlike

    jac = []
    for i in diff_idx:
        x = inputs[i]
        rows = []
        for k in range(x.numel()):
            outs = []
            for step in (eps, -eps):
                with torchlike.no_grad():
                    moved = x.detach().clone()
                    moved.view(-1)[k] += step
                moved.requires_grad_(True)  # func may differentiate (gradgradcheck's does)
                res = _as_tuple(func(*inputs[:i], moved, *inputs[i + 1 :]))
                outs.append([res[j].detach().reshape(-1).to(x.dtype) for j in out_idx])
                # Each evaluation runs on its own, as in torch: fused with the difference below, XLA
                # would contract f(x+h) - f(x-h) into an FMA and return sub-ulp noise instead of 0.
                _lazy.flush("gradcheck")
            rows.append([(p - m) / (2 * eps) for p, m in zip(*outs)])
        jac.append([torchlike.stack([r[j] for r in rows]) if rows else None for j in range(len(out_idx))])
    return jac


def _analytical(outputs: tuple, diff_inputs: tuple) -> list:
    import torchlike

    jac = [[torchlike.zeros(x.numel(), o.numel(), dtype=x.dtype) for o in outputs] for x in diff_inputs]
    for j, o in enumerate(outputs):
        for m in range(o.numel()):
            seed = torchlike.zeros_like(o)
            seed.view(-1)[m] = 1
            grads = torchlike.autograd.grad(o, diff_inputs, seed, retain_graph=True, allow_unused=True)
            for i, g in enumerate(grads):
                if g is not None:
                    jac[i][j][:, m] = g.reshape(-1).to(jac[i][j].dtype)
    return jac


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:  # fmt: skip
    """Compare the Jacobian from backward with central differences, as torch's slow mode does.

    Differs from torch: ``fast_mode`` runs the full (slow) check; the reentrancy and undefined-grad
    checks are not made; batched-grad, forward-AD and masked checks raise NotImplementedError.
    """
    import torchlike

    _unsupported(check_batched_grad=check_batched_grad, check_batched_forward_grad=check_batched_forward_grad,
                 check_forward_ad=check_forward_ad, masked=bool(masked))  # fmt: skip
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    if not diff_idx:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them have "
            "requires_grad=True."
        )
    for i in diff_idx:
        if inputs[i].dtype not in (torchlike.float64, torchlike.complex128):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. This check "
                "will likely fail if all the inputs are not of double precision floating point or complex. ",
                stacklevel=2,
            )
    if not check_backward_ad:
        return True
    raw = _as_tuple(func(*inputs))
    out_idx = [j for j, o in enumerate(raw) if _is_tensor(o) and o.requires_grad]
    outputs = tuple(raw[j] for j in out_idx)
    diff_inputs = tuple(inputs[i] for i in diff_idx)
    numerical = _numerical(func, inputs, diff_idx, out_idx, eps)
    analytical = _analytical(outputs, diff_inputs)
    for i, (num_i, ana_i) in enumerate(zip(numerical, analytical)):
        for j, (n, a) in enumerate(zip(num_i, ana_i)):
            if n is None or torchlike.allclose(a, n, rtol, atol):
                continue
            if not raise_exception:
                return False
            raise GradcheckError(
                f"Jacobian mismatch for output {j:d} with respect to input {i:d},\nnumerical:{n}\nanalytical:{a}\n"
            )
    return True


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True, fast_mode: bool = False,
                  masked: bool = False) -> bool:  # fmt: skip
    """gradcheck of the function ``inputs, grad_outputs -> autograd.grad(func(inputs), inputs, grad_outputs)``;
    random ``grad_outputs`` in [-1, 1) (torch.testing.make_tensor, torch's CPU stream) when not given."""
    import torchlike

    _unsupported(check_fwd_over_rev=check_fwd_over_rev, check_batched_grad=check_batched_grad)
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*inputs))
        grad_outputs = tuple(
            torchlike.testing.make_tensor(
                x.shape, dtype=x.dtype if x.is_floating_point() or x.is_complex() else torchlike.double,
                device=x.device, low=-1, high=1, requires_grad=True, noncontiguous=gen_non_contig_grad_outputs,
            )
            for x in outputs
        )  # fmt: skip
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)

    def new_func(*args: Any) -> tuple:
        input_args, gos = args[:-n_out], args[-n_out:]
        outputs = _differentiable_outputs(func(*input_args))
        diff = tuple(x for x in input_args if _is_tensor(x) and x.requires_grad)
        grads = torchlike.autograd.grad(outputs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, fast_mode=fast_mode)  # fmt: skip
