"""`python -m torchlike run | compare | coverage`."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

USAGE = """\
usage: python -m torchlike run script.py [args...]
       python -m torchlike run -m module [args...]
       python -m torchlike compare [options] script.py|dir [args...] [options] [-- args...]
       python -m torchlike coverage [--json] script.py|dir [...]

run       run an unmodified torch script with `import torch` resolved to torchlike
compare   run a script under real torch and under torchlike and compare their stdout
coverage  list the torch.* names scripts use and whether torchlike provides them

compare options (recognised before or after the script; put script arguments that clash with
them after `--`):
  --rtol R          relative tolerance for numbers (default 1e-4)
  --atol A          absolute tolerance for numbers (default 1e-5)
  --timeout S       seconds allowed for each run (default 600)
  --ignore REGEX    drop stdout lines matching REGEX from both sides (e.g. timings)
  --report FILE     write a report: FILE.html (side by side) or FILE.md
  -j N, --jobs N    compare N scripts at a time (for a directory; times are then less exact)
  -q, --quiet       print only failures and the summary
"""

_VALUE_OPTIONS = {"--rtol", "--atol", "--timeout", "--ignore", "--report", "-j", "--jobs"}
_FLAG_OPTIONS = {"-q", "--quiet"}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "run":
        return _run(rest)
    if command in ("compare", "coverage"):
        try:
            return _compare(rest) if command == "compare" else _coverage(rest)
        except BrokenPipeError:  # `... | head`: stop quietly, as `head` asked
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
    print(f"torchlike: unknown command {command!r}\n\n{USAGE}", end="", file=sys.stderr)
    return 2


def _usage_error(message: str) -> int:
    print(f"torchlike: {message}\n\n{USAGE}", end="", file=sys.stderr)
    return 2


def _run(args: list[str]) -> int:
    from torchlike.compat._run import run_module, run_script

    if not args:
        return _usage_error("run needs a script")
    if args[0] == "-m":
        if len(args) < 2:
            return _usage_error("run -m needs a module name")
        return run_module(args[1], args[2:])
    return run_script(args[0], args[1:])


def _parse_compare(args: list[str]) -> tuple[dict[str, str], str | None, list[str]]:
    """Split compare's options from the target and the script's own arguments."""
    options: dict[str, str] = {}
    target: str | None = None
    script_args: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if arg == "--":
            script_args += args[i + 1 :]
            break
        if arg in _FLAG_OPTIONS:
            options["--quiet"] = "1"
        elif name in _VALUE_OPTIONS:
            if not eq:
                if i + 1 >= len(args):
                    raise ValueError(f"{arg} needs a value")
                i += 1
                value = args[i]
            options["--jobs" if name == "-j" else name] = value
        elif target is None:
            target = arg
        else:
            script_args.append(arg)
        i += 1
    return options, target, script_args


def _compare(args: list[str]) -> int:
    from torchlike.compat._compare import CompareResult, compare_script, find_scripts, script_options
    from torchlike.compat._report import format_result, format_summary, write_report

    try:
        options, target, script_args = _parse_compare(args)
        rtol = float(options["--rtol"]) if "--rtol" in options else None
        atol = float(options["--atol"]) if "--atol" in options else None
        timeout = float(options["--timeout"]) if "--timeout" in options else None
        jobs = max(1, int(options.get("--jobs", 1)))
        ignore = re.compile(options["--ignore"]) if "--ignore" in options else None
    except (ValueError, re.error) as e:
        return _usage_error(f"compare: {e}")
    if target is None:
        return _usage_error("compare needs a script or a directory")
    quiet = "--quiet" in options
    if os.path.isdir(target):
        scripts = find_scripts(target)
        if not scripts:
            return _usage_error(f"compare: no *.py scripts under {target}")
    elif os.path.isfile(target):
        scripts = [Path(target)]
    else:
        return _usage_error(f"compare: no such file or directory: {target}")

    for script in scripts:  # a bad '# compare:' line is a usage error, found before anything runs
        try:
            script_options(script)
        except (OSError, ValueError, re.error) as e:
            return _usage_error(f"compare: {e}")

    def one(script: Path) -> CompareResult:
        result = compare_script(script, script_args, rtol, atol, timeout, ignore)
        if os.path.isdir(target):
            parts = script.relative_to(target).parts
            result.area = parts[0] if len(parts) > 1 else "-"
        if not (quiet and result.ok):
            print(format_result(result), flush=True)
        return result

    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(one, scripts))
    if len(results) > 1:
        print(format_summary(results))
    if "--report" in options:
        write_report(options["--report"], results)
        print(f"report written to {options['--report']}")
    return 0 if all(r.ok for r in results) else 1


def _coverage(args: list[str]) -> int:
    from torchlike.compat._coverage import coverage_json, format_coverage, scan

    as_json = "--json" in args
    paths = [a for a in args if a != "--json"]
    if not paths:
        return _usage_error("coverage needs a script or a directory")
    names, errors = scan(paths)
    if as_json:
        print(json.dumps(coverage_json(names, errors), indent=2))
    else:
        print(format_coverage(names, errors))
    return 0
