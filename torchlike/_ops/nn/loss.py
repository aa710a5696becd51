"""Loss functions: one table op per loss, reduction included, named as torch's last backward node.

``reduction`` is a static string ('none' | 'mean' | 'sum', plus 'batchmean' for kl_div); the
argument parsing (deprecated size_average/reduce, warnings, size checks) is in
torchlike.nn.functional.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..._core import buckets
from ..._core import dtype as D
from ..._core.graph import show_as
from .._common import norm_acc, special_ord
from .layers import host_values
from ..registry import OptRawTensor, OptScalar, OptTensor, RawTensor, Scalar, ScalarOrStatic, TensorArg, TensorOrScalar, defop

# Hyper-parameters (beta, delta, margin, eps, label_smoothing, a general p) are traced arguments, so a loop over
# their values compiles once: ``Scalar`` where torch's kernel casts the value to the input's type,
# ``TensorOrScalar`` where torch's arithmetic meets it as a wrapped number (it can make an integral input float).


def _reduce(loss: Any, reduction: str, count: Any = None) -> Any:
    if reduction == "mean":
        # ``count``: the exact call's element count where a padded call runs (see _pointwise_pad)
        return jnp.mean(loss) if count is None else jnp.sum(loss) / count.astype(loss.dtype)
    if reduction == "sum":
        return jnp.sum(loss)
    return loss


def _named(none: str, mean: str = "MeanBackward0", sum_: str = "SumBackward0", pos: int = 0) -> Any:
    """grad_name: torch's node for each reduction (the static ``reduction`` is at ``pos``)."""

    def name(static: tuple, dyn: tuple) -> str:
        r = static[pos]
        return mean if r == "mean" else sum_ if r == "sum" else none

    return name


def _float_kernel(kernel: str) -> Any:
    def check(cdt: Any, dyn: tuple, static: tuple) -> None:
        if cdt is not None and not (cdt.is_floating_point or cdt.is_complex):
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{D.cpp_name(cdt)}'")

    return check


def _both(input: Any, target: Any) -> tuple:
    return jnp.broadcast_arrays(input, target)


def _pointwise_pad(static: tuple, shapes: tuple) -> tuple:
    """A loss of position-wise terms that are 0 where input and target are (mse, l1, smooth l1, huber): both
    padded with zeros when their shapes agree; a mean then divides by the exact count (the last argument,
    passed as None by the caller, is made for the padded call)."""
    inp, tgt = shapes[0], shapes[1]
    if inp is None or tgt is None or inp != tgt or not inp or shapes[-1] is not None:
        return ()
    every = {a: 0 for a in range(len(inp))}
    made = buckets.Count(0) if static[0] == "mean" else None
    return (every, every) + (None,) * (len(shapes) - 3) + (made,)


@defop(method=False, grad_name="MseLossBackward0", check=_float_kernel("mse_cpu"), pad=_pointwise_pad)
def _mse_loss(input: TensorArg, target: TensorArg, reduction: str, count: OptRawTensor = None) -> Any:
    x, t = _both(input, target)
    return _reduce(jnp.square(x - t), reduction, count)


@defop(method=False, grad_name=_named("AbsBackward0"), pad=_pointwise_pad)
def _l1_loss(input: TensorArg, target: TensorArg, reduction: str, count: OptRawTensor = None) -> Any:
    x, t = _both(input, target)
    return _reduce(_abs0(x - t), reduction, count)


@defop(method=False, grad_name="SmoothL1LossBackward0", check=_float_kernel("smooth_l1_cpu"), pad=_pointwise_pad)
def _smooth_l1_loss(input: TensorArg, target: TensorArg, reduction: str, beta: Scalar,
                    count: OptRawTensor = None) -> Any:  # fmt: skip
    x, t = _both(input, target)
    d = jnp.abs(x - t)
    return _reduce(jnp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction, count)


