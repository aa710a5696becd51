"""Show comparison results: on the terminal, and as a Markdown or HTML report for many scripts."""

from __future__ import annotations

import html
import time
from collections import Counter
from collections.abc import Sequence

from torchlike.compat._compare import MATCH, CompareResult, RunResult

_STDERR_TAIL = 25


def _tail(text: str, n: int = _STDERR_TAIL) -> list[str]:
    lines = text.rstrip().splitlines()
    return lines[-n:]


def _run_summary(run: RunResult) -> str:
    code = "timeout" if run.timed_out else f"rc={run.returncode}"
    return f"{code}, {run.seconds:.2f}s"


def format_result(result: CompareResult, show_stderr: bool = True, context: int = 3) -> str:
    """A terminal report for one comparison: status, times, the first divergence and a unified diff
    around it (`context` lines either side), stderr on failure."""
    name = " ".join([result.script, *result.args])
    out = [f"{result.status.upper()}: {name}"]
    out.append(f"  torch     {_run_summary(result.torch)}")
    out.append(f"  torchlike {_run_summary(result.torchlike)}")
    if result.ok:
        out.append(f"  {len(result.torch.stdout.splitlines())} lines of stdout agree")
        return "\n".join(out)
    out.append(f"  {result.detail}")
    d = result.divergence
    if d is not None:
        out.append(f"  line {d.line}:")
        out.append(f"    torch:     {d.expected if d.expected is not None else '<no line>'}")
        out.append(f"    torchlike: {d.actual if d.actual is not None else '<no line>'}")
        diff = result.diff(context)
        if diff:
            out.append("  diff:")
            out.extend("    " + line for line in diff)
    if show_stderr:
        for label, run in (("torch", result.torch), ("torchlike", result.torchlike)):
            if run.stderr.strip():
                out.append(f"  --- {label} stderr (last {_STDERR_TAIL} lines) ---")
                out.extend("  " + line for line in _tail(run.stderr))
    return "\n".join(out)


def format_summary(results: Sequence[CompareResult]) -> str:
    counts = Counter(r.status for r in results)
    parts = [f"{counts[MATCH]} of {len(results)} scripts match torch"]
    parts += [f"{n} {status}" for status, n in sorted(counts.items()) if status != MATCH]
    return ", ".join(parts)


def _area_rows(results: Sequence[CompareResult]) -> list[tuple[str, int, int]]:
    areas: dict[str, list[bool]] = {}
    for r in results:
        areas.setdefault(r.area or "-", []).append(r.ok)
    return [(area, sum(oks), len(oks)) for area, oks in sorted(areas.items())]


def _divergence_text(result: CompareResult) -> tuple[str, str, str]:
    d = result.divergence
    if result.ok:
        return "", "", ""
    if d is None:
        return result.detail, "", ""
    expected = d.expected if d.expected is not None else "<no line>"
    actual = d.actual if d.actual is not None else "<no line>"
    return f"line {d.line}", expected, actual


def _md_code(text: str) -> str:
    text = text.replace("|", "\\|").strip()
    if not text:
        return ""
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}"


def markdown_report(results: Sequence[CompareResult], title: str = "torchlike vs torch", context: int = 3) -> str:
    lines = [f"# {title}", "", f"{format_summary(results)} ({time.strftime('%Y-%m-%d')}).", ""]
    lines += ["Times are wall seconds per run, interpreter start-up and imports included.", ""]
    lines += ["| area | match | total |", "| --- | ---: | ---: |"]
    lines += [f"| {area} | {ok} | {total} |" for area, ok, total in _area_rows(results)]
    lines += ["", "| script | status | first divergence | torch | torchlike | torch s | torchlike s |"]
    lines += ["| --- | --- | --- | --- | --- | ---: | ---: |"]
    for r in results:
        where, expected, actual = _divergence_text(r)
        status = r.status if r.ok else f"**{r.status}**"
        lines.append(
            f"| {_md_code(r.script)} | {status} | {where.replace('|', '/')} | {_md_code(expected)} "
            f"| {_md_code(actual)} | {r.torch.seconds:.2f} | {r.torchlike.seconds:.2f} |"
        )
    for r in results:
        diff = r.diff(context)
        if diff:
            fence = "~~~~" if any(line.startswith("```") for line in diff) else "```"
            lines += ["", f"### {r.script}: {r.detail}", "", fence + "diff", *diff, fence]
    return "\n".join(lines) + "\n"


