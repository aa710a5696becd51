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


def _grads(output: Any, diff_inputs: tuple, seed: Any, check_grad_dtypes: bool) -> list:
    import torchlike

    grads = torchlike.autograd.grad(output, diff_inputs, seed, retain_graph=True, allow_unused=True)
    for g, x in zip(grads, diff_inputs):
        if g is not None and g.shape != x.shape:
            raise GradcheckError("Analytical gradient has incorrect size")
        if g is not None and g.dtype != x.dtype and check_grad_dtypes:
            raise GradcheckError("Gradient has dtype mismatch")
    return list(grads)


def _analytical_rows(outputs: tuple, diff_inputs: tuple, seeds: Callable, nondet_tol: float,
                     check_grad_dtypes: bool) -> list:  # fmt: skip
    """jac[i][j]: the gradients of output j for each seed ``seeds(o)`` yields, as columns of a (numel of
    input i, number of seeds) matrix. Each backward runs twice: torch's reentrancy check."""
    import torchlike

    jac = [[None] * len(outputs) for _ in diff_inputs]
    for j, o in enumerate(outputs):
        cols: list = [[[], []] for _ in diff_inputs]
        for rep in (0, 1):  # torch: all of one pass, then all of the second
            for seed in seeds(j, o):
                for i, g in enumerate(_grads(o, diff_inputs, seed, check_grad_dtypes)):
                    x = diff_inputs[i]
                    cols[i][rep].append(torchlike.zeros(x.numel(), dtype=x.dtype) if g is None
                                        else g.reshape(-1).to(x.dtype))  # fmt: skip
        for i, x in enumerate(diff_inputs):
            first, second = (torchlike.stack(c, 1) if c else torchlike.zeros(x.numel(), 0, dtype=x.dtype)
                             for c in cols[i])  # fmt: skip
            # NOTE: the engine's first backward of a graph runs node by node, later ones fused into one XLA
            # program, which may round differently: a few ulps are not taken for non-reentrancy
            ulps = 16 * torchlike.finfo(first.dtype).eps * max(1.0, float(first.abs().max())) if first.numel() else 0
            if first.numel() and float((first - second).abs().max()) > max(nondet_tol, ulps):
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
                    "times gives different values, although analytical gradient matches numerical gradient."
                    f"The tolerance for nondeterminism was {nondet_tol}." + _FAILED_NONDET_MSG
                )
            jac[i][j] = first
    return jac


def _analytical(outputs: tuple, diff_inputs: tuple, nondet_tol: float = 0.0, check_grad_dtypes: bool = False) -> list:
    import torchlike

    def one_hot(j: int, o: Any) -> Any:
        for m in range(o.numel()):
            seed = torchlike.zeros_like(o)
            seed.view(-1)[m] = 1
            yield seed

    return _analytical_rows(outputs, diff_inputs, one_hot, nondet_tol, check_grad_dtypes)


def _unit_vector(numel: int, dtype: Any, generator: Any) -> Any:
    import torchlike

    vec = torchlike.rand(numel, generator=generator).to(dtype)
    return vec / vec.norm()


def _fast_check(func: Callable, inputs: tuple, diff_idx: list, outputs: tuple, eps: float, atol: float,
                rtol: float, nondet_tol: float, check_grad_dtypes: bool) -> None:  # fmt: skip
    """torch's fast mode: compare v^T J u from backward with the central difference along ``u``, for unit
    random vectors u (one per input) and v (one per output) from a fresh CPU generator, as torch draws them."""
    import torchlike

    diff_inputs = tuple(inputs[i] for i in diff_idx)
    if any(t.is_complex() for t in diff_inputs + outputs):
        raise NotImplementedError("torchlike's gradcheck does not support fast_mode=True with complex tensors yet")
    gen = torchlike.Generator()
    us = [_unit_vector(x.numel(), x.dtype, gen) for x in diff_inputs]
    vs = [_unit_vector(o.numel(), o.dtype, gen) for o in outputs]
    numerical = []  # [i][j]: v_j . (J_ij u_i), by central differences
    for i, u in zip(diff_idx, us):
        x = inputs[i]
        outs = []
        for step in (-eps, eps):
            with torchlike.no_grad():
                moved = (x.detach() + step * u.reshape(x.shape)).requires_grad_(True)
            res = _as_tuple(func(*inputs[:i], moved, *inputs[i + 1 :]))
            outs.append([r.detach().clone() for r in res if _is_tensor(r) and (r.is_floating_point() or r.is_complex())])
            _lazy.flush("gradcheck")  # see _numerical
        numerical.append([(v * ((b - a) / (2 * eps)).reshape(-1)).sum() for v, a, b in zip(vs, *outs)])
    analytical = _analytical_rows(outputs, diff_inputs, lambda j, o: [vs[j].reshape(o.shape)], nondet_tol,
                                  check_grad_dtypes)  # fmt: skip
    for k, (i, u) in enumerate(zip(diff_idx, us)):
        for j, v in enumerate(vs):
            a = analytical[k][j][:, 0].dot(u)
            n = numerical[k][j]
            if torchlike.allclose(a, n.to(a.dtype), rtol, atol * float(u.sum()) * float(v.sum())):
                continue
            slow_n = _numerical(func, inputs, [i], [j], eps)[0][0]
            slow_a = _analytical((outputs[j],), (inputs[i],))[0][0]
            msg = (
                "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
                "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
                "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
                f"Numerical:\n {slow_n}\nAnalytical:\n{slow_a}\n\n"
                f"The max per-element difference (slow mode) is: {(slow_n - slow_a).abs().max()}.\n"
            )
            if torchlike.allclose(slow_a, slow_n, rtol, atol):
                msg += _FAST_FAIL_SLOW_OK_MSG
            raise GradcheckError(f"Jacobian mismatch for output {j:d} with respect to input {k:d},\nnumerical:{n}\n"
                                 f"analytical:{a}\n" + msg)  # fmt: skip