@defop(method=False, grad_name="HuberLossBackward0", check=_float_kernel("huber_cpu"), pad=_pointwise_pad)
def _huber_loss(input: TensorArg, target: TensorArg, reduction: str, delta: Scalar, count: OptRawTensor = None) -> Any:
    x, t = _both(input, target)
    d = jnp.abs(x - t)
    return _reduce(jnp.where(d <= delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction, count)


# --- classification -------------------------------------------------------------------------------------


def _class_dim(x: Any) -> int:
    return 0 if x.ndim == 1 else 1


def _targets_check(input: Any, target: Any, weight: Any, ignore_index: int, what: str = "nll") -> None:
    """torch's checks of class-index targets, in torch's order (target values are read on the host)."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() != 1 and target.dim() and input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]})."
        )
    if input.dim() <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif target.dim() != input.dim() - 1 or tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(
            f"size mismatch (got input: {'x'.join(map(str, input.shape))} , target: "
            f"{'x'.join(map(str, target.shape))}"
        )
    c = input.shape[_class_dim(input)]
    if weight is not None and weight.numel() != c:
        raise RuntimeError(
            f"weight tensor should be defined either for all {c} classes or no classes but got weight tensor of "
            f"shape: [{', '.join(map(str, weight.shape))}]"
        )
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {D.cpp_name(target.dtype)}")
    t = host_values(target) if target.numel() else None
    if t is not None:
        t = t.astype(np.int64)
        bad = (t != ignore_index) & ((t < 0) | (t >= c))
        if bad.any():
            raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")


def _nll_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    input, target, weight, ignore_index = dyn
    _targets_check(input, target, weight, ignore_index)


def _nll_name(static: tuple, dyn: tuple) -> str:
    return "NllLoss2DBackward0" if dyn[0].dim() >= 3 else "NllLossBackward0"


def _pick(logp: Any, target: Any, weight: Any, ignore_index: int) -> tuple:
    """(-logp[target] * w, w) per sample, with ignored targets weighing 0."""
    cdim = _class_dim(logp)
    target = target.astype(jnp.int64)
    valid = target != ignore_index
    tc = jnp.where(valid, target, 0)
    picked = jnp.take_along_axis(logp, jnp.expand_dims(tc, cdim), axis=cdim).squeeze(cdim)
    w = jnp.ones_like(picked) if weight is None else jnp.take(weight.astype(logp.dtype), tc)
    w = jnp.where(valid, w, jnp.zeros_like(w))
    return -picked * w, w


def _nll_reduce(losses: Any, w: Any, reduction: str) -> Any:
    if reduction == "mean":
        return jnp.sum(losses) / jnp.sum(w)
    return _reduce(losses, reduction)


def _class_rows_pad(static: tuple, shapes: tuple) -> tuple:
    """Class-index targets: the batch axis padded, its targets with the call's ``ignore_index`` (argument 3),
    which weighs nothing in any reduction. Probability targets keep exact shapes (a mean counts their rows)."""
    inp, tgt = shapes[0], shapes[1]
    if inp is None or tgt is None or len(inp) < 2 or len(tgt) != len(inp) - 1 or shapes[3] is None:
        return (None, None)
    return ({0: 0}, {0: buckets.ArgFill(3)})


@defop(promote=None, method=False, grad_name=_nll_name, check=_nll_check, saves=("target", "weight"),
       pad=_class_rows_pad, nondiff=("target", "weight"))  # fmt: skip
def _nll_loss(
    input: RawTensor, target: RawTensor, weight: OptRawTensor, reduction: str, ignore_index: OptScalar
) -> Any:
    # ignore_index is a traced int64: a new padding index compiles nothing
    losses, w = _pick(input, target, weight, ignore_index)
    return _nll_reduce(losses, w, reduction).astype(input.dtype)


def _ce_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    input, target, weight = dyn[:3]
    if target.dtype.is_floating_point and tuple(target.shape) == tuple(input.shape):
        if target.dtype is not input.dtype:
            raise RuntimeError(
                f"expected scalar type {D.cpp_name(input.dtype)} but found {D.cpp_name(target.dtype)}"
            )
        return
    _targets_check(input, target, weight, dyn[3])


def _ce_name(static: tuple, dyn: tuple) -> str:
    reduction, smoothing = static[0], dyn[4]
    if dyn[1].dtype.is_floating_point and tuple(dyn[1].shape) == tuple(dyn[0].shape):
        return "DivBackward1" if reduction == "mean" else "NegBackward0"
    if smoothing > 0:
        return "AddBackward0"
    if dyn[0].dim() == 3 or dyn[0].dim() > 4:  # torch's nll_loss_nd: viewed as 4-d, the unreduced loss viewed back
        return f"ViewBackward0@ce_nd_{reduction}" if reduction == "none" else f"NllLoss2DBackward0@ce_nd_{reduction}"
    return f"{_nll_name(static, dyn)}@ce_{reduction}"


# torch's cross_entropy with class indices is nll_loss over log_softmax (target and weight have no edges), a 3-d or
# 5-d and up input viewed as 4-d in between and, unreduced, the loss viewed back to the target's shape
# (a shape's name ends in the reduction: the nll_loss node's forward, which hooks there replay, reads it:
# autograd/_node_hooks.py)
for _r in ("mean", "sum", "none"):
    show_as(f"ce_{_r}", [("LogSoftmaxBackward0", [0])])
    _nd = [("ViewBackward0", [("LogSoftmaxBackward0", [0])])]
    show_as(f"ce_nd_{_r}", [("NllLoss2DBackward0", _nd)] if _r == "none" else _nd)


def _wrapped(v: Any, dt: Any) -> Any:
    """A traced double hyper-parameter as torch's arithmetic meets it: a wrapped number of ``dt``."""
    return jnp.asarray(v).astype(dt)


@defop(promote=None, method=False, grad_name=_ce_name, check=_ce_check, saves=("target", "weight"),
       pad=_class_rows_pad)  # fmt: skip
def _cross_entropy(input: RawTensor, target: RawTensor, weight: OptRawTensor, reduction: str, ignore_index: OptScalar,
                   label_smoothing: Scalar = 0.0) -> Any:  # fmt: skip
    # label_smoothing is traced, or the baked default 0.0 (no smoothing terms in the program)
    smooth = not isinstance(label_smoothing, float)
    cdim = _class_dim(input)
    logp = jax.nn.log_softmax(input, axis=cdim)
    c = input.shape[cdim]
    wshape = [1] * input.ndim
    wshape[cdim] = c
    wb = None if weight is None else weight.astype(input.dtype).reshape(wshape)
    if jnp.issubdtype(target.dtype, jnp.floating) and target.shape == input.shape:
        t = target
        if smooth:
            t = target * _wrapped(1 - label_smoothing, t.dtype) + _wrapped(label_smoothing / c, t.dtype)
        prod = logp * t if wb is None else logp * t * wb
        if reduction == "mean":
            return -jnp.sum(prod) / (input.size / c)
        if reduction == "sum":
            return -jnp.sum(prod)
        return -jnp.sum(prod, axis=cdim)
    losses, w = _pick(logp, target, weight, ignore_index)
    nll = _nll_reduce(losses, w, reduction)
    if not smooth:
        return nll
    valid = target.astype(jnp.int64) != ignore_index
    smooth_loss = -jnp.sum(logp if wb is None else logp * wb, axis=cdim)
    smooth_loss = jnp.where(valid, smooth_loss, jnp.zeros_like(smooth_loss))
    if reduction == "mean":
        smooth_loss = jnp.sum(smooth_loss) / jnp.sum(w)
    else:
        smooth_loss = _reduce(smooth_loss, reduction)
    return _wrapped(1 - label_smoothing, nll.dtype) * nll + smooth_loss * _wrapped(label_smoothing / c, nll.dtype)


def _bce_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x = dyn[0]
    a = host_values(x) if x.numel() else None
    if a is not None:
        if not ((a >= 0) & (a <= 1)).all():
            raise RuntimeError("all elements of input should be between 0 and 1")
    t = dyn[1]
    b = host_values(t) if t.numel() else None
    if b is not None and not ((b >= 0) & (b <= 1)).all():
        raise RuntimeError("all elements of target should be between 0 and 1")


@jax.custom_jvp
def _bce_terms(x: Any, t: Any) -> Any:
    """Elementwise BCE with torch's clamp of each log at -100."""
    return (t - 1) * jnp.maximum(jnp.log1p(-x), -100.0) - t * jnp.maximum(jnp.log(x), -100.0)


@_bce_terms.defjvp
def _bce_terms_jvp(primals: tuple, tangents: tuple) -> tuple:
    # torch: d/dx is (x - t) / max(x (1 - x), 1e-12), finite at x = 0 and 1 where the clamped logs give NaN;
    # d/dt uses the unclamped logs
    x, t = primals
    dx, dt = tangents
    out = _bce_terms(x, t)
    d_input = (x - t) / jnp.maximum((1 - x) * x, jnp.asarray(1e-12, x.dtype))
    return out, d_input * dx + (jnp.log1p(-x) - jnp.log(x)) * dt


@defop(method=False, grad_name="BinaryCrossEntropyBackward0", check=_bce_check)
def _binary_cross_entropy(input: TensorArg, target: TensorArg, weight: OptTensor, reduction: str) -> Any:
    loss = _bce_terms(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@defop(method=False, grad_name="BinaryCrossEntropyWithLogitsBackward0")
def _bce_with_logits(input: TensorArg, target: TensorArg, weight: OptRawTensor, pos_weight: OptRawTensor,
                     reduction: str) -> Any:  # fmt: skip
    log_sig = -jnp.logaddexp(jnp.zeros_like(input), -input)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight.astype(input.dtype) - 1) * target + 1)
    loss = (1 - target) * input - log_sig
    if weight is not None:
        loss = loss * weight.astype(input.dtype)
    return _reduce(loss, reduction)


