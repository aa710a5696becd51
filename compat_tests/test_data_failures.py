"""DataLoader failures under torch and torchlike: the same exceptions, no hangs."""

from __future__ import annotations

import os
import re
import signal
import time

import numpy as np
import pytest
import torch

import torchlike

pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")


class Failing:
    """Sample 5 misbehaves according to ``mode``."""

    def __init__(self, lib, mode):
        self.lib, self.mode = lib, mode

    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == 5:
            if self.mode == "raise":
                raise ValueError(f"bad sample {i}")
            if self.mode == "keyerror":
                raise KeyError("missing")
            if self.mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.mode == "exit":
                os._exit(3)
            if self.mode == "sleep":
                time.sleep(2)
        if self.mode == "shape":
            return self.lib.zeros(4 if i == 5 else 3)
        if self.mode == "npshape":
            return np.zeros((2, 4 if i == 5 else 3))
        return i


def failure(lib, mode, workers, **kwargs):
    it = iter(lib.utils.data.DataLoader(Failing(lib, mode), batch_size=4, num_workers=workers, **kwargs))
    try:
        with pytest.raises(Exception) as info:
            for _ in it:
                pass
    finally:  # shut down now: an iterator freed later inside a garbage cycle makes torch wait 5 s per worker
        if workers:
            it._shutdown_workers()
    return info.value


def both(mode, workers, **kwargs):
    return [failure(lib, mode, workers, **kwargs) for lib in (torch, torchlike)]


def lines(e):
    text = str(e).strip().splitlines()
    return text[0], text[-1]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["raise", "keyerror", "shape", "npshape"])
def test_worker_exception_reraised_with_traceback(mode):
    ref, got = both(mode, 2)
    assert type(got) is type(ref)
    assert lines(got) == lines(ref)
    assert "Original Traceback (most recent call last):" in str(got)
    if mode in ("raise", "keyerror"):
        assert "in __getitem__" in str(got)  # the worker's own frames
    if mode == "keyerror":
        assert repr(got) == repr(ref).replace(os.path.dirname(torch.__file__), "") or repr(got).startswith(
            "KeyError("
        )


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["raise", "shape", "npshape"])
def test_main_process_exception(mode):
    ref, got = both(mode, 0)
    assert type(got) is type(ref)
    assert str(got) == str(ref)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["kill", "exit"])
def test_dead_worker(mode):
    ref, got = both(mode, 2)
    pid = re.compile(r"\(pid\(s\) \d+\)")
    assert type(got) is type(ref) is RuntimeError
    assert (
        pid.sub("(pid(s) N)", str(got))
        == pid.sub("(pid(s) N)", str(ref))
        == ("DataLoader worker (pid(s) N) exited unexpectedly")
    )


@pytest.mark.timeout(60)
def test_timeout():
    ref, got = both("sleep", 1, timeout=1)
    assert type(got) is type(ref)
    assert str(got) == str(ref) == "DataLoader timed out after 1 seconds"
