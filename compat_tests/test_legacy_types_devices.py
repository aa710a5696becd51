"""Issue 35: legacy tensor types (torch.FloatTensor ...), Tensor.type(), set_default_tensor_type, the
default-device context (`with torch.device(d):`, set_default_device) and Tensor.is_inference(),
torch vs torchlike."""

import warnings

import numpy as np
import pytest
import torch
from _harness import check, check_raises

import torchlike

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
         "IntTensor", "LongTensor", "BoolTensor"]  # fmt: skip


def _names(lib, space):
    return sorted(n for n in dir(space) if n.endswith("Tensor") and n[0].isupper() and n != "Tensor")


def test_the_same_legacy_types_exist():
    assert _names(torch, torch) == _names(torchlike, torchlike) == sorted(TYPES)
    assert _names(torch, torch.cuda) == _names(torchlike, torchlike.cuda) == sorted(TYPES)


@pytest.mark.parametrize("name", TYPES)
def test_type_attributes(name):
    def f(t):
        cls, cuda = getattr(t, name), getattr(t.cuda, name)
        return (cls.__name__, cls.dtype, str(cls.layout), cls.is_cuda, cls.is_sparse, cuda.__name__, cuda.dtype,
                cuda.is_cuda, issubclass(cls, t.Tensor), cls == getattr(t, name), cls != cuda, type(cls).__name__,
                cls.__module__.replace("torchlike", "torch"),
                cuda.__module__.replace("torchlike", "torch"))  # fmt: skip

    check(f, [], grad=False)


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("args", ["(2, 3)", "()", "([1, 0, 1],)", "(t.Size([2, 2]),)", "(0,)", "(0, 3)",
                                  "(np.array([1, 0, 2]),)", "(np.array(1),)", "(range(3),)", "([[1, 2], [3, 4]],)",
                                  "((1, 2),)", "(np.int64(2),)"])  # fmt: skip
def test_constructor(name, args):
    def f(t):
        out = getattr(t, name)(*eval(args))
        # the sizes form is uninitialised memory in torch: compare its metadata, not its values
        sizes = ("(2, 3)", "(0, 3)", "(np.int64(2),)", "(t.Size([2, 2]),)", "(np.array(1),)")
        return (out.shape, out.dtype, out.type()) if args in sizes else out

    check(f, [], grad=False)


@pytest.mark.parametrize("args, kwargs", [
    (("a",), {}), ((1.5,), {}), ((2, "a"), {}), ((2, 3.0), {}), (([1, 2], [3]), {}), ((2.0, 3), {}), ((True,), {}),
    ((None,), {}), (([[1, 2], [3]],), {}), ((2, -1), {}), ((-1,), {}), ((2,), {"dtype": "float64"}),
    ((2,), {"requires_grad": True}), ((2,), {"device": "meta"}), ((2,), {"device": "cuda"}), ((np.float32(1.0),), {}),
    (("size",), {"foo": 1}), (("gen",), {}),
])  # fmt: skip
def test_constructor_errors(args, kwargs):
    def f(t):
        kw = {k: getattr(t, v) if k == "dtype" else v for k, v in kwargs.items()}
        a = tuple(t.Size([2]) if x == "size" else (i for i in range(2)) if x == "gen" else x for x in args)
        return t.FloatTensor(*a, **kw)

    check_raises(f)


def test_constructor_from_tensors():
    def f(t):
        x = t.ones(3)
        alias = t.FloatTensor(x)
        alias[0] = 5  # the same memory
        leaf = t.ones(2, requires_grad=True)
        y = t.FloatTensor(leaf)
        return (x, alias is x, y.requires_grad, type(y.grad_fn).__name__, t.Tensor(t.tensor([1, 2])),
                t.FloatTensor([t.tensor(1.0), t.tensor(2.0)]), t.LongTensor([1.7, -2.2]))  # fmt: skip

    check(f, [], grad=False)
    check_raises(lambda t: t.FloatTensor(t.ones(2, dtype=t.float64)))
    check_raises(lambda t: t.LongTensor(t.tensor(2.0)))
    check_raises(lambda t: t.cuda.FloatTensor(2))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
@pytest.mark.parametrize("args", ["()", "(2, 3)", "(t.Size([3]),)", "([1.5, 2],)", "((2, 3),)", "(np.array([1, 2]),)",
                                  "(())", "(range(3),)"])  # fmt: skip
def test_tensor_new(dtype, args):
    """Old code's ``weight.new(n, m).zero_()`` and ``x.new([1, 2])``: the legacy constructor of x's type."""

    def f(t):
        x = t.ones(2, dtype=getattr(t, dtype), requires_grad=dtype == "float32")
        out = x.new(*eval(args))
        if args in ("(2, 3)", "(t.Size([3]),)"):  # uninitialised memory in torch: zero it first, as scripts do
            out = out.zero_()
        return out, out.requires_grad, out.type()

    check(f, [], grad=False)


