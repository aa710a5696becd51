"""Anomaly mode's forward tracebacks ("Error detected in XBackward0 ..."), compared with real torch.

torch's warnings end with its C++ "(Triggered internally at ...)" note, and a node made by a backward has
torch's own Python frames under the user's call: both are cut before comparing (``_user_part``).
"""

import re
import warnings

import torch

import torchlike

HERE = __file__


def _user_part(msg):
    msg = re.sub(r" \(Triggered internally at [^)]*\.\)$", "", msg)
    head, sep, tb = msg.partition(":\n")
    frames = re.findall(r'  File "([^"]*)", line (\d+), in (.*)\n    (.*)\n', tb)
    return head, [f for f in frames if f[0] == HERE]


def _run(lib, fn, check_nan=True):
    """``fn(lib)`` under detect_anomaly: (error type and text, warnings after the 'enabled' one)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        err = None
        with lib.autograd.detect_anomaly(check_nan=check_nan):
            try:
                fn(lib)
            except Exception as e:  # noqa: BLE001 - compared below
                err = (type(e).__name__, str(e))
    msgs = [str(m.message) for m in w if m.category is UserWarning and "Anomaly Detection has been" not in str(m.message)]
    return err, msgs


def _same(fn, check_nan=True):
    ref, got = _run(torch, fn, check_nan), _run(torchlike, fn, check_nan)
    assert ref[0] == got[0]
    assert [_user_part(m) for m in ref[1]] == [_user_part(m) for m in got[1]]
    assert got[1] and _user_part(got[1][0])[1], "no warning or frame compared"
    return ref, got


def _sqrt_nan(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt()
    (y * 0).sum().backward()


def test_nan_error_warns_the_forward_traceback():
    ref, got = _same(_sqrt_nan)
    assert re.sub(r" \(Triggered internally at [^)]*\.\)$", "", ref[1][0]) == got[1][0]  # the whole text


def _helper(lib, x):
    return (x - 1).log()


def _nested(lib):
    x = lib.tensor([0.5, 2.0], requires_grad=True)
    y = _helper(lib, x) * 2
    lib.autograd.grad(y.sum() * float("nan"), x)


def test_nested_calls_and_autograd_grad():
    _same(_nested)


def _module(lib):
    lib.manual_seed(0)
    lin = lib.nn.Linear(2, 2)
    x = lib.tensor([[1.0, -1.0]], requires_grad=True)
    out = lin(x).sqrt()  # nan forward; the gradient of sqrt is nan there
    out.sum().backward()


def test_module_forward():
    _same(_module)


def _custom_raises(lib):
    class Boom(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    Boom.apply(x.exp()).sum().backward()


def test_error_raised_by_a_backward_without_nan_check():
    _same(_custom_raises, check_nan=False)
    _same(_custom_raises)


def _double_backward(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    y = x.pow(1.5)
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    (g * 0).sum().backward()


def _create_graph_first(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt()
    lib.autograd.grad((y * 0).sum(), x, create_graph=True)


def test_create_graph_backwards_are_checked():
    ref, got = _same(_double_backward)
    assert len(got[1]) == 2 and got[1][1].startswith("\n\nPrevious calculation was induced by PowBackward0.")
    _same(_create_graph_first)


def test_node_made_before_anomaly_mode():
    def fn(lib):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        y = (x.sqrt() * 0).sum()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                try:
                    y.backward()
                except RuntimeError as e:
                    err = str(e)
        msgs = [str(m.message) for m in w if "Anomaly Detection has been" not in str(m.message)]
        return err, [re.sub(r" \(Triggered internally at [^)]*\.\)$", "", m) for m in msgs]

    ref = fn(torch)
    assert ref == fn(torchlike)
    assert "No forward pass information available" in ref[1][0]


def test_traceback_recorded_only_in_anomaly_mode():
    def fn(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        plain = x.exp()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                traced = x.exp()
        with lib.autograd.set_detect_anomaly(True):
            traced2 = x * 3
        return (sorted(plain.grad_fn.metadata), sorted(traced.grad_fn.metadata),
                _user_part("x:\n" + "".join(traced2.grad_fn.metadata["traceback_"]))[1])  # fmt: skip

    ref, got = fn(torch), fn(torchlike)
    assert ref == got
    assert got[2] and got[1] == ["traceback_"]