def _kl_name(static: tuple, dyn: tuple) -> str:
    reduction, log_target = static
    if reduction == "batchmean":
        return "DivBackward0"
    return _named("MulBackward0" if log_target else "SubBackward0")(static, dyn)


@defop(method=False, grad_name=_kl_name)
def _kl_div(input: TensorArg, target: TensorArg, reduction: str, log_target: bool) -> Any:
    if log_target:
        loss = jnp.exp(target) * (target - input)
    else:
        loss = jax.scipy.special.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return jnp.sum(loss) / input.shape[0] if input.ndim else jnp.sum(loss)
    return _reduce(loss, reduction)


def _poisson_name(static: tuple, dyn: tuple) -> str:
    return _named("AddBackward0" if static[2] else "SubBackward0")(static, dyn)


@defop(promote="float", method=False, grad_name=_poisson_name)
def _poisson_nll_loss(input: TensorArg, target: TensorArg, reduction: str, log_input: bool, full: bool,
                      eps: TensorOrScalar) -> Any:  # fmt: skip
    if log_input:
        loss = jnp.exp(input) - target * input
    else:
        loss = input - target * jnp.log(input + eps)
    if full:
        safe = jnp.where(target > 1, target, jnp.ones_like(target))
        stirling = safe * jnp.log(safe) - safe + 0.5 * jnp.log(2 * math.pi * safe)
        loss = loss + jnp.where(target > 1, stirling, jnp.zeros_like(stirling))
    return _reduce(loss, reduction)


