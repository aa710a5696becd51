"""torch.autograd.profiler: ranges (``record_function``) timed on host timers, and the legacy
``profile`` context manager. torch.profiler builds its scheduled profiler on this.

Ranges are also entered as ``jax.profiler.TraceAnnotation``s, so they show in a JAX trace
(``jax.profiler.trace``) next to XLA's own events. Differs from torch: per-op events (``aten::*``) are not
recorded, since torchlike's ops run inside fused JAX programs.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from typing import Any, Callable

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]


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


def _export_chrome_trace(events: list, path: str) -> None:
    pid = os.getpid()
    trace = [{"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op", "name": e.trace_name,
              "pid": pid, "tid": e.thread, "ts": e.time_range[0], "dur": e.cpu_time_total} for e in events]  # fmt: skip
    with open(path, "w") as f:
        json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)


def _start() -> _Recorder:
    global _active
    _active = _Recorder()
    return _active


def _stop(rec: _Recorder) -> None:
    global _active
    if _active is rec:
        _active = None


class profile:
    """The legacy profiler: records every range while enabled. ``print(prof)`` prints its table."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: str | None = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Callable[[], str] | None = None) -> None:  # fmt: skip
        self.enabled = enabled
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self._rec: _Recorder | None = None
        self.function_events: EventList | None = None

    def __enter__(self) -> profile:
        if self.enabled:
            self._rec = _start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._rec is not None:
            _stop(self._rec)
            self.function_events = EventList(self._rec.events)
            self._rec = None

    def _events(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:  # fmt: skip
        return self._events().key_averages()

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs: Any) -> str:
        return self._events().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    @property
    def self_cpu_time_total(self) -> float:
        return self._events().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        """Write the ranges as a Chrome trace (chrome://tracing, Perfetto)."""
        _export_chrome_trace(self._events(), path)

    def __str__(self) -> str:
        return self.table()