def test_tensor_new_aliases_and_errors():
    def f(t):
        a = t.ones(3)
        b = a.new(a)
        b[0] = 7
        return a, b.shape, a.new(2, device="cpu").shape, t.Tensor.new(a, [4]).tolist()

    check(f, [], grad=False)
    for bad in ("x.new(t.tensor([1.0]))", "x.new(2, dtype=t.float64)", "x.new(2, requires_grad=True)", "x.new(3.5)",
                "x.new(2, dtype=t.float64, device='cpu')", "x.new('a')", "x.new(2, device='meta')"):  # fmt: skip

        def g(t, bad=bad):
            x = t.arange(3)  # noqa: F841 - read by eval
            return eval(bad)

        check_raises(g)
    for kwargs in ({"dtype": "float64"}, {"foo": 1}, {"requires_grad": True}):  # the whole message
        got = []
        for lib in (torch, torchlike):
            try:
                lib.ones(1).new(2, **{k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()})
            except TypeError as e:
                got.append(str(e))
        assert got[0] == got[1]


def test_constructor_from_storage():
    def f(t):
        x = t.arange(4, dtype=t.float32)
        y = t.FloatTensor(x.untyped_storage())
        return y, y.data_ptr() == x.data_ptr()

    check(f, [], grad=False)


def test_isinstance():
    def f(t):
        x, p = t.ones(2), t.nn.Parameter(t.ones(2))
        return [isinstance(v, getattr(t, n)) for v in (x, p, x.long(), x.half(), x.bool(), x[0], 3, "x")
                for n in TYPES] + [isinstance(x, t.cuda.FloatTensor),
                                   isinstance(x, (t.LongTensor, t.FloatTensor))]  # fmt: skip

    check(f, [], grad=False)


@pytest.mark.parametrize("target", ["t.FloatTensor", "t.DoubleTensor", "t.LongTensor", "t.BoolTensor", "t.HalfTensor",
                                    "'torch.IntTensor'", "'torch.ByteTensor'", "t.float64", "t.int8",
                                    "t.Tensor"])  # fmt: skip
def test_type_conversion(target):
    def f(t, x):
        y = x.type(eval(target.replace("'torch.", "'torch.")))
        return y, y.type(), x.type(), y is x, x.type(dtype=eval(target)).dtype

    check(f, [np.array([1.5, -2.0, 0.0], dtype=np.float32)], grad=False)


def test_type_names():
    def f(t):
        return [getattr(t, n)([1]).type() for n in TYPES] + [t.ones(2, dtype=t.complex64).type(), t.typename(t.ones(1))]

    check(f, [], grad=False)


def test_type_gradient_and_classes():
    def f(t, x):
        y = x.type(t.DoubleTensor)
        p = t.nn.Parameter(t.ones(2))
        kinds = type(p.type(t.FloatTensor)).__name__, type(p.type(t.DoubleTensor)).__name__
        return y * 2, type(y.grad_fn).__name__, kinds

    check(f, [np.array([1.0, 2.0], dtype=np.float32)], grad=True)


@pytest.mark.parametrize("target", ["int", "float", "'float'", "'FloatTensor'", "'torch.float32'", "'foo'", "3",
                                    "None.__class__"])  # fmt: skip
def test_type_errors(target):
    check_raises(lambda t: t.ones(2).type(eval(target)))


def test_type_unexpected_keyword():
    check_raises(lambda t: t.ones(2).type(t.float32, foo=1))


def test_type_methods_through_the_class():
    check(lambda t: (t.FloatTensor.add(t.ones(2), t.ones(2)), t.LongTensor.sum(t.LongTensor([1, 2]))), [], grad=False)


@pytest.mark.parametrize("arg", ["t.DoubleTensor", "'torch.DoubleTensor'", "t.FloatTensor", "'torch.FloatTensor'",
                                 "t.HalfTensor"])  # fmt: skip
def test_set_default_tensor_type(arg):
    def f(t):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t.set_default_tensor_type(eval(arg))
            return t.get_default_dtype(), t.ones(1).dtype, t.Tensor(1).dtype, t.tensor(1.5).type()
        finally:
            t.set_default_dtype(t.float32)

    check(f, [], grad=False)


@pytest.mark.parametrize("arg", ["t.LongTensor", "'torch.IntTensor'", "t.float64", "3", "t.Tensor", "'foo'",
                                 "t.cuda.FloatTensor"])  # fmt: skip
