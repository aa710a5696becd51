"""torch.stft / torch.istft (and the Tensor methods) against torch: values, dtypes, gradients, grad_fn names,
warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from _harness import check, check_raises

import torchlike
import torchlike.signal.windows  # noqa: F401  (the namespace loads as an attribute of torchlike)

rng = np.random.RandomState(0)
SIG = rng.randn(2, 30).astype(np.float32)
SIG64 = rng.randn(30)
IMAG = rng.randn(30).astype(np.float32)


def _hann(t, n, dtype=None):
    """torch.hann_window(n) (periodic), through torch.signal.windows."""
    return t.signal.windows.hann(n, sym=False, dtype=dtype or t.float32)


def _real(y):
    """A real view of a complex result, so that the harness backpropagates through every component."""
    return torch.view_as_real(y.resolve_conj()) if isinstance(y, torch.Tensor) else torchlike.view_as_real(y)


STFT = [
    {"n_fft": 8},
    {"n_fft": 8, "hop_length": 3, "win_length": 5, "normalized": True},
    {"n_fft": 7, "pad_mode": "constant"},
    {"n_fft": 8, "pad_mode": "replicate", "onesided": False},
    {"n_fft": 6, "pad_mode": "circular", "hop_length": 4},
    {"n_fft": 8, "center": False},
    {"n_fft": 8, "center": False, "win_length": 4, "hop_length": 2, "align_to_window": True},
    {"n_fft": 8, "center": False, "win_length": 5, "align_to_window": False},
    {"n_fft": 30, "center": False},
]


def _stft_fn(kw, windowed=True):
    def fn(t, x):
        window = _hann(t, kw.get("win_length", kw["n_fft"])) if windowed else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the missing-window warning
            return _real(t.stft(x, window=window, return_complex=True, **kw))

    return fn


@pytest.mark.parametrize("kw", STFT, ids=str)
def test_stft(kw):
    check(_stft_fn(kw), [SIG])


def test_stft_unbatched_and_no_window():
    check(_stft_fn(STFT[1]), [SIG[1]])
    check(_stft_fn(STFT[0], windowed=False), [SIG[1]])
    check(_stft_fn(STFT[6], windowed=False), [SIG])


def test_stft_dtypes_and_complex_input():
    # float64 window promotes float32 input; complex input or window gives the full spectrum (onesided=False)
    check(lambda t, x: _real(t.stft(x, 8, window=_hann(t, 8, t.float64), return_complex=True)), [SIG])
    check(lambda t, x, y: _real(t.stft(t.complex(x, y), 8, window=_hann(t, 8))), [SIG[0], IMAG])
    check(lambda t, x, y: _real(t.stft(t.complex(x, y), 8, onesided=False, return_complex=True)), [SIG[0], IMAG],
          grad=False)  # fmt: skip
    check(lambda t, x: _real(t.stft(x, 8, window=t.ones(8, dtype=t.complex64), return_complex=True)), [SIG])
    check(lambda t, x: _real(t.stft(x, 8, window=t.ones(8, dtype=t.int64), return_complex=True)), [SIG], grad=False)
    check(lambda t, x: _real(x.stft(8, window=_hann(t, 8), return_complex=True)), [SIG], grad=False)  # the method


def test_stft_window_gradient():
    def fn(t, x, w):
        return _real(t.stft(x, 8, hop_length=3, window=w, center=False, return_complex=True))

    check(fn, [SIG, rng.rand(8).astype(np.float32)])


def test_stft_return_complex_false():
    def fn(t, x):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = t.stft(x, 8, window=_hann(t, 8), return_complex=False)
        deprecated = [str(w.message).split("\n")[0] for w in caught]
        return out, deprecated[:1]

    check(fn, [SIG])
    check(lambda t, x: t.stft(x, 8, window=_hann(t, 8), return_complex=False, normalized=True), [SIG[0]])


def _warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if w.category is UserWarning and "compiled" not in str(w.message)]


def test_warnings():
    # torch warns once per process (TORCH_WARN_ONCE), so its text is checked here rather than compared live
    t, x = torchlike, torchlike.ones(20)
    (msg,) = _warnings(lambda: t.stft(x, 8, return_complex=True))
    assert msg.startswith("A window was not provided. A rectangular window will be applied,which is known")
    spec = t.stft(x, 8, window=_hann(t, 8), return_complex=True)
    (msg,) = _warnings(lambda: t.istft(spec, 8))
    assert msg.startswith("A window was not provided. A rectangular window will be applied.Please provide")
    (msg,) = _warnings(lambda: t.istft(spec, 8, window=_hann(t, 8), length=30))
    assert msg.startswith("The length of signal is shorter than the length parameter.")
    assert _warnings(lambda: t.istft(spec, 8, window=_hann(t, 8), length=20)) == []


def test_missing_window_warnings_point_at_the_caller():
    # torch's full texts (its C++ TORCH_WARN_ONCE fires once per process, so they are written out here)
    suffix = "To suppress this warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`."
    x = torchlike.ones(20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = torchlike.stft(x, 8, return_complex=True)
        torchlike.istft(spec, 8)
    assert [str(w.message) for w in caught] == [
        "A window was not provided. A rectangular window will be applied,which is known to cause spectral leakage. "
        "Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce spectral leakage."
        + suffix,
        "A window was not provided. A rectangular window will be applied.Please provide the same window used by stft "
        "to make the inversion lossless." + suffix,
    ]
    assert [w.filename for w in caught] == [__file__, __file__]


def test_grad_fn_names():
    def names(t, x):
        w = _hann(t, 8)
        s1 = t.stft(x[0], 8, window=w, return_complex=True)
        s2 = t.stft(x, 8, window=w, return_complex=True)
        return [
            type(y.grad_fn).__name__
            for y in (
                s1, s2, t.stft(x, 8, window=w, return_complex=False), t.istft(s1, 8, window=w),
                t.istft(s2, 8, window=w), t.istft(s1, 8, window=w, length=40),
            )
        ]  # fmt: skip

    (ref, _), (got, _) = [(names(t, t.tensor(SIG, requires_grad=True)), None) for t in (torch, torchlike)]
    assert got == ref


ISTFT = [
    ({"n_fft": 8}, {}),
    ({"n_fft": 8, "hop_length": 3, "win_length": 6, "normalized": True}, {}),
    ({"n_fft": 8}, {"length": 25}),
    ({"n_fft": 8}, {"length": 35}),
    ({"n_fft": 7, "hop_length": 2}, {}),
    ({"n_fft": 8, "onesided": False}, {}),
    ({"n_fft": 8, "onesided": False}, {"return_complex": True}),
]


@pytest.mark.parametrize("kw,extra", ISTFT, ids=str)
def test_istft(kw, extra):
    def fn(t, x):
        w = _hann(t, kw.get("win_length", kw["n_fft"]))
        spec = t.stft(x, window=w, return_complex=True, **kw).detach().requires_grad_(True)
        kw_i = {k: v for k, v in kw.items() if k != "onesided"}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the length warning
            y = t.istft(spec, window=w, **kw_i, **extra)
        y.backward(t.ones_like(y))
        grad = _real(spec.grad)
        return (_real(y) if y.dtype.is_complex else y), grad

    check(fn, [SIG if "length" in extra else SIG[0]], grad=False)


def test_istft_round_trip_and_method():
    # a float32 window, float64 signal: the two libraries' float32 windows may differ in the last bit
    check(lambda t, x: t.stft(x, 8, window=_hann(t, 8), return_complex=True).istft(8, window=_hann(t, 8)), [SIG64],
          rtol=1e-6, atol=1e-6, grad=False)  # fmt: skip
    # float32 spectra inverted in float64: compared at float32's tolerance
    check(lambda t, x: t.istft(t.stft(x, 8, return_complex=True), 8, window=_hann(t, 8, t.float64)), [SIG],
          rtol=1e-6, atol=1e-6, grad=False)  # fmt: skip
    check(lambda t, x: t.istft(t.stft(x, 8, window=t.ones(8), center=False, return_complex=True), 8,
                               window=t.ones(8), center=False, length=28), [SIG], grad=False)  # fmt: skip


STFT_ERRORS = [
    lambda t, x: t.stft(x, 8),  # return_complex required for real input
    lambda t, x: t.stft(x, 8, align_to_window=True, return_complex=True),
    lambda t, x: t.stft(x, 8, win_length=9, return_complex=True),
    lambda t, x: t.stft(x, 8, window=t.ones(6), return_complex=True),
    lambda t, x: t.stft(x, 8, window=t.ones(2, 4), center=False, return_complex=True),
    lambda t, x: t.stft(x, 31, center=False, return_complex=True),
    lambda t, x: t.stft(x, 0, center=False, return_complex=True),
    lambda t, x: t.stft(x, 8, hop_length=0, return_complex=True),
    lambda t, x: t.stft(x.reshape(2, 3, 5), 4, center=False, return_complex=True),
    lambda t, x: t.stft(x.long(), 4, return_complex=True),
    lambda t, x: t.stft(x.half(), 4, return_complex=True),
    lambda t, x: t.stft(x[:, :3], 8, return_complex=True),
    lambda t, x: t.stft(x, 8, pad_mode="nope", return_complex=True),
    lambda t, x: t.stft(x.to(t.complex64), 8, onesided=True),
]


@pytest.mark.parametrize("i", range(len(STFT_ERRORS)))
def test_stft_errors(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_raises(STFT_ERRORS[i], [SIG])


def _spec(t, x):
    return t.stft(x, 8, window=_hann(t, 8), return_complex=True)


ISTFT_ERRORS = [
    lambda t, x: t.istft(x, 8),
    lambda t, x: t.istft(_spec(t, x)[:, :, :0], 8),
    lambda t, x: t.istft(_spec(t, x)[None], 8),
    lambda t, x: t.istft(_spec(t, x), 8, onesided=False),
    lambda t, x: t.istft(t.stft(x, 8, onesided=False, return_complex=True), 8, onesided=True),
    lambda t, x: t.istft(_spec(t, x), 8, hop_length=0),
    lambda t, x: t.istft(_spec(t, x), 8, win_length=9),
    lambda t, x: t.istft(_spec(t, x), 8, window=t.ones(3)),
    lambda t, x: t.istft(_spec(t, x), 8, window=t.zeros(8)),
    lambda t, x: t.istft(_spec(t, x), 8, window=_hann(t, 8), center=False),
    lambda t, x: t.istft(_spec(t, x), 8, return_complex=True),
    lambda t, x: t.istft(_spec(t, x), 8, window=t.ones(8, dtype=t.complex64)),
]


@pytest.mark.parametrize("i", range(len(ISTFT_ERRORS)))
def test_istft_errors(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_raises(ISTFT_ERRORS[i], [SIG])


# --- the window factories -----------------------------------------------------------------------------------

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
def test_window_factories(name):
    def fn(t):
        make = getattr(t, name)
        out = [make(0), make(1, False), make(2), make(5), make(5, False), make(5, dtype=t.float64),
               make(4, False, dtype=t.float16), make(5, dtype=t.bfloat16)]  # fmt: skip
        w = make(4, requires_grad=True)
        return out, w.requires_grad, w.is_leaf

    check(fn, [], grad=False)
    for bad in (
        lambda t: getattr(t, name)(-1),
        lambda t: getattr(t, name)(4, dtype=t.int64),
        lambda t: getattr(t, name)(4, dtype=t.bool, device="cpu", layout=t.strided),
        lambda t: getattr(t, name)(4, layout=t.sparse_coo),
        lambda t: getattr(t, name)(4, dtype=t.complex64),
        lambda t: getattr(t, name)(4.0),
    ):
        check_raises(bad)


def test_window_parameters():
    check(lambda t: (t.hamming_window(5, False, 0.6), t.hamming_window(6, True, 0.6, 0.3), t.kaiser_window(9, True, 3.0),
                     t.kaiser_window(8, False, beta=0.5)), [], grad=False)  # fmt: skip
    check(lambda t, x: _real(t.stft(x, 16, window=t.hann_window(16), return_complex=True)), [SIG])


def test_stft_under_cpu_autocast():
    # torch's CPU autocast runs stft in float32 (bfloat16 input included); outside it bfloat16 is refused
    def fn(t, x):
        with t.autocast("cpu", dtype=t.bfloat16):
            a = t.stft(x, 8, window=t.hann_window(8), return_complex=True)
            # NOTE: values only: the bfloat16 signal's reflect padding accumulates its gradient in a different
            # precision (the pad op's autocast category, not stft's)
            b = t.stft(x.detach().bfloat16(), 8, window=t.hann_window(8).bfloat16(), return_complex=True)
        return _real(a), _real(b)

    check(fn, [SIG], rtol=1e-5, atol=1e-5)
    check_raises(lambda t, x: t.stft(x.bfloat16(), 8, window=t.hann_window(8).bfloat16(), return_complex=True), [SIG])
    # a float32 window promotes a bfloat16 signal
    check(lambda t, x: _real(t.stft(x.bfloat16(), 8, window=t.hann_window(8), return_complex=True)), [SIG], grad=False)
