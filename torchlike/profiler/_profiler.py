"""torch.profiler on host timers: ``record_function`` ranges and profiler steps, timed with
``time.perf_counter_ns`` and also entered as ``jax.profiler.TraceAnnotation``s, so they show in a JAX
trace (``jax.profiler.trace``) next to XLA's own events.

Differs from torch: per-op events (``aten::*``) are not recorded, since torchlike's ops run inside fused
JAX programs; tables and traces list the ``record_function`` ranges and ``ProfilerStep#N``.
"""

from __future__ import annotations

import enum
import functools
import json
import os
import socket
import threading
import time
import warnings
from typing import Any, Callable, Iterable

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
    from .. import cuda

    return {ProfilerActivity.CPU, ProfilerActivity.CUDA} if cuda.is_available() else {ProfilerActivity.CPU}


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


class FunctionEvent:
    """One timed range (times in microseconds)."""

    def __init__(self, id: int, name: str, start_us: float, end_us: float, thread: int) -> None:
        self.trace_name = name
        if name.startswith("ProfilerStep#"):
            name = "ProfilerStep*"  # torch: steps are one key in events and averages, numbered in traces
        self.id, self.name, self.key, self.thread = id, name, name, thread
        self.time_range = (start_us, end_us)
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1
        self.is_user_annotation = name != "ProfilerStep*"

    @property
    def cpu_time_total(self) -> float:
        return self.time_range[1] - self.time_range[0]

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    def __repr__(self) -> str:
        return f"<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time_total)}>"


class FunctionEventAvg:
    """The events of one name, summed."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.is_user_annotation = key != "ProfilerStep*"

    def add(self, event: FunctionEvent) -> FunctionEventAvg:
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)}>")  # fmt: skip


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """A list of events (or averages) that prints as torch's table."""

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:  # fmt: skip
        rows = list(self)
        if sort_by is not None:
            rows.sort(key=lambda e: getattr(e, sort_by.replace("cpu_time_avg", "cpu_time")), reverse=True)
        rows = rows[:row_limit] if row_limit > 0 else rows
        name_w = min(max((len(e.key) for e in self), default=4) + 4, max_name_column_width)
        self_total = sum(e.self_cpu_time_total for e in self)
        heads = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        sep = "-" * name_w + "  " + "  ".join("-" * 12 for _ in heads) + "  "
        out = [sep, "Name".rjust(name_w) + "  " + "  ".join(h.rjust(12) for h in heads) + "  ", sep]
        if header is not None:
            out = ["=" * len(sep), header, *out]

        def pct(x: float) -> str:
            return f"{100 * x / self_total:.2f}%" if self_total else "0.00%"

        for e in rows:
            name = e.key if len(e.key) <= name_w - 4 else e.key[: name_w - 7] + "..."
            cells = [pct(e.self_cpu_time_total), _format_time(e.self_cpu_time_total), pct(e.cpu_time_total),
                     _format_time(e.cpu_time_total), _format_time(e.cpu_time_total / e.count), str(e.count)]  # fmt: skip
            out.append(name.rjust(name_w) + "  " + "  ".join(c.rjust(12) for c in cells) + "  ")
        out += [sep, f"Self CPU time total: {_format_time(self_total)}", ""]
        return "\n".join(out)

    def key_averages(self) -> EventList:
        averages: dict[str, FunctionEventAvg] = {}
        for e in self:
            averages.setdefault(e.key, FunctionEventAvg(e.key)).add(e)
        return EventList(averages.values())

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)


class _Recorder:
    """The ranges of the profiler now recording (one at a time, as in torch)."""

    def __init__(self) -> None:
        self.events: list[FunctionEvent] = []
        self.stack: list[FunctionEvent] = []
        self.t0 = time.perf_counter_ns()

    def begin(self, name: str) -> FunctionEvent:
        now = (time.perf_counter_ns() - self.t0) / 1e3
        ev = FunctionEvent(len(self.events), name, now, now, threading.get_ident())
        if self.stack:
            ev.cpu_parent = self.stack[-1]
            self.stack[-1].cpu_children.append(ev)
        self.events.append(ev)
        self.stack.append(ev)
        return ev

    def end(self, ev: FunctionEvent) -> None:
        ev.time_range = (ev.time_range[0], (time.perf_counter_ns() - self.t0) / 1e3)
        if ev in self.stack:
            self.stack.remove(ev)


_active: _Recorder | None = None


class record_function:
    """A named range: a context manager or decorator, recorded while a profiler records."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._ev: FunctionEvent | None = None
        self._rec: _Recorder | None = None
        self._annotation: Any = None

    def __enter__(self) -> record_function:
        import jax

        self._annotation = jax.profiler.TraceAnnotation(self.name)
        self._annotation.__enter__()
        self._rec = _active
        if self._rec is not None:
            self._ev = self._rec.begin(self.name)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._rec is not None and self._ev is not None:
            self._rec.end(self._ev)
        self._ev = self._rec = None
        self._annotation.__exit__(*exc)

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper


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
        global _active
        if self._rec is None:
            self._rec = _active = _Recorder()
        if self._has_schedule:
            self._step = self._rec.begin(f"ProfilerStep#{self.step_num}")

    def _close(self, save: bool) -> None:
        global _active
        if self._rec is None:
            return
        if self._step is not None:
            self._rec.end(self._step)
            self._step = None
        if save:
            self._done = self._rec.events
            _active = self._rec = None
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
        pid = os.getpid()
        events = [{"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op", "name": e.trace_name,
                   "pid": pid, "tid": e.thread, "ts": e.time_range[0], "dur": e.cpu_time_total}
                  for e in self._done]  # fmt: skip
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


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
