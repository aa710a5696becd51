"""`python -m torchlike run | compare | coverage | env` (and `--version`)."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NoReturn

PROG = "python -m torchlike"

EXIT_CODES = """\
exit codes:
  run       the script's own exit code (1 for an uncaught exception, as python); 2 when the
            script or module cannot be found or the command line is wrong
  compare   0 when every script matches torch, 1 when any differs (with --trace, also when an op's
            values differ beyond tolerance), 2 for a usage error
  coverage  0 (it is a report, even when names are missing), 2 for a usage error
  env       0"""

_DESCRIPTION = """\
PyTorch's Python API on JAX. These commands run torch scripts on torchlike and check them
against real torch. `python -m torchlike COMMAND --help` explains each one."""

_RUN_USAGE = f"{PROG} run [-h] (script.py | -m module) [args ...]"
_RUN_DESCRIPTION = """\
Run an unmodified torch script with `import torch` (and `torch.*`, `torchvision.transforms`)
resolved to torchlike, as `python script.py args...` would run it.

As with python itself, everything after the script (or the module) belongs to the script:
`run train.py --help` shows train.py's help; only `run --help` shows this one."""

_COMPARE_DESCRIPTION = """\
Run a script twice, as `python script.py args...` (real torch) and as
`python -m torchlike run script.py args...`, and compare their stdout line by line: numbers
within a tolerance, text exactly. On a difference it prints the first differing line and a
unified diff (--- torch, +++ torchlike) around the first differences.

With --trace, both runs also log the values of each op the script calls (torch.*, Tensor methods,
F.*, module calls, optimizer steps) and the report names the first op whose outputs differ beyond
their dtype's rounding, with the line that called it (see docs/compat_tools.md).

compare's options are recognised before or after the script; put script arguments that look
like them (including -h/--help) after `--`. Everything else after the script goes to it."""

_COVERAGE_DESCRIPTION = """\
Read scripts (never run them), list every torch.* name they use, and say whether torchlike
provides each one. Missing names come first, then a summary line."""

_ENV_DESCRIPTION = """\
Print what a bug report needs: torchlike, JAX, jaxlib, NumPy and Python versions, JAX's backend
and devices, lazy mode, the compile cache folder and which optional extras are installed."""


class _ParserExit(Exception):
    """argparse asked to exit (after --help, or a usage error): carries the exit code. Unlike
    SystemExit it cannot be confused with the script's own `sys.exit` under `run`."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise _ParserExit(status)


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=30)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser and one parser per command (`run`'s is used for its help text only)."""
    parser = _Parser(prog=PROG, description=_DESCRIPTION, epilog=EXIT_CODES, formatter_class=_formatter)
    parser.add_argument("--version", action="store_true", help="print torchlike's version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    run = commands.add_parser(
        "run",
        help="run an unmodified torch script on torchlike",
        usage=_RUN_USAGE,
        description=_RUN_DESCRIPTION,
        epilog="exit code: the script's own; 2 when it cannot be found or the command line is wrong",
        formatter_class=_formatter,
    )
    run.add_argument("script", nargs="?", help="the script (a .py file, or a directory or zip with __main__.py)")
    run.add_argument("-m", metavar="module", dest="module", help="run a module, as `python -m module`")
    run.add_argument("args", nargs="*", help="the script's own arguments, passed unchanged")

    compare = commands.add_parser(
        "compare",
        help="run a script under torch and under torchlike and compare their stdout",
        usage=f"{PROG} compare [options] (script.py | directory) [args ...] [-- args ...]",
        description=_COMPARE_DESCRIPTION,
        epilog="exit code: 0 when every script matches torch, 1 when any differs, 2 for a usage error",
        formatter_class=_formatter,
    )
    compare.add_argument("target", metavar="script.py|directory", help="a script, or a folder of *.py scripts")
    compare.add_argument("args", nargs="*", help="the script's own arguments")
    compare.add_argument("--rtol", type=float, metavar="R", help="relative tolerance for numbers (default 1e-4)")
    compare.add_argument("--atol", type=float, metavar="A", help="absolute tolerance for numbers (default 1e-5)")
    compare.add_argument("--timeout", type=float, metavar="S", help="seconds allowed for each run (default 600)")
    compare.add_argument("--ignore", metavar="REGEX", help="drop stdout lines matching REGEX from both sides")
    compare.add_argument(
        "--context", type=int, metavar="N", default=3, help="lines of context around differences (default 3)"
    )
    compare.add_argument(
        "--report", metavar="FILE", help="also write a report: FILE.html (side by side) or FILE.md, diffs included"
    )
    compare.add_argument(
        "-j", "--jobs", type=int, metavar="N", default=1, help="compare N scripts at a time (for a directory)"
    )
    compare.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary")
    compare.add_argument(
        "--trace", action="store_true", help="log every op's values in both runs and name the first op that differs"
    )
    compare.add_argument(
        "--max-ops", type=int, metavar="N", help="with --trace: log at most N ops in each run (default 20000)"
    )
    compare.add_argument(
        "--ulps",
        type=float,
        metavar="U",
        help="with --trace: float tolerance in units of the dtype's epsilon (default 16)",
    )

    coverage = commands.add_parser(
        "coverage",
        help="list the torch.* names scripts use and whether torchlike provides them",
        description=_COVERAGE_DESCRIPTION,
        epilog="exit code: 0 (a report, even when names are missing); 2 when a path does not exist",
        formatter_class=_formatter,
    )
    coverage.add_argument("paths", nargs="+", metavar="script.py|directory", help="scripts or folders to read")
    coverage.add_argument("--json", action="store_true", help="print JSON instead of a table")

    env = commands.add_parser(
        "env",
        help="print versions, devices and settings for a bug report",
        description=_ENV_DESCRIPTION,
        epilog="exit code: 0",
        formatter_class=_formatter,
    )
    env.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser, {"run": run, "compare": compare, "coverage": coverage, "env": env}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    code = _dispatch(argv, execute=True)
    assert code is not None
    return code