def _gauss_name(static: tuple, dyn: tuple) -> str:
    return _named("AddBackward0" if static[1] else "MulBackward0")(static, dyn)


@defop(method=False, grad_name=_gauss_name)
def _gaussian_nll_loss(input: TensorArg, target: TensorArg, var: TensorArg, reduction: str, full: bool,
                       eps: Scalar) -> Any:  # fmt: skip
    # torch clamps var under no_grad: the gradient flows as if unclamped
    v = var + jax.lax.stop_gradient(jnp.maximum(var, eps) - var)
    loss = 0.5 * (jnp.log(v) + jnp.square(input - target) / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@defop(method=False, grad_name="SoftMarginLossBackward0")
def _soft_margin_loss(input: TensorArg, target: TensorArg, reduction: str) -> Any:
    return _reduce(jnp.log1p(jnp.exp(-target * input)), reduction)


@defop(method=False, grad_name=_named("DivBackward0"))
def _multilabel_soft_margin_loss(
    input: TensorArg, target: TensorArg, weight: OptRawTensor, reduction: str
) -> Any:
    def log_sig(z: Any) -> Any:
        return -jnp.logaddexp(jnp.zeros_like(z), -z)

    loss = -(target * log_sig(input) + (1 - target) * log_sig(-input))
    if weight is not None:
        loss = loss * weight.astype(loss.dtype)
    cdim = input.ndim - 1
    loss = jnp.sum(loss, axis=cdim) / input.shape[cdim]
    return _reduce(loss, reduction)


def _clamp_min0(z: Any) -> Any:
    # torch's clamp_min passes the gradient at the bound
    return jnp.where(z >= 0, z, jnp.zeros_like(z))


@defop(promote="float", method=False, grad_name=_named("AddBackward0"))
def _cosine_embedding_loss(input1: TensorArg, input2: TensorArg, target: RawTensor, margin: TensorOrScalar,
                           reduction: str) -> Any:  # fmt: skip
    d = input1.ndim - 1
    eps = 1e-12
    prod = jnp.sum(input1 * input2, axis=d)
    m1 = jnp.sum(input1 * input1, axis=d) + eps
    m2 = jnp.sum(input2 * input2, axis=d) + eps
    cos = prod / jnp.sqrt(m1 * m2)
    zeros = jnp.zeros_like(cos)
    pos = jnp.where(target == 1, 1 - cos, zeros)
    neg = jnp.where(target == -1, _clamp_min0(cos - margin), zeros)
    return _reduce(pos + neg, reduction)


@defop(method=False, grad_name=_named("ClampMinBackward0"))
def _margin_ranking_loss(input1: TensorArg, input2: TensorArg, target: TensorArg, margin: TensorOrScalar,
                         reduction: str) -> Any:  # fmt: skip
    # margin is a wrapped number in torch's promotion: integer inputs with a float margin compute in float
    return _reduce(_clamp_min0(-target * (input1 - input2) + margin), reduction)


def _hinge_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    # torch computes in the input's type (margin - input fills the margin into it), integral ones included
    if isinstance(dyn[2], (int, float)) and D.overflows(dyn[2], cdt):
        raise D.overflow_error(cdt)
    if cdt is D.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")  # fmt: skip
    if static[0] == "mean" and not (cdt.is_floating_point or cdt.is_complex):
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {D.cpp_name(cdt)}")  # fmt: skip


@defop(method=False, grad_name=_named("AddBackward0"), check=_hinge_check)
def _hinge_embedding_loss(input: TensorArg, target: RawTensor, margin: Scalar, reduction: str) -> Any:
    zeros = jnp.zeros_like(input)
    margin_clamp = _clamp_min0(margin - input)
    loss = jnp.where(target != 1, margin_clamp, zeros) + jnp.where(target != -1, input, zeros)
    if reduction == "sum" and not jnp.issubdtype(loss.dtype, jnp.inexact):
        return jnp.sum(loss, dtype=jnp.int64)  # torch: integral sums are int64
    return _reduce(loss, reduction)


def _mm_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    input, target, weight = dyn[:3]
    if input.dim() > 2:
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {list(input.shape)}"
        )
    n = input.shape[0] if input.dim() == 2 else 1
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(
            f"inconsistent target size, expected {n} but got [{', '.join(map(str, target.shape))}]"
        )
    c = input.shape[-1] if input.dim() else 1
    t = host_values(target) if target.numel() else None
    if t is not None:
        if ((t < 0) | (t >= c)).any():
            raise RuntimeError("target out of range")


