"""Run a script under real torch and under torchlike, in separate processes, and compare stdout."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from torchlike.compat._lines import DEFAULT_ATOL, DEFAULT_RTOL, Divergence, first_divergence, unified_diff
from torchlike.compat._run import SHIM_DIR, child_env_pythonpath

DEFAULT_TIMEOUT = 600.0

MATCH = "match"
DIVERGED = "diverged"  # stdout differs
EXIT_CODE = "exit code"  # return codes differ
EXCEPTION = "exception"  # both raised, with different exceptions
TIMEOUT = "timeout"


@dataclass
class RunResult:
    """One run of a script: its command, exit code, output and wall time."""

    command: list[str]
    returncode: int | None  # None after a timeout
    stdout: str
    stderr: str
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


@dataclass
class CompareResult:
    """The outcome of running one script under torch and torchlike."""

    script: str
    args: list[str]
    torch: RunResult
    torchlike: RunResult
    status: str
    divergence: Divergence | None = None
    detail: str = ""  # one line saying what differs, empty on a match
    area: str = field(default="")
    # how stdout was compared, so the same rules show the diff
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    ignore: re.Pattern[str] | None = None

    def diff(self, context: int = 3) -> list[str]:
        """A unified diff of the two stdouts from the first difference on ([] when they agree)."""
        return unified_diff(self.torch.stdout, self.torchlike.stdout, context, self.rtol, self.atol, self.ignore)

    @property
    def ok(self) -> bool:
        return self.status == MATCH


REFERENCE_SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_shim_reference")


def torch_command(script: str, args: Sequence[str]) -> list[str]:
    return [sys.executable, script, *args]


def torchlike_command(script: str, args: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "torchlike", "run", script, *args]


def _env(aliased: bool) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PYTHONHASHSEED", "0")  # set/dict-of-str order must not differ between the two runs
    if aliased:
        env["PYTHONPATH"] = child_env_pythonpath(env.get("PYTHONPATH"))
    else:  # never let the torchlike stand-in for `torch` leak into the reference run, and make a script
        # written as `import torchlike as torch` get real torch there
        parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != SHIM_DIR]
        env["PYTHONPATH"] = os.pathsep.join([REFERENCE_SHIM_DIR, *parts])
    return env


def run_command(command: list[str], env: dict[str, str], timeout: float, cwd: str | None = None) -> RunResult:
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            command,
            check=False,
            capture_output=True,
            text=True,
            errors="replace",
            env=env,
            timeout=timeout,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return RunResult(command, None, out, err, time.perf_counter() - start)
    return RunResult(command, proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start)


def exception_text(stderr: str) -> str | None:
    """The exception python printed last in `stderr` (type and message), or None if there is none."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if not starts:
        return None
    body = lines[starts[-1] + 1 :]
    i = 0
    while i < len(body) and (body[i].startswith(" ") or not body[i].strip()):
        i += 1  # frames, source lines and carets are indented
    text = body[i:]
    # JAX appends a note on its filtered frames after the exception; it is not part of it.
    for j in range(len(text) - 1):
        if text[j] == "-" * 20 and text[j + 1].startswith("For simplicity, JAX has removed"):
            text = text[:j]
            break
    return "\n".join(text).strip() or None


