"""A lazily replayed training loop (torchlike.lazy on) prints torch's losses, with and without a host read per step."""

from __future__ import annotations

import numpy as np
import torch

import torchlike

torch.set_num_threads(1)  # torch's threads only fight for this machine's cores


def _train(t, steps: int = 10, sync: bool = True) -> tuple:  # noqa: ANN001
    t.manual_seed(0)
    model = t.nn.Sequential(t.nn.Linear(12, 32), t.nn.ReLU(), t.nn.Linear(32, 4))
    opt = t.optim.Adam(model.parameters(), lr=1e-2)
    x = t.randn(16, 12)
    y = t.randint(0, 4, (16,))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = t.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item() if sync else loss.detach())
    losses = [v if isinstance(v, float) else v.item() for v in losses]
    return losses, model[2].bias.detach().numpy().copy()


def test_replayed_adam_loop_matches_torch() -> None:
    want_losses, want_bias = _train(torch)
    for sync in (True, False):
        with torchlike.lazy.mode(True):
            torchlike.lazy.reset_stats()
            got_losses, got_bias = _train(torchlike, sync=sync)
            stats = torchlike.lazy.stats()
        np.testing.assert_allclose(got_losses, want_losses, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got_bias, want_bias, rtol=1e-5, atol=1e-6)
        assert stats["replayed_steps"] >= 5, stats