@defop(method=False, grad_name="MultiMarginLossBackward0", check=_mm_check)
def _multi_margin_loss(input: TensorArg, target: RawTensor, weight: OptRawTensor, p: int, margin: Scalar,
                       reduction: str) -> Any:  # fmt: skip
    x = input if input.ndim == 2 else input.reshape(1, -1)
    t = target.reshape(-1)
    c = x.shape[1]
    xy = jnp.take_along_axis(x, t[:, None], axis=1)
    z = jnp.maximum(margin - xy + x, 0)
    z = z if p == 1 else z * z
    if weight is not None:
        z = z * jnp.take(weight.astype(x.dtype), t)[:, None]
    z = jnp.where(jnp.arange(c)[None, :] == t[:, None], jnp.zeros_like(z), z)
    loss = jnp.sum(z, axis=1) / c
    if input.ndim < 2 and reduction == "none":
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def _abs0(d: Any) -> Any:
    """|d| with torch's gradient sign(d) (0 at 0)."""
    return d * jax.lax.stop_gradient(jnp.sign(d))


def _pnorm(d: Any, p: Any, axis: int, keepdim: bool = False) -> Any:
    """torch.norm(d, p, dim) with a zero gradient at 0 (as torch's norm backward); ``p`` is a Python number
    (0, 1, 2, inf) or a traced general order."""
    traced = not isinstance(p, (int, float))
    if traced:
        p, inv = p, 1 / p  # 1/p rounds in p's precision, as torch's double 1.0 / p
    elif p == 2:
        s = jnp.sum(d * d, axis=axis, keepdims=keepdim)
        safe = jnp.where(s > 0, s, jnp.ones_like(s))
        return jnp.where(s > 0, jnp.sqrt(safe), jnp.zeros_like(s))
    elif p == 1:
        return jnp.sum(_abs0(d), axis=axis, keepdims=keepdim)
    elif p == math.inf:
        return jnp.max(_abs0(d), axis=axis, keepdims=keepdim)
    elif p == 0:
        return jnp.sum((d != 0).astype(d.dtype), axis=axis, keepdims=keepdim)
    a = _abs0(d)
    if traced:  # torch: half-precision norms accumulate in float
        acc = norm_acc(d.dtype)
        a, p, inv = a.astype(acc), p.astype(acc), inv.astype(acc)
    s = jnp.sum(a**p, axis=axis, keepdims=keepdim)
    safe = jnp.where(s > 0, s, jnp.ones_like(s))
    return jnp.where(s > 0, safe ** (inv if traced else 1.0 / p), jnp.zeros_like(s)).astype(d.dtype)


