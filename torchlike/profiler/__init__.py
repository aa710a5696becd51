"""torch.profiler: record_function ranges and profiler steps on host timers (see _profiler)."""

from ._profiler import (
    ProfilerAction, ProfilerActivity, profile, record_function, schedule, supported_activities,
    tensorboard_trace_handler,
)  # fmt: skip

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler"]  # fmt: skip
