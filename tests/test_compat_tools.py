"""The compat tools: the `torch` import alias, `python -m torchlike run|compare|coverage`.

No real torch here: scripts either don't import torch, or use only what torchlike has (its compat
package), and "diverging" scripts tell the two runs apart by whether torchlike is loaded.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from torchlike import compat
from torchlike.compat import first_divergence, lines_match, missing_attribute_error
from torchlike._cli import _parse_compare, main
from torchlike.compat._compare import (
    DIVERGED,
    EXCEPTION,
    EXIT_CODE,
    MATCH,
    TIMEOUT,
    RunResult,
    compare_runs,
    compare_script,
    exception_text,
    script_options,
)
from torchlike.compat._coverage import lookup, tensor_method_names, torch_names

pytestmark = pytest.mark.slow  # runs scripts in subprocesses

REPO = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _script(tmp_path: Path, source: str, name: str = "script.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def _torchlike(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torchlike", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_env(),
        timeout=120,
        check=False,
    )


# ---- the import alias, in process ----


@pytest.fixture
def alias():
    saved = {n: m for n, m in sys.modules.items() if n == "torch" or n.startswith("torch.")}
    compat.install()
    yield
    compat.uninstall()
    assert {n: m for n, m in sys.modules.items() if n == "torch" or n.startswith("torch.")} == saved


def test_alias_resolves_torch_names_to_torchlike_modules(alias: None) -> None:
    import torchlike

    assert sys.modules["torch"] is torchlike
    import torch.compat._lines as lines  # any torchlike submodule serves: compat is always there

    assert lines is importlib.import_module("torchlike.compat._lines")
    assert sys.modules["torch.compat._lines"] is lines
    from torch import compat as c
    from torch.compat import install

    assert c is compat and install is compat.install
    assert compat.is_installed()


def test_alias_reports_missing_submodule_with_torch_name(alias: None) -> None:
    with pytest.raises(ModuleNotFoundError) as info:
        importlib.import_module("torch.no_such_module")
    assert str(info.value) == (
        "No module named 'torch.no_such_module' (torchlike does not provide torch.no_such_module yet)"
    )
    assert info.value.name == "torch.no_such_module"


def test_alias_sets_aside_and_restores_an_already_imported_torch() -> None:
    fake = types.ModuleType("torch")
    saved = sys.modules.get("torch")
    sys.modules["torch"] = fake
    try:
        compat.install()
        import torch

        assert torch is importlib.import_module("torchlike")
        compat.install()  # twice is harmless
        compat.uninstall()
        assert sys.modules["torch"] is fake
        assert not compat.is_installed()
    finally:
        compat.uninstall()
        if saved is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = saved


def test_missing_attribute_error_uses_torch_path() -> None:
    e = missing_attribute_error("torchlike", "foo")
    assert isinstance(e, AttributeError) and e.name == "foo"
    assert str(e) == "module 'torch' has no attribute 'foo' (torchlike does not provide torch.foo yet)"
    e = missing_attribute_error("torchlike.nn.functional", "bar")
    assert str(e) == (
        "module 'torch.nn.functional' has no attribute 'bar' (torchlike does not provide torch.nn.functional.bar yet)"
    )


# ---- python -m torchlike run ----


def test_run_passes_argv_name_file_and_path(tmp_path: Path) -> None:
    _script(
        tmp_path,
        """
        import os, sys
        import torch
        print(sys.argv)
        print(__name__, __file__ == os.path.abspath(sys.argv[0]), sys.path[0] == os.path.dirname(__file__))
        print(torch.__name__, sys.modules["torch"] is sys.modules["torchlike"])
        if __name__ == "__main__":
            print("main block")
        """,
    )
    proc = _torchlike("run", "script.py", "a", "--flag", "-x", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "['script.py', 'a', '--flag', '-x']",
        "__main__ True True",
        "torchlike True",
        "main block",
    ]


@pytest.mark.parametrize(
    ("body", "code", "stderr"),
    [
        ("sys.exit(3)", 3, ""),
        ("sys.exit('bad input')", 1, "bad input\n"),
        ("sys.exit()", 0, ""),
        ("pass", 0, ""),
    ],
)
def test_run_exit_codes(tmp_path: Path, body: str, code: int, stderr: str) -> None:
    _script(tmp_path, f"import sys\n{body}\n")
    proc = _torchlike("run", "script.py", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (code, stderr)


def test_run_uncaught_exception_shows_script_traceback(tmp_path: Path) -> None:
    _script(tmp_path, "print('before')\ndef f():\n    raise ValueError('boom')\nf()\n")
    proc = _torchlike("run", "script.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == "before\n"
    lines = proc.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1] == f'  File "{tmp_path / "script.py"}", line 4, in <module>'  # no runner frames
    assert lines[-1] == "ValueError: boom"
    assert "runpy" not in proc.stderr and "compat" not in proc.stderr


def test_run_missing_torch_module_names_it(tmp_path: Path) -> None:
    _script(tmp_path, "import torch.no_such_module\n")
    proc = _torchlike("run", "script.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "ModuleNotFoundError: No module named 'torch.no_such_module' "
        "(torchlike does not provide torch.no_such_module yet)"
    )


def test_run_module_and_spawned_children_see_the_alias(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    _script(
        tmp_path / "pkg",
        """
        import multiprocessing as mp
        import sys

        def child(q):
            import torch
            q.put(torch.__name__)

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            print(sys.argv[1:], q.get())
            p.join()
            sys.exit(5)
        """,
        name="job.py",
    )
    proc = _torchlike("run", "-m", "pkg.job", "x", cwd=tmp_path)
    assert proc.returncode == 5, proc.stderr
    assert proc.stdout == "['x'] torchlike\n"
    assert _torchlike("run", "-m", "no_such_mod", cwd=tmp_path).returncode == 1


def test_run_usage_errors(tmp_path: Path) -> None:
    assert _torchlike("run", cwd=tmp_path).returncode == 2
    assert _torchlike("run", "missing.py", cwd=tmp_path).returncode == 2
    assert _torchlike("frobnicate", cwd=tmp_path).returncode == 2


# ---- the line comparator ----


def test_numbers_equal_within_tolerance() -> None:
    assert lines_match("loss 0.5000001", "loss 0.5", rtol=1e-4, atol=1e-5)
    assert lines_match("tensor([1.0000e-08, 2.5000e+03])", "tensor([1.0000e-08, 2.5001e+03])")
    assert lines_match("tensor([ 0.1234, -1.0000])", "tensor([0.1235, -1.0000])")  # rounding boundary
    assert lines_match("tensor([nan, inf, -inf])", "tensor([nan, inf, -inf])")
    assert lines_match("tensor([1.+2.j])", "tensor([1.+2.j])")
    assert lines_match("tensor(27., grad_fn=<MeanBackward0>)", "tensor(27.0000, grad_fn=<MeanBackward0>)")


def test_divergent_numbers_and_text() -> None:
    assert not lines_match("tensor([0.1234])", "tensor([0.1237])")
    assert not lines_match("0.3", "0.35")  # a short repr is exact, not rounded
    assert not lines_match("1000000", "1000001")  # integers compare exactly
    assert not lines_match("3", "3.0")
    assert not lines_match("tensor([nan])", "tensor([0.])")
    assert not lines_match("tensor([inf])", "tensor([-inf])")
    assert not lines_match("dtype=torch.float32", "dtype=torch.float64")  # digits inside names are text
    assert not lines_match("grad_fn=<AddBackward0>", "grad_fn=<AddBackward1>")
    assert not lines_match("tensor([1.+2.j])", "tensor([1.+2.])")
    assert not lines_match("version 2.13.0", "version 2.13.1")
    assert lines_match("loss 1.0", "loss 1.00001", rtol=1e-4)
    assert not lines_match("loss 1.0", "loss 1.01", rtol=1e-4)
    assert lines_match("loss 1.0", "loss 1.01", rtol=0.1)


def test_addresses_and_padding_are_normalised() -> None:
    assert lines_match("<AddBackward0 object at 0x7f67610c4160>", "<AddBackward0 object at 0x55d1c0ffee00>")
    assert not lines_match("<AddBackward0 object at 0x7f67610c4160>", "<MulBackward0 object at 0x7f67610c4160>")
    # torch pads columns to the widest value: a sign change re-pads the whole row
    assert lines_match("tensor([[ 0.0000,  1.5000],", "tensor([[-0.0000, 1.5000],")
    assert lines_match("        [ 2.0000,  3.0000]])", "        [2.0000, 3.0000]])")
    assert not lines_match("a b", "ab")


def test_first_divergence_reports_line_and_both_sides() -> None:
    assert first_divergence("a\n1.0\nc\n", "a\n1.000001\nc\n\n") is None
    d = first_divergence("a\nb\nc\nd\n", "a\nb\nX\nd\n")
    assert (d.line, d.expected, d.actual) == (3, "c", "X")
    d = first_divergence("a\nb\nc", "a\nb")
    assert (d.line, d.expected, d.actual) == (3, "c", None)
    d = first_divergence("a", "a\nextra")
    assert (d.line, d.expected, d.actual) == (2, None, "extra")
    assert first_divergence("x\ntook 1.2s\ny", "x\ntook 9.9s\ny", ignore=re.compile(r"^took")) is None


def test_compare_runs_statuses() -> None:
    def run(out: str, code: int | None = 0, err: str = "") -> RunResult:
        return RunResult(["x"], code, out, err, 0.1)

    assert compare_runs("s.py", [], run("1\n"), run("1\n")).status == MATCH
    r = compare_runs("s.py", [], run("1\n2\n"), run("1\n3\n"))
    assert r.status == DIVERGED and r.divergence.line == 2 and "line 2" in r.detail
    r = compare_runs("s.py", [], run("1\n", 0), run("1\n", 1))
    assert r.status == EXIT_CODE and r.detail == "exit code 0 under torch, 1 under torchlike"
    tb = 'Traceback (most recent call last):\n  File "s.py", line 1, in <module>\n    x\n{}\n'
    r = compare_runs("s.py", [], run("", 1, tb.format("ValueError: a")), run("", 1, tb.format("TypeError: a")))
    assert r.status == EXCEPTION
    same = compare_runs("s.py", [], run("", 1, tb.format("ValueError: a")), run("", 1, tb.format("ValueError: a")))
    assert same.ok
    assert compare_runs("s.py", [], run("1\n"), run("", None)).status == TIMEOUT


def test_exception_text() -> None:
    err = 'warn\nTraceback (most recent call last):\n  File "a.py", line 1\n    x()\n    ^^^\nKeyError: 1\n'
    assert exception_text(err) == "KeyError: 1"
    assert exception_text("just a warning\n") is None


# ---- python -m torchlike compare ----

_DIVERGING = """
import sys
print("same line")
print("tensor([0.5000, 1.2500])")
print("B" if "torchlike" in sys.modules else "A")
print("after")
"""


def test_compare_reports_divergence_at_the_right_line(tmp_path: Path) -> None:
    _script(tmp_path, _DIVERGING)
    proc = _torchlike("compare", "script.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert "DIVERGED: script.py" in proc.stdout
    assert "line 3:\n    torch:     A\n    torchlike: B" in proc.stdout
    assert "rc=0" in proc.stdout and "s\n" in proc.stdout  # exit codes and wall times


def test_compare_match_with_tolerance_args_and_report(tmp_path: Path) -> None:
    _script(
        tmp_path,
        """
        import sys
        print(sys.argv[1:])
        print(1.0 if "torchlike" in sys.modules else 1.001)
        sys.exit(2)
        """,
        name="close.py",
    )
    proc = _torchlike("compare", "close.py", "--epochs", "3", "--rtol", "1e-2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("MATCH: close.py --epochs 3")
    assert _torchlike("compare", "close.py", "--", "--rtol", "1e-2", cwd=tmp_path).returncode == 1

    (tmp_path / "suite" / "area").mkdir(parents=True)
    _script(tmp_path / "suite" / "area", _DIVERGING, name="bad.py")
    _script(tmp_path / "suite", "print(1)\n", name="good.py")
    _script(tmp_path / "suite", "raise SystemExit('helpers are skipped')\n", name="_helper.py")
    for report in ("report.md", "report.html"):
        proc = _torchlike("compare", "suite", "--report", report, "-q", cwd=tmp_path)
        assert proc.returncode == 1
        assert "1 of 2 scripts match torch, 1 diverged" in proc.stdout
        assert "good.py" not in proc.stdout  # -q: only failures
    md = (tmp_path / "report.md").read_text()
    assert "| area | 0 | 1 |" in md and "| - | 1 | 1 |" in md
    assert "| `suite/area/bad.py` | **diverged** | line 3 | `A` | `B` |" in md
    html = (tmp_path / "report.html").read_text()
    assert "area/bad.py" in html and '<span class="bad">   3  A</span>' in html


def test_script_directive_sets_tolerances(tmp_path: Path) -> None:
    body = 'import sys\nprint(1.0 if "torchlike" in sys.modules else 1.001)\nprint("took", 1.5 if "torchlike" in sys.modules else 2)\n'
    _script(tmp_path, "# compare: --rtol 1e-2 --ignore '^took'\n" + body, name="own.py")
    options = script_options(tmp_path / "own.py")
    assert options.rtol == 1e-2 and options.atol is None and options.ignore.pattern == "^took"
    assert compare_script(tmp_path / "own.py").ok
    assert not compare_script(tmp_path / "own.py", rtol=1e-5).ok  # an explicit option wins
    _script(tmp_path, "# compare: --bogus 1\n", name="bad.py")
    assert _torchlike("compare", "bad.py", cwd=tmp_path).returncode == 2


def test_parse_compare_options() -> None:
    assert _parse_compare(["s.py", "a", "--rtol", "0.1", "--atol=2", "-j", "2", "--", "--rtol", "x"]) == (
        {"--rtol": "0.1", "--atol": "2", "--jobs": "2"},
        "s.py",
        ["a", "--rtol", "x"],
    )
    assert _parse_compare(["--timeout", "5", "-q", "dir"]) == ({"--timeout": "5", "--quiet": "1"}, "dir", [])
    with pytest.raises(ValueError, match="--report needs a value"):
        _parse_compare(["s.py", "--report"])


# ---- python -m torchlike coverage ----

_SAMPLE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader as DL
import numpy as np

class Net(nn.Module):
    def forward(self, x):
        return F.relu(torch.nn.functional.gelu(x)).sum()

x = torch.tensor([1.0]).sum()
opt = optim.SGD([x], lr=0.1)
torch.backends.cudnn.deterministic = True
print(np.zeros(3).shape, x.shape, DL, torch.compat.install)
"""


