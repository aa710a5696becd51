"""torch.profiler: the scheduled profiler over torch.autograd.profiler's ranges (host timers and JAX trace
annotations). Tables and traces list the ``record_function`` ranges and ``ProfilerStep#N``; per-op
(``aten::*``) events are not recorded.
"""

from __future__ import annotations

import enum
import os
import socket
import time
import warnings
from typing import Any, Callable, Iterable

from ..autograd.profiler import (
    EventList,
    FunctionEvent,
    _export_chrome_trace,
    _Recorder,
    _start,
    _stop,
    record_function,
)

__all__ = ["ProfilerActivity", "ProfilerAction", "profile", "record_function", "schedule",
           "tensorboard_trace_handler", "supported_activities"]  # fmt: skip


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    from .._core import device

    return {ProfilerActivity.CPU, ProfilerActivity.CUDA} if device.cuda_available() else {ProfilerActivity.CPU}


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:  # fmt: skip
    """The action for each step: skip ``skip_first``, then cycles of ``wait``, ``warmup`` and ``active``
    steps (the last active one saves), ``repeat`` times (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


class profile:
    """torch.profiler.profile: records ranges while its schedule says RECORD (always, without one)."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[profile], Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None,
                 execution_trace_observer: Any = None, acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback: Callable[[], str] | None = None) -> None:  # fmt: skip
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule or (lambda step: ProfilerAction.RECORD)
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules, self.acc_events = with_flops, with_modules, acc_events
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._rec: _Recorder | None = None
        self._step: FunctionEvent | None = None
        self._done: list[FunctionEvent] = []
        self._has_schedule = schedule is not None

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _recording(self) -> bool:
        return self.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def _open(self) -> None:
        if self._rec is None:
            self._rec = _start()
        if self._has_schedule:
            self._step = self._rec.begin(f"ProfilerStep#{self.step_num}")

    def _close(self, save: bool) -> None:
        if self._rec is None:
            return
        if self._step is not None:
            self._rec.end(self._step)
            self._step = None
        if save:
            self._done = self._rec.events
            _stop(self._rec)
            self._rec = None
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def start(self) -> None:
        if self._recording():
            self._open()

    def stop(self) -> None:
        if self._rec is not None:
            self._close(save=True)

    def step(self) -> None:
        """Mark the end of a training step; the schedule decides what the next one records."""
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if prev in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._close(save=prev is ProfilerAction.RECORD_AND_SAVE)
        if self._recording():
            self._open()

    def events(self) -> EventList:
        return EventList(self._done)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:  # fmt: skip
        return self.events().key_averages()

    def export_chrome_trace(self, path: str) -> None:
        """Write the ranges as a Chrome trace (chrome://tracing, Perfetto)."""
        _export_chrome_trace(self._done, path)


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable[[profile], None]:  # fmt: skip
    """An ``on_trace_ready`` handler writing ``<worker>.<ms>.pt.trace.json`` into ``dir_name``."""
    if use_gzip:
        raise NotImplementedError("torchlike's tensorboard_trace_handler does not support use_gzip=True yet")

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(dir_name, f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json"))

    return handler