def pairwise_body(x1: Any, x2: Any, p: Any, eps: Any, keepdim: bool) -> Any:
    d = x1 - x2 + eps
    axis = max(x1.ndim, x2.ndim) - 1
    return _pnorm(d, p, axis if axis >= 0 else 0, keepdim)


@defop(promote="float", method=False, grad_name=_named("ClampMinBackward0", pos=1), bake=special_ord)
def _triplet_margin_loss(anchor: TensorArg, positive: TensorArg, negative: TensorArg, margin: TensorOrScalar,
                         p: ScalarOrStatic, eps: TensorOrScalar, swap: bool, reduction: str) -> Any:  # fmt: skip
    d_pos = pairwise_body(anchor, positive, p, eps, False)
    d_neg = pairwise_body(anchor, negative, p, eps, False)
    if swap:
        d_neg = jnp.minimum(d_neg, pairwise_body(positive, negative, p, eps, False))
    return _reduce(_clamp_min0(margin + d_pos - d_neg), reduction)


@defop(promote="float", namespaces=("torch", "nn.functional"), grad_name="NormBackward1", bake=special_ord)
def pairwise_distance(
    x1: TensorArg, x2: TensorArg, p: ScalarOrStatic = 2.0, eps: TensorOrScalar = 1e-6, keepdim: bool = False
) -> Any:
    return pairwise_body(x1, x2, p, eps, keepdim)