def test_coverage_resolves_import_aliases() -> None:
    assert torch_names(_SAMPLE) == [
        ("torch", 2),
        ("torch.nn", 3),
        ("torch.nn.functional", 4),
        ("torch.optim", 5),
        ("torch.utils.data.DataLoader", 6),
        ("torch.nn.Module", 9),
        ("torch.nn.functional.relu", 11),
        ("torch.nn.functional.gelu", 11),
        ("torch.tensor", 13),
        ("torch.optim.SGD", 14),
        ("torch.backends.cudnn.deterministic", 15),
        ("torch.compat.install", 16),
    ]


def test_coverage_lookup() -> None:
    assert lookup("torch") == (True, "")
    assert lookup("torch.compat.install") == (True, "")
    assert lookup("torch.compat._lines.first_divergence") == (True, "")  # imports the submodule
    assert lookup("torch.no_such_name_xyz") == (False, "")
    assert lookup("torch.compat.install.no_such_attr") == (False, "")


def test_coverage_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _script(tmp_path, _SAMPLE, name="sample.py")
    assert main(["coverage", "--json", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    names = report["names"]
    assert names["torch.compat.install"] == {
        "provided": True,
        "uses": [{"file": str(tmp_path / "sample.py"), "line": 16}],
        "error": "",
    }
    assert names["torch.Tensor.sum"]["provided"] is True  # `.sum()` calls: a torch.Tensor method name
    assert report["summary"]["total"] == 13
    assert report["summary"]["provided"] + report["summary"]["missing"] + report["summary"]["unknown"] == 13
    assert main(["coverage", str(tmp_path / "sample.py")]) == 0
    text = capsys.readouterr().out
    assert "torch.compat.install" in text and text.rstrip().splitlines()[-1].startswith("13 torch names used: ")


def test_coverage_tensor_methods() -> None:
    src = "import torch\nx = torch.ones(3)\nx.exp().no_such_tensor_method()\nnames = []\nnames.index(3)\n"
    src += "torch.add(x, x).sum_to_size(1)\nx.clamp_(0, 1)\n"
    assert tensor_method_names(src) == [
        ("torch.Tensor.exp", 3), ("torch.Tensor.sum_to_size", 6), ("torch.Tensor.clamp_", 7)
    ]  # fmt: skip
    assert lookup("torch.Tensor.exp") == (True, "")
    assert lookup("torch.Tensor.no_such_tensor_method") == (False, "")
