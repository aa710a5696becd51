"""The seeds' models train for 20 steps under torch and torchlike and print the same losses."""

from __future__ import annotations

import warnings

import numpy as np
import torch

import torchlike

torch.set_num_threads(1)  # torch's threads only fight for this machine's cores


def _net_class(nn, F):  # noqa: ANN001, ANN202 - the seed's CNN, written against either library
    class Net(nn.Module):
        def __init__(self) -> None:
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
            self.mp = nn.MaxPool2d(2)
            self.fc = nn.Linear(320, 10)

        def forward(self, x):  # noqa: ANN001, ANN202
            in_size = x.size(0)
            x = F.relu(self.mp(self.conv1(x)))
            x = F.relu(self.mp(self.conv2(x)))
            x = x.view(in_size, -1)
            x = self.fc(x)
            return F.log_softmax(x)  # the seed's implicit dim: torch warns and picks dim=1

    return Net


def _train_cnn(t, steps: int = 20) -> tuple:  # noqa: ANN001
    t.manual_seed(0)
    model = _net_class(t.nn, t.nn.functional)()
    x = t.randn(8, 1, 28, 28)
    y = t.randint(0, 10, (8,))
    opt = t.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    losses = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            opt.zero_grad()
            loss = t.nn.functional.nll_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return repr(model), losses, model.fc.bias.detach().numpy().copy()


def _train_mlp(t, steps: int = 20) -> tuple:  # noqa: ANN001
    t.manual_seed(0)
    n, d_in, h, d_out = 16, 100, 20, 10
    x = t.randn(n, d_in)
    y = t.randn(n, d_out)
    model = t.nn.Sequential(t.nn.Linear(d_in, h), t.nn.ReLU(), t.nn.Linear(h, d_out))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss_fn = t.nn.MSELoss(size_average=False)
    losses = []
    for _ in range(steps):
        loss = loss_fn(model(x), y)
        model.zero_grad()
        loss.backward()
        for param in model.parameters():
            param.data -= 1e-3 * param.grad.data
        losses.append(loss.item())
    return repr(model), losses, model[2].bias.detach().numpy().copy()


def _train_linreg(t, steps: int = 20) -> tuple:  # noqa: ANN001
    x = t.tensor([[1], [2], [3], [4]], dtype=t.float32)
    y = t.tensor([[2], [4], [6], [8]], dtype=t.float32)
    t.manual_seed(0)
    model = t.nn.Linear(1, 1)
    loss = t.nn.MSELoss()
    opt = t.optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for _ in range(steps):
        cost = loss(y, model(x))
        cost.backward()
        opt.step()
        opt.zero_grad()
        losses.append(cost.item())
    w, b = model.parameters()
    return repr(model), losses, np.array([w.item(), b.item()])


def _compare(fn, printed: bool = False) -> None:  # noqa: ANN001
    r_repr, r_losses, r_final = fn(torch)
    g_repr, g_losses, g_final = fn(torchlike)
    assert g_repr == r_repr
    if printed:  # printed as a training loop prints them, the losses are the same
        assert [f"{v:.4f}" for v in g_losses] == [f"{v:.4f}" for v in r_losses]
    # float32 training drifts by rounding (different summation orders in conv/matmul kernels)
    np.testing.assert_allclose(g_losses, r_losses, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g_final, r_final, rtol=1e-4, atol=1e-5)


def test_seed_cnn_trains_like_torch() -> None:
    _compare(_train_cnn, printed=True)


def test_seed_sequential_mlp_size_average_false() -> None:
    _compare(_train_mlp)


def test_seed_linear_regression() -> None:
    _compare(_train_linreg, printed=True)


def test_lstm_classifier_trains_like_torch() -> None:
    def run(t):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        rnn = t.nn.LSTM(3, 5, num_layers=2, batch_first=True, dropout=0.3)
        head = t.nn.Linear(5, 2)
        params = list(rnn.parameters()) + list(head.parameters())
        opt = t.optim.Adam(params, lr=0.01)
        x = t.randn(4, 6, 3)
        y = t.tensor([0, 1, 1, 0])
        losses = []
        for _ in range(10):
            opt.zero_grad()
            out, _ = rnn(x)
            loss = t.nn.functional.cross_entropy(head(out[:, -1]), y)
            loss.backward()
            t.nn.utils.clip_grad_norm_(params, 0.5)
            opt.step()
            losses.append(loss.item())
        return repr(rnn), losses, head.bias.detach().numpy().copy()

    _compare(run)


def test_batchnorm_dropout_model_train_eval() -> None:
    def run(t):  # noqa: ANN001, ANN202
        t.manual_seed(1)
        model = t.nn.Sequential(t.nn.Conv2d(2, 4, 3), t.nn.BatchNorm2d(4), t.nn.ReLU(), t.nn.Dropout2d(0.25),
                                t.nn.AdaptiveAvgPool2d(1), t.nn.Flatten(), t.nn.Linear(4, 3))  # fmt: skip
        opt = t.optim.SGD(model.parameters(), lr=0.1)
        x = t.randn(5, 2, 6, 6)
        y = t.tensor([0, 1, 2, 1, 0])
        losses = []
        for _ in range(8):
            opt.zero_grad()
            loss = t.nn.CrossEntropyLoss(label_smoothing=0.1)(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        model.eval()
        losses.append(model(x).sum().item())
        return repr(model), losses, model[1].running_var.numpy().copy()

    _compare(run)