def _cosine(a: Any, b: Any, d: int, eps: Any) -> Any:
    # torch clamps the norms under no_grad
    n1 = _pnorm(a, 2, d, True)
    n2 = _pnorm(b, 2, d, True)
    n1 = n1 + jax.lax.stop_gradient(jnp.maximum(n1, eps) - n1)
    n2 = n2 + jax.lax.stop_gradient(jnp.maximum(n2, eps) - n2)
    return jnp.sum((a / n1) * (b / n2), axis=d)


@defop(promote="float", namespaces=("torch", "nn.functional"), grad_name="SumBackward1")
def cosine_similarity(x1: TensorArg, x2: TensorArg, dim: int = 1, eps: Scalar = 1e-8) -> Any:
    a, b = jnp.broadcast_arrays(x1, x2)
    if a.ndim == 0:  # 0-dim inputs reduce over their single element
        return _cosine(a.reshape(1), b.reshape(1), 0, eps).reshape(())
    return _cosine(a, b, dim % a.ndim, eps)


@defop(promote="float", method=False, grad_name="DivBackward0", bake=special_ord)
def _normalize(input: TensorArg, p: ScalarOrStatic, dim: int, eps: Scalar) -> Any:
    if input.ndim == 0:  # a 0-dim input normalizes its single element
        return input / jnp.maximum(_pnorm(input.reshape(1), p, 0, True).reshape(()), eps)
    d = dim % input.ndim
    n = _pnorm(input, p, d, True)
    return input / jnp.maximum(n, eps)


# --- CTC ------------------------------------------------------------------------------------------------------


def _lse(*xs: Any) -> Any:
    """logsumexp of arrays that may be -inf everywhere, with finite gradients."""
    m = xs[0]
    for x in xs[1:]:
        m = jnp.maximum(m, x)
    m = jax.lax.stop_gradient(jnp.where(jnp.isfinite(m), m, jnp.zeros_like(m)))
    s = sum(jnp.exp(x - m) for x in xs)
    pos = s > 0
    return jnp.where(pos, jnp.log(jnp.where(pos, s, jnp.ones_like(s))) + m, -jnp.inf)


def _ctc_nll(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, blank: int) -> Any:
    """Per-sample -log p(target | input) by the CTC forward recursion. log_probs: (T, N, C); targets (N, S)."""
    t_max, n, _ = log_probs.shape
    s = targets.shape[1]
    ext = jnp.full((n, 2 * s + 1), blank, targets.dtype).at[:, 1::2].set(targets)
    ls = 2 * s + 1
    pos = jnp.arange(ls)
    valid = pos[None, :] < (2 * target_lengths[:, None] + 1)
    prev2 = jnp.concatenate([jnp.full((n, 2), blank, ext.dtype), ext[:, :-2]], axis=1)
    skip_ok = (ext != blank) & (ext != prev2) & (pos[None, :] >= 2)
    neg = jnp.asarray(-jnp.inf, log_probs.dtype)

    def emit(t: Any) -> Any:
        return jnp.take_along_axis(log_probs[t], ext, axis=1)

    alpha0 = jnp.where((pos[None, :] < 2) & valid, emit(0), neg)

    def step(alpha: Any, t: Any) -> tuple:
        a1 = jnp.concatenate([jnp.full((n, 1), neg), alpha[:, :-1]], axis=1)
        a2 = jnp.concatenate([jnp.full((n, 2), neg), alpha[:, :-2]], axis=1)
        a2 = jnp.where(skip_ok, a2, neg)
        new = _lse(alpha, a1, a2) + emit(t)
        new = jnp.where(valid, new, neg)
        live = (t < input_lengths)[:, None]
        return jnp.where(live, new, alpha), None

    alpha, _ = jax.lax.scan(step, alpha0, jnp.arange(1, t_max))
    end = 2 * target_lengths
    last = jnp.take_along_axis(alpha, end[:, None], axis=1)[:, 0]
    before = jnp.take_along_axis(alpha, jnp.maximum(end - 1, 0)[:, None], axis=1)[:, 0]
    before = jnp.where(end > 0, before, neg)
    return -_lse(last, before)


