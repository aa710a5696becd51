"""`python -m torchlike compare --trace`: the first op where torchlike's values part from torch's.

The script runs twice, as `compare` runs it, each run logging the values of the ops the user's code
calls (`_tracelog.py` has the format): under real torch through torch's ``TorchFunctionMode``
(`_trace_torch.py`, executed in the torch process), and under torchlike through wrappers that
`_tracer.install` puts around the public namespaces' functions, the Tensor methods and operators,
``nn.Module.__call__`` and the optimizer step hooks. The logs are aligned by position and op name and
the first op whose outputs differ beyond their dtype's rounding is named.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from torchlike.compat import _tracelog
from torchlike.compat._compare import CompareResult, _env, compare_runs, resolve_options, run_command, torchlike_command
from torchlike.compat._tracer import ENV_LOG, ENV_MAX_OPS

TORCH_DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_trace_torch.py")


@dataclass
class TraceResult:
    """`compare --trace` on one script: the two runs' stdout compared, and their op logs."""

    run: CompareResult
    trace: _tracelog.TraceComparison

    @property
    def ok(self) -> bool:
        return self.run.ok and self.trace.first is None and self.trace.lost is None


def trace_script(
    script: str | os.PathLike[str],
    args: Sequence[str] = (),
    max_ops: int = _tracelog.DEFAULT_MAX_OPS,
    ulps: float = _tracelog.DEFAULT_ULPS,
    timeout: float | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    ignore: re.Pattern[str] | None = None,
    log_dir: str | None = None,
) -> TraceResult:
    """Run ``script`` under torch and torchlike with per-op logging, and compare the logs (kept in
    ``log_dir`` as torch.log and torchlike.log when given; `_tracelog.read_log` reads them)."""
    script = os.fspath(script)
    rtol, atol, timeout, ignore = resolve_options(script, rtol, atol, timeout, ignore)
    with tempfile.TemporaryDirectory(prefix="torchlike-trace-") as tmp:
        tmp = log_dir or tmp
        logs = {}
        runs = {}
        for side, command in (("torch", [sys.executable, TORCH_DRIVER, script, *args]),
                              ("torchlike", torchlike_command(script, args))):  # fmt: skip
            env = _env(aliased=side == "torchlike")
            logs[side] = os.path.join(tmp, f"{side}.log")
            env[ENV_LOG] = logs[side]
            env[ENV_MAX_OPS] = str(max_ops)
            runs[side] = run_command(command, env, timeout)
        run = compare_runs(script, args, runs["torch"], runs["torchlike"], rtol, atol, ignore)
        trace = _tracelog.compare_logs(_tracelog.read_log(logs["torch"]), _tracelog.read_log(logs["torchlike"]), ulps)
    return TraceResult(run, trace)


def format_trace(result: TraceResult, context: int = 3) -> str:
    from torchlike.compat._report import format_result

    return f"{format_result(result.run, context=context)}\n{_tracelog.format_comparison(result.trace)}"