def _check_mul_by_grad_output(outputs: tuple, diff_inputs: tuple) -> None:
    """torch: a zero grad_output must give zero gradients of the inputs' dtype and size."""
    import torchlike

    grads = torchlike.autograd.grad(outputs, diff_inputs, [torchlike.zeros_like(o) for o in outputs],
                                    allow_unused=True)  # fmt: skip
    for g, x in zip(grads, diff_inputs):
        if g is None:
            continue
        if not bool(g.eq(0).all()):
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != x.dtype:
            raise GradcheckError("grad is incorrect type")
        if g.device != x.device:
            raise GradcheckError("grad is incorrect device")
        if g.size() != x.size():
            raise GradcheckError("grad is incorrect size")


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:  # fmt: skip
    """Compare the Jacobian from backward with central differences (torch's slow mode), or ``fast_mode``'s
    random projections of both; then torch's reentrancy and multiplied-by-grad_output checks.

    Differs from torch: the reentrancy check lets two backwards differ by 16 ulps (see
    ``_analytical_rows``); the undefined-grad check is not made (torchlike's engine never calls a
    backward with undefined gradients only); batched-grad, forward-AD and masked checks raise NotImplementedError,
    as does ``fast_mode`` with complex tensors.
    """
    if raise_exception:
        return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes, check_batched_grad,
                          check_batched_forward_grad, check_forward_ad, check_backward_ad, fast_mode, masked)  # fmt: skip
    try:
        return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes, check_batched_grad,
                          check_batched_forward_grad, check_forward_ad, check_backward_ad, fast_mode, masked)  # fmt: skip
    except GradcheckError:
        return False


def _gradcheck(func: Callable, inputs: Any, eps: float, atol: float, rtol: float, nondet_tol: float,
               check_grad_dtypes: bool, check_batched_grad: bool, check_batched_forward_grad: bool,
               check_forward_ad: bool, check_backward_ad: bool, fast_mode: bool, masked: bool | None) -> bool:  # fmt: skip
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
                stacklevel=3,
            )
    if not check_backward_ad:
        return True
    raw = _as_tuple(func(*inputs))
    out_idx = [j for j, o in enumerate(raw) if _is_tensor(o) and o.requires_grad]
    outputs = tuple(raw[j] for j in out_idx)
    diff_inputs = tuple(inputs[i] for i in diff_idx)
    if fast_mode and outputs:
        _fast_check(func, inputs, diff_idx, outputs, eps, atol, rtol, nondet_tol, check_grad_dtypes)
    else:
        numerical = _numerical(func, inputs, diff_idx, out_idx, eps)
        analytical = _analytical(outputs, diff_inputs, nondet_tol, check_grad_dtypes)
        for i, (num_i, ana_i) in enumerate(zip(numerical, analytical)):
            for j, (n, a) in enumerate(zip(num_i, ana_i)):
                if n is None or torchlike.allclose(a, n, rtol, atol):
                    continue
                raise GradcheckError(
                    f"Jacobian mismatch for output {j:d} with respect to input {i:d},\nnumerical:{n}\nanalytical:{a}\n"
                )
    if outputs:
        _check_mul_by_grad_output(outputs, diff_inputs)
    return True


_FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

_FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()


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