@jax.custom_vjp
def _ctc_torch_grad(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, blank: Any) -> Any:
    return _ctc_nll(log_probs, targets, input_lengths, target_lengths, blank)


def _ctc_fwd(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, blank: Any) -> tuple:
    nll, vjp = jax.vjp(lambda lp: _ctc_nll(lp, targets, input_lengths, target_lengths, blank), log_probs)
    return nll, (vjp, log_probs, input_lengths, nll)


def _ctc_bwd(res: tuple, ct: Any) -> tuple:
    # torch's ctc backward returns exp(log_probs) - posterior (the gradient through a log_softmax it
    # assumes), not the derivative w.r.t. log_probs alone: add exp(log_probs) for each live frame.
    vjp, log_probs, input_lengths, nll = res
    ct = jnp.where(jnp.isinf(nll), jnp.zeros_like(ct), ct)
    (g,) = vjp(ct)
    live = (jnp.arange(log_probs.shape[0])[:, None] < input_lengths[None, :])[..., None]
    g = g + jnp.where(live, jnp.exp(log_probs) * ct[None, :, None], jnp.zeros_like(log_probs))
    return g, None, None, None, None


_ctc_torch_grad.defvjp(_ctc_fwd, _ctc_bwd)


def _ctc_name(static: tuple, dyn: tuple) -> str:
    return _named("CtcLossBackward0")(static, dyn)


@defop(promote=None, method=False, grad_name=_ctc_name)
def _ctc_loss(log_probs: RawTensor, targets: RawTensor, input_lengths: RawTensor, target_lengths: RawTensor,
              reduction: str, blank: int, zero_infinity: bool) -> Any:  # fmt: skip
    lp = log_probs if log_probs.ndim == 3 else log_probs[:, None, :]
    tg = targets if targets.ndim == 2 else targets.reshape(1, -1)
    il = input_lengths.reshape(-1).astype(jnp.int64)
    tl = target_lengths.reshape(-1).astype(jnp.int64)
    nll = _ctc_torch_grad(lp, tg.astype(jnp.int64), il, tl, blank)
    if zero_infinity:
        nll = jnp.where(jnp.isinf(nll), jnp.zeros_like(nll), nll)
    if reduction == "mean":
        return jnp.mean(nll / jnp.maximum(tl, 1).astype(nll.dtype))
    if reduction == "sum":
        return jnp.sum(nll)
    return nll if log_probs.ndim == 3 else nll[0]


@defop(method=False, grad_name="MultilabelMarginLossBackward0")
def _multilabel_margin_loss(input: TensorArg, target: RawTensor, reduction: str) -> Any:
    x = input if input.ndim == 2 else input.reshape(1, -1)
    t = target.reshape(x.shape).astype(jnp.int64)
    c = x.shape[1]
    # targets are the leading entries before the first -1
    valid = jnp.cumprod((t >= 0).astype(jnp.int64), axis=1).astype(bool)
    safe = jnp.where(valid, t, 0)
    is_target = jnp.zeros(x.shape, bool).at[jnp.arange(x.shape[0])[:, None], safe].max(valid)
    xj = jnp.take_along_axis(x, safe, axis=1)  # (N, C): the score of each listed target
    hinge = jnp.maximum(1 - (xj[:, :, None] - x[:, None, :]), 0)  # (N, target j, class k)
    mask = valid[:, :, None] & ~is_target[:, None, :]
    loss = jnp.sum(jnp.where(mask, hinge, jnp.zeros_like(hinge)), axis=(1, 2)) / c
    if input.ndim == 1 and reduction == "none":
        loss = loss.reshape(())
    return _reduce(loss, reduction)