def test_set_default_tensor_type_errors(arg):
    def f(t):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t.set_default_tensor_type(eval(arg))

    check_raises(f)
    assert torchlike.get_default_dtype() is torchlike.float32


def test_set_default_tensor_type_warns_once():
    import subprocess
    import sys

    code = ("import warnings, {0}; warnings.simplefilter('always'); {0}.set_default_tensor_type({0}.DoubleTensor); "
            "{0}.set_default_tensor_type({0}.FloatTensor)")  # fmt: skip
    for lib in ("torch", "torchlike"):
        err = subprocess.run([sys.executable, "-c", code.format(lib)], capture_output=True, text=True).stderr
        assert err.count("UserWarning: torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                         "torch.set_default_dtype() and torch.set_default_device() as alternatives.") == 1, (lib, err)


# --- default device ------------------------------------------------------------------------------


def test_device_context():
    def f(t):
        out = [t.get_default_device()]
        with t.device("cpu") as d:
            out += [d, t.get_default_device(), t.ones(1).device, t.randn(2).device, t.arange(3).device,
                    t.tensor([1]).device, t.nn.Linear(2, 2).weight.device, t.empty(2).device,
                    t.full((1,), 2).device]  # fmt: skip
            with t.device("cpu:0"):
                out.append(t.get_default_device())
            out.append(t.get_default_device())
        out.append(t.get_default_device())
        try:
            with t.device("cpu"):
                raise ValueError
        except ValueError:
            pass
        out.append(t.get_default_device())
        return [str(x) for x in out]

    check(f, [], grad=False)


def test_set_default_device():
    def f(t):
        try:
            out = [t.get_default_device()]
            t.set_default_device("cpu")
            out += [t.get_default_device(), t.zeros(2).device]
            with t.device("cpu"):
                out.append(t.get_default_device())
            out.append(t.get_default_device())
            t.set_default_device(t.device("cpu"))
            out.append(t.get_default_device())
        finally:
            t.set_default_device(None)
        out.append(t.get_default_device())
        return [str(x) for x in out]

    check(f, [], grad=False)


def test_device_context_errors():
    check_raises(lambda t: t.set_default_device("foo"))


def test_cuda_default_device_without_a_gpu():
    """torch and torchlike both refuse to create a tensor (the messages name their own missing backend)."""
    for lib in (torch, torchlike):
        with pytest.raises((AssertionError, RuntimeError)):
            with lib.device("cuda"):
                lib.ones(1)
        assert str(lib.get_default_device()) == "cpu"


def test_default_device_is_per_thread():
    import threading

    seen = []
    with torchlike.device("cpu"):
        th = threading.Thread(target=lambda: seen.append(torchlike._core.device._default.dev))
        th.start()
        th.join()
        assert torchlike._core.device._default.dev == torchlike.device("cpu")
    assert seen == [None]


# --- inference tensors ---------------------------------------------------------------------------


def test_is_inference():
    def f(t):
        a = t.ones(3)
        x = t.nn.Parameter(t.ones(2))
        with t.inference_mode():
            b, c, v, d, e = t.ones(3), a * 2, a[1:], None, None
            a.add_(1)
            d, e = b[1:], b.clone()
            y = x * 2
            lin = t.nn.Linear(2, 2)
            with t.inference_mode(False):
                f_, g = t.ones(2), b * 2
                modes = (t.is_grad_enabled(), t.is_inference_mode_enabled())
        with t.no_grad():
            h = t.ones(1)
            with t.inference_mode(False):
                modes2 = (t.is_grad_enabled(), t.is_inference_mode_enabled())
        return ([v_.is_inference() for v_ in (a, b, c, v, d, e, f_, g, h, b + 1, b.detach(), y, lin.weight)],
                t.is_inference(b), y.requires_grad, modes, modes2)  # fmt: skip

    check(f, [], grad=False)


def test_is_inference_decorator():
    def f(t):
        @t.inference_mode()
        def make():
            return t.zeros(2)

        return make().is_inference(), t.zeros(2).is_inference()

    check(f, [], grad=False)


@pytest.mark.parametrize("op", ["p.add_(1)", "p.__setitem__(0, 3)", "p.zero_()", "p[0].fill_(2)", "t.add(p, 1, out=p)",
                                "p.copy_(t.ones(2))", "p.resize_(3)"])  # fmt: skip
def test_inplace_update_of_an_inference_tensor(op):
    def f(t):
        with t.inference_mode():
            p = t.ones(2)
        eval(op)

    check_raises(f)


def test_inplace_update_inside_inference_mode():
    def f(t):
        x = t.ones(2)
        with t.inference_mode():
            p = t.ones(2)
            p.add_(1)
            x.add_(1)
        return p, x, p.is_inference(), x.is_inference()

    check(f, [], grad=False)
