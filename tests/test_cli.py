"""`python -m torchlike`: --help for each command, --version, env, exit codes, compare's diff and the
tracebacks `run` prints. No real torch: scripts tell the two compare runs apart by what is loaded."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import torchlike
from torchlike._cli import main
from torchlike.compat._compare import RunResult, compare_runs
from torchlike.compat._lines import unified_diff
from torchlike.compat._report import format_result, html_report, markdown_report

REPO = Path(__file__).resolve().parents[1]


def _torchlike(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run(
        [sys.executable, "-m", "torchlike", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "command, words",
    [
        ([], ["run", "compare", "coverage", "env", "exit codes:"]),
        (["run"], ["(script.py | -m module) [args ...]", "run train.py --help", "exit code"]),
        (["compare"], ["--rtol", "--atol", "--timeout", "--ignore", "--context", "--report", "--jobs", "--quiet"]),
        (["coverage"], ["--json", "exit code: 0"]),
        (["env"], ["--json", "bug report"]),
    ],
)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help(command: list[str], words: list[str], flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*command, flag]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"usage: python -m torchlike {' '.join(command)}".rstrip()), out
    assert err == ""
    for word in words:
        assert word in out


def test_compare_help_after_the_script_is_compares(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "missing.py", "--help"]) == 0  # help wins over the missing file
    assert capsys.readouterr().out.startswith("usage: python -m torchlike compare")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"torchlike {torchlike.__version__}\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "a command is needed"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["run"], "a script or -m module is needed"),
        (["run", "-m"], "expected a module name"),
        (["run", "--bogus", "x.py"], "unrecognized option '--bogus'"),
        (["compare"], "a script or a directory is needed"),
        (["compare", "--rtol", "abc", "x.py"], "argument --rtol: invalid float value: 'abc'"),
        (["compare", "--ignore", "(", "x.py"], "argument --ignore"),
        (["compare", "no_such_file.py"], "no such file or directory: no_such_file.py"),
        (["coverage"], "the following arguments are required"),
        (["coverage", "no_such_file.py"], "no such file or directory: no_such_file.py"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: python -m torchlike") and message in err, err


def test_env(capsys: pytest.CaptureFixture[str]) -> None:
    import jax

    assert main(["env"]) == 0
    text = capsys.readouterr().out
    assert f"torchlike: {torchlike.__version__}\n" in text
    assert f"JAX: {jax.__version__}\n" in text and f"JAX backend: {jax.default_backend()}\n" in text
    for key in ("Python", "jaxlib", "NumPy", "JAX devices", "lazy mode", "cache folder"):
        assert re.search(rf"^{key}: \S", text, re.M), key
    for extra in ("Pillow", "tensorboard", "matplotlib", "tqdm"):
        assert re.search(rf"^  {extra}: (\d|not installed)", text, re.M), extra
    assert main(["env", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["JAX devices"] == [str(d) for d in jax.devices()]


def test_env_cache_folder_and_lazy_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from torchlike.compat._env import collect_env

    monkeypatch.setenv("TORCHLIKE_LAZY", "1")
    info = collect_env()
    import jax

    import torchlike.lazy as lazy

    assert info["lazy mode"] == f"{'on' if lazy.enabled() else 'off'} (torchlike.lazy.enabled(); TORCHLIKE_LAZY=1)"
    folder = jax.config.jax_compilation_cache_dir
    assert info["cache folder"].startswith(folder if folder else "off"), info["cache folder"]


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"XDG_CACHE_HOME": "{tmp}/xdg"}, r"{tmp}/xdg/torchlike/jax \(\d+ files, [\d.]+ MB\)"),
        ({"TORCHLIKE_CACHE_DIR": "{tmp}/mine"}, r"{tmp}/mine \(\d+ files, [\d.]+ MB\)"),
        ({"TORCHLIKE_CACHE": "0"}, r"off \(TORCHLIKE_CACHE=0\)"),
    ],
)
def test_env_reports_the_cache_folder_in_use(tmp_path: Path, env: dict, expected: str) -> None:
    # each in its own process: the folder is chosen once, when torchlike is imported
    env = {k: v.format(tmp=tmp_path) for k, v in env.items()}
    base = {
        k: v for k, v in os.environ.items() if k not in ("TORCHLIKE_CACHE", "TORCHLIKE_CACHE_DIR", "XDG_CACHE_HOME")
    }
    proc = subprocess.run(
        [sys.executable, "-m", "torchlike", "env", "--json"],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(expected.format(tmp=re.escape(str(tmp_path))), json.loads(proc.stdout)["cache folder"])


def test_run_passes_help_to_the_script(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import sys, torch\nprint(sys.argv, torch.__name__)\n")
    proc = _torchlike("run", "train.py", "--help", "-m", "x", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "['train.py', '--help', '-m', 'x'] torchlike\n"


def test_run_traceback_hides_the_runner(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(
        textwrap.dedent(
            """\
            import torch

            def load():
                import torch.no_such_module

            try:
                torch.ones(2).no_such_method()
            except AttributeError as e:
                raise RuntimeError("wrapped") from e
            """
        )
    )
    (tmp_path / "bad_import.py").write_text("import torch\nimport torch.no_such_module\n")
    for script in ("bad.py", "bad_import.py"):
        proc = _torchlike("run", script, cwd=tmp_path)
        assert proc.returncode == 1
        frames = re.findall(r'^  File "([^"]+)"', proc.stderr, re.M)
        assert frames and all(f == str(tmp_path / script) for f in frames), proc.stderr
    assert "No module named 'torch.no_such_module'" in proc.stderr


def _run(stdout: str) -> RunResult:
    return RunResult(["python"], 0, stdout, "", 0.1)


def test_compare_shows_a_unified_diff_of_the_first_differences() -> None:
    expected = "".join(f"loss {i} 0.5000\n" for i in range(10)) + "A\nend\n"
    actual = "".join(f"loss {i} 0.50001\n" for i in range(10)) + "B\nend\n"  # numbers within tolerance
    result = compare_runs("s.py", [], _run(expected), _run(actual))
    assert result.diff(context=1) == [
        "--- torch",
        "+++ torchlike",
        "@@ -10,3 +10,3 @@",
        " loss 9 0.5000",
        "-A",
        "+B",
        " end",
    ]
    text = format_result(result, context=1)
    assert "  line 11:\n    torch:     A\n    torchlike: B\n  diff:\n    --- torch\n" in text
    assert "\n    -A\n    +B\n" in text
    report = markdown_report([result], context=1)
    assert "```diff\n--- torch\n+++ torchlike\n@@ -10,3 +10,3 @@\n loss 9 0.5000\n-A\n+B\n end\n```" in report
    assert (
        "<pre class='diff'>--- torch\n+++ torchlike\n@@ -10,3 +10,3 @@\n loss 9 0.5000\n-A\n+B\n end</pre>"
        in html_report([result], context=1)
    )
    assert compare_runs("s.py", [], _run(expected), _run(expected)).diff() == []


def test_unified_diff_limits() -> None:
    many = unified_diff("".join(f"{i}\n" for i in range(200)), "".join(f"x{i}\n" for i in range(200)), max_lines=10)
    assert len(many) == 11 and many[-1] == "... (393 more diff lines)"
    ignore = re.compile("^took")
    assert unified_diff("took 1s\nA\n", "took 2s\nA\n", ignore=ignore) == []
    assert unified_diff("took 1s\nA\n", "took 2s\nB\n", ignore=ignore)[2:] == [
        "@@ -1,2 +1,2 @@",
        " took 1s",
        "-A",
        "+B",
    ]


def test_compare_command_prints_the_diff(tmp_path: Path) -> None:
    (tmp_path / "two.py").write_text(
        'import sys\nlike = "torchlike" in sys.modules\nfor i in range(8):\n    print(i)\nprint("B" if like else "A")\n'
    )
    proc = _torchlike("compare", "two.py", "--context", "1", cwd=tmp_path)
    assert proc.returncode == 1
    assert "  diff:\n    --- torch\n    +++ torchlike\n    @@ -8,2 +8,2 @@\n     7\n    -A\n    +B\n" in proc.stdout


@pytest.mark.parametrize(
    "args, code",
    [(["--help"], 0), (["run", "--help"], 0), (["compare", "--help"], 0), (["coverage", "--help"], 0),
     (["env", "--help"], 0), (["--version"], 0), ([], 2), (["bogus"], 2), (["run"], 2), (["coverage", "no_such.py"], 2)],
)  # fmt: skip
def test_help_and_usage_errors_answer_before_jax_loads(args: list[str], code: int) -> None:
    # -X importtime lists every module the process imported: help must not pay for JAX (~6 s on 2 cores)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "torchlike", *args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == code, proc.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "torchlike" in imported and "jax" not in imported
    assert (proc.stdout if code == 0 else proc.stderr).strip()


def test_the_cli_still_runs_commands_after_the_early_parse(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text("import torch\nprint(torch.ones(2).sum().item())\n")
    proc = subprocess.run(
        [sys.executable, "-m", "torchlike", "run", "s.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert (proc.returncode, proc.stdout) == (0, "2.0\n"), proc.stderr
