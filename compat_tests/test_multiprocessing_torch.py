"""Issue 35: torch.multiprocessing, torch vs torchlike: the API surface, tensors crossing process
boundaries through shared memory (in one process, as ForkingPickler sends them), share_memory_, the
spawn exceptions, and processes started for real (marked slow). Whole Hogwild and spawn programs
run in the script corpus (compat_tests/scripts/multiprocessing/)."""

import multiprocessing
import pickle
from multiprocessing.reduction import ForkingPickler

import pytest
import torch
from _harness import check, check_raises

import torchlike


def _send(obj):
    return pickle.loads(ForkingPickler.dumps(obj))


def test_api_surface():
    names = set(torch.multiprocessing.__all__)
    assert names == set(torchlike.multiprocessing.__all__)
    for name in sorted(names) + ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                                 "ProcessExitedException", "SpawnContext"]:  # fmt: skip
        assert hasattr(torchlike.multiprocessing, name), name
    assert torchlike.multiprocessing.get_all_start_methods() == multiprocessing.get_all_start_methods()


def test_tensors_cross_through_shared_memory():
    def f(t):
        x = t.arange(6.0).reshape(2, 3)
        before = x.is_shared()
        y = _send(x)
        y.add_(1)  # the same memory
        v = _send(x[:, 1])
        v.mul_(10)
        p = _send(t.nn.Parameter(t.ones(2)))
        leaf = _send(t.ones(2, requires_grad=True))
        ints = _send(t.arange(4))
        return (x, before, x.is_shared(), y.is_shared(), v.shape, v.stride(), v.storage_offset(), type(p).__name__,
                p.requires_grad, leaf.requires_grad, leaf.is_leaf, ints, ints.dtype)  # fmt: skip

    check(f, [], grad=False)


def test_non_leaf_refused():
    check_raises(lambda t: ForkingPickler.dumps(t.ones(2, requires_grad=True) * 2))


def test_share_memory():
    def f(t):
        x = t.zeros(2, 3)
        r = x.share_memory_()
        x[0, 1] = 5
        x.t()[2].fill_(7)
        m = t.nn.Linear(2, 2)
        m.weight.grad = t.zeros(2, 2)
        out = m.share_memory()
        return (r is x, x.is_shared(), x[1:].is_shared(), x, out is m, m.weight.is_shared(), m.bias.is_shared(),
                m.weight.grad.is_shared(), t.ones(1).is_shared())  # fmt: skip

    check(f, [], grad=False)


def test_training_on_shared_parameters():
    def f(t):
        t.manual_seed(0)
        m = t.nn.Linear(3, 1)
        m.share_memory()
        opt = t.optim.SGD(m.parameters(), lr=0.1)
        x = t.randn(8, 3)
        for _ in range(3):
            opt.zero_grad()
            loss = (m(x) ** 2).mean()
            loss.backward()
            opt.step()
        return loss, m.weight, m.bias, m.weight.is_shared()

    check(f, [], grad=False)


def test_sharing_strategies():
    def f(t):
        mp = t.multiprocessing
        out = [mp.get_sharing_strategy(), sorted(mp.get_all_sharing_strategies())]
        mp.set_sharing_strategy("file_system")
        out.append(mp.get_sharing_strategy())
        mp.set_sharing_strategy(sorted(mp.get_all_sharing_strategies())[0])
        return out

    check(f, [], grad=False)
    check_raises(lambda t: t.multiprocessing.set_sharing_strategy("shm"))


def test_spawn_exceptions():
    def f(t):
        mp = t.multiprocessing
        e = mp.ProcessRaisedException("msg", 1, 123)
        e2 = mp.ProcessExitedException("gone", 0, 7, -9, "SIGKILL")
        r, r2 = pickle.loads(pickle.dumps(e)), pickle.loads(pickle.dumps(e2))
        return (str(e), e.error_index, e.error_pid, r.error_pid, type(r).__name__, e2.exit_code, e2.signal_name,
                r2.exit_code, r2.signal_name, issubclass(mp.ProcessRaisedException, Exception))  # fmt: skip

    check(f, [], grad=False)


def test_spawn_start_method_warning():
    with pytest.warns(FutureWarning, match="This method only supports start_method=spawn"):
        torchlike.multiprocessing.spawn(_noop, nprocs=0, start_method="fork")


def _noop(i):
    pass


def _fail(i):
    if i == 1:
        raise ValueError("boom in worker")


def _exit(i):
    raise SystemExit(3)


def test_fork_is_refused_with_a_clear_error():
    ctx = torchlike.multiprocessing.get_context("fork")
    p = ctx.Process(target=_noop, args=(0,))
    with pytest.raises(RuntimeError, match="'fork' start method cannot run torchlike in the child process"):
        p.start()


def test_default_start_method_is_spawn():
    """Differs from torch on Linux (fork): a forked child cannot run JAX (docs/differences.md)."""
    mp = torchlike.multiprocessing
    assert mp.get_context().get_start_method() == "spawn"
    assert mp.get_context("forkserver").get_start_method() == "forkserver"
    with pytest.raises(ValueError, match="cannot find context for 'bogus'"):
        mp.get_context("bogus")


@pytest.mark.slow
def test_spawn_raises_the_child_error():
    for lib in (torch, torchlike):
        with pytest.raises(lib.multiprocessing.ProcessRaisedException) as info:
            lib.multiprocessing.spawn(_fail, nprocs=2)
        lines = str(info.value).splitlines()
        assert lines[2] == "-- Process 1 terminated with the following error:", lines
        assert lines[-1] == "ValueError: boom in worker"
        assert info.value.error_index == 1
        with pytest.raises(lib.multiprocessing.ProcessExitedException, match="process 0 terminated with exit code 3"):
            lib.multiprocessing.spawn(_exit, nprocs=1)


def _double(x):
    return x * 2


@pytest.mark.slow
def test_forkserver_pool():
    def f(t):
        with t.multiprocessing.get_context("forkserver").Pool(1) as pool:
            return pool.map(_double, [t.ones(2), t.arange(3)])

    check(f, [], grad=False)