def compare_runs(
    script: str,
    args: Sequence[str],
    torch_run: RunResult,
    torchlike_run: RunResult,
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
    ignore: re.Pattern[str] | None = None,
) -> CompareResult:
    """Judge two finished runs: return codes, then stdout line by line, then the exceptions raised."""
    divergence = first_divergence(torch_run.stdout, torchlike_run.stdout, rtol, atol, ignore)
    problems: list[tuple[str, str]] = []  # (status, detail), most telling first
    timed_out = [name for name, run in (("torch", torch_run), ("torchlike", torchlike_run)) if run.timed_out]
    if timed_out:
        problems.append((TIMEOUT, " and ".join(timed_out) + " timed out"))
    if divergence is not None:
        problems.append((DIVERGED, f"stdout differs at line {divergence.line}"))
    if not timed_out and torch_run.returncode != torchlike_run.returncode:
        codes = f"exit code {torch_run.returncode} under torch, {torchlike_run.returncode} under torchlike"
        problems.append((EXIT_CODE, codes))
    elif not timed_out and torch_run.returncode != 0:
        expected, actual = exception_text(torch_run.stderr), exception_text(torchlike_run.stderr)
        if expected is not None and (actual is None or first_divergence(expected, actual, rtol, atol)):
            problems.append((EXCEPTION, f"torch raised {_first(expected)!r}, torchlike raised {_first(actual)!r}"))
    status = problems[0][0] if problems else MATCH
    detail = "; ".join(d for _, d in problems)
    return CompareResult(
        script, list(args), torch_run, torchlike_run, status, divergence, detail, rtol=rtol, atol=atol, ignore=ignore
    )


def _first(text: str | None) -> str | None:
    return text.splitlines()[0] if text else text


_DIRECTIVE = re.compile(r"^#\s*compare:(.*)$")


@dataclass
class Options:
    """How to compare a script; None means "not set here"."""

    rtol: float | None = None
    atol: float | None = None
    timeout: float | None = None
    ignore: re.Pattern[str] | None = None


def script_options(script: str | os.PathLike[str]) -> Options:
    """Options a script asks for in a `# compare: --rtol 1e-2 --ignore '^took'` comment line."""
    options = Options()
    with open(script, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = _DIRECTIVE.match(line.strip())
            if not m:
                continue
            words = shlex.split(m.group(1))
            for name, value in zip(words[::2], words[1::2]):
                field_name = name.removeprefix("--")
                if field_name not in ("rtol", "atol", "timeout", "ignore"):
                    raise ValueError(f"{script}: unknown option {name!r} in its '# compare:' line")
                setattr(options, field_name, re.compile(value) if field_name == "ignore" else float(value))
    return options


def compare_script(
    script: str | os.PathLike[str],
    args: Sequence[str] = (),
    rtol: float | None = None,
    atol: float | None = None,
    timeout: float | None = None,
    ignore: re.Pattern[str] | None = None,
) -> CompareResult:
    """Run `script` as `python script args` and as `python -m torchlike run script args`, and compare.

    Options left None come from the script's `# compare:` line, else the defaults.
    """
    script = os.fspath(script)
    rtol, atol, timeout, ignore = resolve_options(script, rtol, atol, timeout, ignore)
    torch_run = run_command(torch_command(script, args), _env(aliased=False), timeout)
    torchlike_run = run_command(torchlike_command(script, args), _env(aliased=True), timeout)
    return compare_runs(script, args, torch_run, torchlike_run, rtol, atol, ignore)


def resolve_options(
    script: str,
    rtol: float | None,
    atol: float | None,
    timeout: float | None,
    ignore: re.Pattern[str] | None,
) -> tuple[float, float, float, re.Pattern[str] | None]:
    """``(rtol, atol, timeout, ignore)`` for a run of ``script``: the given ones, else its `# compare:`
    line's, else the defaults."""
    own = script_options(script)
    return (
        _first_set(rtol, own.rtol, DEFAULT_RTOL),
        _first_set(atol, own.atol, DEFAULT_ATOL),
        _first_set(timeout, own.timeout, DEFAULT_TIMEOUT),
        ignore if ignore is not None else own.ignore,
    )


def _first_set(*values: float | None) -> float:
    return next(v for v in values if v is not None)


def find_scripts(directory: str | os.PathLike[str]) -> list[Path]:
    """Every `*.py` under `directory` (recursively), sorted; files and folders starting with `_` or `.`
    are helpers, not scripts."""
    root = Path(directory)
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if any(p.startswith(("_", ".")) for p in parts):
            continue
        found.append(path)
    return found