def answer_early() -> None:
    """Answer `--help`, `--version` and usage errors before JAX is imported (~0.1 s instead of ~7 s).

    ``torchlike/__init__.py`` calls this first when the process is ``python -m torchlike ...`` or the
    ``torchlike`` script; a command that does real work returns here and the import goes on.
    """
    code = _dispatch(list(sys.argv[1:]), execute=False)
    if code is not None:
        sys.stdout.flush()
        raise SystemExit(code)


def _dispatch(argv: list[str], execute: bool) -> int | None:
    """Parse ``argv`` and run its command; with ``execute=False``, stop (returning None) where a
    command would start real work, so only what argparse answers alone comes back."""
    parser, commands = build_parser()
    try:
        if argv and argv[0] == "run":  # its arguments go to the script: never let argparse read them
            return _run(commands["run"], argv[1:], execute)
        if argv and argv[0] == "compare":
            return _compare(commands["compare"], argv[1:], execute)
        args = parser.parse_args(argv)
        if args.version:
            print(f"torchlike {_version()}")
            return 0
        if args.command == "coverage":
            return _coverage(commands["coverage"], args, execute)
        if args.command == "env":
            if not execute:
                return None
            from torchlike.compat._env import collect_env, format_env

            info = collect_env()
            print(json.dumps(info, indent=2) if args.json else format_env(info))
            return 0
        parser.print_usage(sys.stderr)
        print(f"{PROG}: error: a command is needed (run, compare, coverage or env)", file=sys.stderr)
        return 2
    except _ParserExit as e:  # --help: 0; a usage error: 2
        return e.code
    except BrokenPipeError:  # `... | head`: stop quietly, as `head` asked
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _version() -> str:
    """torchlike's version, read from version.py's text: importing it would load JAX (torch.version.cuda)."""
    text = (Path(__file__).parent / "version.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    return match.group(1) if match else "unknown"


def _run(parser: argparse.ArgumentParser, args: list[str], execute: bool = True) -> int | None:
    if not args:
        parser.error("a script or -m module is needed")
    first = args[0]
    if first in ("-h", "--help"):
        parser.print_help()
        return 0
    if first == "-m" and len(args) < 2:
        parser.error("argument -m: expected a module name")
    if first == "--" and len(args) < 2:
        parser.error("a script is needed after --")
    if first.startswith("-") and first not in ("-", "--") and not first.startswith("-m"):
        parser.error(f"unrecognized option {first!r} (options of the script go after the script)")
    if not execute:
        return None
    from torchlike.compat._run import run_module, run_script

    if first.startswith("-m"):  # `-m module`, or `-mmodule` as python accepts
        return run_module(args[1], args[2:]) if first == "-m" else run_module(first[2:], args[1:])
    if first == "--":
        return run_script(args[1], args[2:])
    return run_script(first, args[1:])


# compare's own options: (name, takes a value); recognised anywhere before `--`.
_COMPARE_OPTIONS = {
    "--rtol": True,
    "--atol": True,
    "--timeout": True,
    "--ignore": True,
    "--context": True,
    "--report": True,
    "-j": True,
    "--jobs": True,
    "-q": False,
    "--quiet": False,
    "--trace": False,
    "--max-ops": True,
    "--ulps": True,
    "-h": False,
    "--help": False,
}


def _parse_compare(args: list[str]) -> tuple[dict[str, str], str | None, list[str]]:
    """Split compare's options from the target and the script's own arguments.

    Options are recognised anywhere before `--` (`compare train.py --epochs 1 --rtol 1e-3`); the
    first other word is the target, the rest go to the script.
    """
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
        if arg in _COMPARE_OPTIONS and not _COMPARE_OPTIONS[arg]:
            options[{"-q": "--quiet", "-h": "--help"}.get(arg, arg)] = "1"
        elif _COMPARE_OPTIONS.get(name):
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


def _compare(parser: argparse.ArgumentParser, argv: list[str], execute: bool = True) -> int | None:
    try:
        options, target, script_args = _parse_compare(argv)
    except ValueError as e:
        parser.error(str(e))
    if "--help" in options:
        parser.print_help()
        return 0
    if target is None:
        parser.error("a script or a directory is needed")
    switches = ("--quiet", "--trace")
    flags = [f"{k}={v}" for k, v in options.items() if k not in switches] + [k for k in switches if k in options]
    # argparse checks the values (types, a missing target) and words the errors
    args = parser.parse_args([*flags, target])
    try:
        ignore = re.compile(args.ignore) if args.ignore is not None else None
    except re.error as e:
        parser.error(f"argument --ignore: {e}")
    if not os.path.exists(target):
        parser.error(f"no such file or directory: {target}")
    if not execute:
        return None
    from torchlike.compat._compare import CompareResult, compare_script, find_scripts, script_options
    from torchlike.compat._report import format_result, format_summary, write_report

    if os.path.isdir(target):
        scripts = find_scripts(target)
        if not scripts:
            parser.error(f"no *.py scripts under {target}")
    elif os.path.isfile(target):
        scripts = [Path(target)]
    else:
        parser.error(f"no such file or directory: {target}")

    for script in scripts:  # a bad '# compare:' line is a usage error, found before anything runs
        try:
            script_options(script)
        except (OSError, ValueError, re.error) as e:
            parser.error(str(e))

    context = max(0, args.context)
    if args.trace:
        return _trace(scripts, script_args, args, ignore, context)
    if args.max_ops is not None or args.ulps is not None:
        parser.error("--max-ops and --ulps go with --trace")

    def one(script: Path) -> CompareResult:
        result = compare_script(script, script_args, args.rtol, args.atol, args.timeout, ignore)
        if os.path.isdir(target):
            parts = script.relative_to(target).parts
            result.area = parts[0] if len(parts) > 1 else "-"
        if not (args.quiet and result.ok):
            print(format_result(result, context=context), flush=True)
        return result

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(one, scripts))
    if len(results) > 1:
        print(format_summary(results))
    if args.report:
        write_report(args.report, results, context=context)
        print(f"report written to {args.report}")
    return 0 if all(r.ok for r in results) else 1