_CSS = """
body { font-family: sans-serif; margin: 2em; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
td, th { border: 1px solid #ccc; padding: 3px 8px; vertical-align: top; text-align: left; }
td.num { text-align: right; }
.match { background: #e6f4e6; } .fail { background: #fbe4e4; }
pre { margin: 0; font-size: 12px; white-space: pre; }
.sbs { display: flex; gap: 1em; } .sbs > div { flex: 1; overflow-x: auto; }
.bad { background: #f8c0c0; }
pre.diff { background: #f6f6f6; padding: 4px; margin-bottom: 1em; }
"""


def _pre_with_mark(text: str, mark_line: int | None) -> str:
    rows = []
    for i, line in enumerate(text.splitlines(), start=1):
        escaped = html.escape(f"{i:4d}  {line}")
        rows.append(f'<span class="bad">{escaped}</span>' if i == mark_line else escaped)
    return "<pre>" + "\n".join(rows) + "</pre>"


def html_report(results: Sequence[CompareResult], title: str = "torchlike vs torch", context: int = 3) -> str:
    e = html.escape
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{e(title)}</title>"]
    out += [f"<style>{_CSS}</style></head><body><h1>{e(title)}</h1>"]
    out += [f"<p>{e(format_summary(results))} ({time.strftime('%Y-%m-%d')}).</p>"]
    out += ["<table><tr><th>area</th><th>match</th><th>total</th></tr>"]
    for area, ok, total in _area_rows(results):
        cls = "match" if ok == total else "fail"
        out.append(f"<tr class='{cls}'><td>{e(area)}</td><td class='num'>{ok}</td><td class='num'>{total}</td></tr>")
    out += ["</table><table><tr><th>script</th><th>status</th><th>first divergence</th>"]
    out += ["<th>torch</th><th>torchlike</th><th>torch s</th><th>torchlike s</th></tr>"]
    for i, r in enumerate(results):
        where, expected, actual = _divergence_text(r)
        name = e(r.script) if r.ok else f"<a href='#s{i}'>{e(r.script)}</a>"
        out.append(
            f"<tr class='{'match' if r.ok else 'fail'}'><td>{name}</td><td>{e(r.status)}</td><td>{e(where)}</td>"
            f"<td><pre>{e(expected)}</pre></td><td><pre>{e(actual)}</pre></td>"
            f"<td class='num'>{r.torch.seconds:.2f}</td><td class='num'>{r.torchlike.seconds:.2f}</td></tr>"
        )
    out.append("</table>")
    for i, r in enumerate(results):
        if r.ok:
            continue
        mark = r.divergence.line if r.divergence else None
        out.append(f"<h3 id='s{i}'>{e(r.script)}: {e(r.detail)}</h3>")
        diff = r.diff(context)
        if diff:
            out.append("<pre class='diff'>" + e("\n".join(diff)) + "</pre>")
        out.append("<div class='sbs'>")
        for label, run in (("torch", r.torch), ("torchlike", r.torchlike)):
            out.append(f"<div><b>{label}</b> ({e(_run_summary(run))})")
            out.append(_pre_with_mark(run.stdout, mark))
            if run.stderr.strip():
                out.append(f"<details><summary>stderr</summary><pre>{e(run.stderr)}</pre></details>")
            out.append("</div>")
        out.append("</div>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_report(path: str, results: Sequence[CompareResult], context: int = 3) -> None:
    """Write an HTML report if `path` ends in .html/.htm, else Markdown; failing scripts get a diff."""
    if path.lower().endswith((".html", ".htm")):
        text = html_report(results, context=context)
    else:
        text = markdown_report(results, context=context)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
