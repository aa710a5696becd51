"""Off the CPU, SGD and Adam(W) run as optax transformations; forced on here, they must follow the
exact (torch-rounding) path to float32 tolerance over many steps."""

import numpy as np
import pytest

import torchlike as torch
from torchlike.optim import _fused


def _trajectory(make_opt, exact, steps=40):
    torch.manual_seed(0)
    w = torch.randn(5, 4, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    opt = make_opt([w, b])
    x = torch.randn(8, 5)
    orig = _fused.fused_update
    if not exact:
        _fused.fused_update = lambda *a: orig(*a[:7], False)
    try:
        out = []
        for _ in range(steps):
            opt.zero_grad()
            ((x @ w + b).tanh() ** 2).mean().backward()
            opt.step()
            out.append(np.concatenate([w.detach().numpy().ravel(), b.detach().numpy().ravel()]))
        return np.array(out), opt
    finally:
        _fused.fused_update = orig


CASES = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "sgd_momentum_wd": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=0.01),
    "sgd_nesterov_max": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.8, nesterov=True, maximize=True),
    "sgd_dampening": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1),
    "adam": lambda ps: torch.optim.Adam(ps, lr=0.01),
    "adam_l2": lambda ps: torch.optim.Adam(ps, lr=0.01, weight_decay=0.05, betas=(0.8, 0.99), eps=1e-6),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01),
    "adamw_max": lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1, maximize=True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_optax_path_matches_exact_path(name):
    exact, opt_e = _trajectory(CASES[name], True)
    fast, opt_f = _trajectory(CASES[name], False)
    np.testing.assert_allclose(fast, exact, rtol=2e-5, atol=2e-6)
    for se, sf in zip(opt_e.state.values(), opt_f.state.values()):
        assert se.keys() == sf.keys()
        for k in se:
            np.testing.assert_allclose(sf[k].numpy(), se[k].numpy(), rtol=2e-5, atol=2e-6, err_msg=k)
            # the arrays themselves stay float32: float64 hyper-parameters must not promote the maths
            assert sf[k]._data().dtype == se[k]._data().dtype, k
    for p in opt_f.param_groups[0]["params"]:
        assert p._data().dtype == np.float32


def test_optax_path_is_used_off_the_cpu_only():
    assert torch.optim.SGD._update_optax is not None and torch.optim.Adam._update_optax is not None
    assert not torch.optim.Adam._optax_ok((False, False, False, True))  # amsgrad stays on the plain path