def _trace(
    scripts: list[Path], script_args: list[str], args: argparse.Namespace, ignore: re.Pattern[str] | None, context: int
) -> int:
    """compare --trace: each script's stdout compared as compare does, then the first op whose values differ."""
    from torchlike.compat._trace import format_trace, trace_script
    from torchlike.compat._tracelog import DEFAULT_MAX_OPS, DEFAULT_ULPS

    ok = True
    for script in scripts:
        result = trace_script(
            script,
            script_args,
            max_ops=args.max_ops if args.max_ops is not None else DEFAULT_MAX_OPS,
            ulps=args.ulps if args.ulps is not None else DEFAULT_ULPS,
            timeout=args.timeout,
            rtol=args.rtol,
            atol=args.atol,
            ignore=ignore,
        )
        ok = ok and result.ok
        print(format_trace(result, context=context), flush=True)
    return 0 if ok else 1


def _coverage(parser: argparse.ArgumentParser, args: argparse.Namespace, execute: bool = True) -> int | None:
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        parser.error(f"no such file or directory: {', '.join(missing)}")
    if not execute:
        return None
    from torchlike.compat._coverage import coverage_json, format_coverage, scan

    names, errors = scan(args.paths)
    if args.json:
        print(json.dumps(coverage_json(names, errors), indent=2))
    else:
        print(format_coverage(names, errors))
    return 0
