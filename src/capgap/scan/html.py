"""`capgap scan --format html`: one self-contained page for people who would rather click than scroll.

The summary block (the highs by subsystem, with their fix commands), filters by severity, rule,
subsystem, model and place, and every finding with its source lines and consequence. Everything
is inline (CSS and JS from report_assets/), nothing is fetched, and every text from the scanned
tree is escaped; a Content-Security-Policy that admits only this page's own style and script
(by hash) keeps anything that got through from running or loading.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections import Counter
from html import escape
from importlib import resources
from urllib.parse import quote

from capgap import __version__
from capgap.findings import SEVERITIES
from capgap.scan.run import ScanReport
from capgap.scan.subsystems import SUBSYSTEMS
from capgap.scan.view import Item, ViewOptions, build_view, model_name, model_of, where_of

CONTEXT = 2  # source lines shown either side of a finding's line
_MAX_FILE = 4 << 20  # a file larger than this shows only the finding's own line
_BINARY = (".so", ".a", ".o", ".cubin", ".fatbin", ".bin", ".json")


def _asset(name: str) -> str:
    return resources.files("capgap.scan").joinpath("report_assets", name).read_text(encoding="utf-8")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _a(value: object) -> str:
    return escape(str(value), quote=True)


class _Lines:
    """A finding's neighbourhood in its file, read once per file (bounded, regular files only,
    never outside the target's root)."""

    def __init__(self) -> None:
        self.cache: dict[str, list[str] | None] = {}

    def around(self, root: str, path: str, line: int) -> list[tuple[int, str]]:
        if line < 1 or path.endswith(_BINARY):
            return []
        full = os.path.realpath(os.path.join(root, path))
        if full not in self.cache:
            self.cache[full] = self._read(os.path.realpath(root), full)
        lines = self.cache[full]
        if not lines or line > len(lines):
            return []
        first, last = max(line - CONTEXT, 1), min(line + CONTEXT, len(lines))
        return [(n, lines[n - 1][:300]) for n in range(first, last + 1)]

    @staticmethod
    def _read(root: str, full: str) -> list[str] | None:
        from capgap.boundedread import read_regular

        if os.path.commonpath([root, full]) != root:
            return None
        try:
            return read_regular(full, _MAX_FILE).decode("utf-8", "replace").splitlines()
        except (OSError, ValueError):
            return None


def _finding(report: ScanReport, item: Item, lines: _Lines, n: int) -> str:
    f = item.finding
    root = str(report.targets[item.target].target.root)
    near = lines.around(root, f.path, f.line)
    if near:
        src = "".join(
            f"<span{' class=at' if k == f.line else ''}><i>{k}</i>{escape(t)}</span>" for k, t in near
        )
    elif f.source:
        src = f'<span class="at"><i>{f.line if f.line >= 1 else ""}</i>{escape(f.source[:300])}</span>'
    else:
        src = ""
    model = model_of(f)
    arch = f" · {escape(f.arch)}" if len(report.archs) > 1 else ""
    return (
        f'<article class="finding" id="f{n}" data-severity="{_a(f.severity)}" data-rule="{_a(f.rule)}" '
        f'data-subsystem="{_a(item.subsystem)}" data-model="{_a(model)}" data-where="{_a(where_of(f))}">'
        f'<div class="meta"><span class="sev {_a(f.severity)}">{escape(f.severity)}</span> '
        f"line {f.line} · <code>{escape(f.rule)}</code> · {escape(item.subsystem)}{arch}"
        + (f" · model {escape(model)}" if model else "")
        + f'</div><p class="msg">{escape(f.message)}</p>'
        + (f'<pre class="src">{src}</pre>' if src else "")
        + f'<p class="cons">{escape(f.consequence)}</p>'
        + (f'<p class="fix">fix: <code>{escape(item.fix)}</code></p>' if item.fix else "")
        + "</article>"
    )


def _todo(report: ScanReport, top: list[Item], highs: int) -> str:
    archs = escape(", ".join(report.archs))
    if not highs:
        return (
            f'<section id="todo" class="calm"><h2>What to do first</h2><p>Nothing high for {archs}: '
            "no path here fails outright. The findings below are paths the arch never takes "
            "and tables that lack it.</p></section>"
        )
    out = [f'<section id="todo"><h2>What to do first: {highs} high for {archs}</h2>']
    current = ""
    for item in top:
        f = item.finding
        if item.subsystem != current:
            out.append(("</ul>" if current else "") + f"<h3>{escape(item.subsystem)}</h3><ul>")
            current = item.subsystem
        spec = f"{report.targets[item.target].target.spec}: " if len(report.targets) > 1 else ""
        out.append(
            f'<li><span class="sev high">high</span> <code>{escape(spec + f.path)}:{f.line}</code> '
            f"{escape(f.message)}<br>&rarr; {escape(f.consequence)}"
            + (f'<br><span class="fix">fix: <code>{escape(item.fix)}</code></span>' if item.fix else "")
            + "</li>"
        )
    out.append("</ul>" if current else "")
    if highs > len(top):
        out.append(f"<p>&hellip; {highs - len(top)} more high below.</p>")
    return "".join(out) + "</section>"


def _select(name: str, label: str, options: list[tuple[str, str]]) -> str:
    opts = "".join(f'<option value="{_a(v)}">{escape(t)}</option>' for v, t in options)
    return f'<label>{escape(label)} <select name="{_a(name)}">{opts}</select></label>'


def _filters(report: ScanReport, items: list[Item]) -> str:
    sev = Counter(i.finding.severity for i in items)
    boxes = "".join(
        f'<label><input type="checkbox" name="severity" value="{s}" checked> {s} ({sev.get(s, 0)})</label>'
        for s in reversed(SEVERITIES)
    )
    rules = sorted(Counter(i.finding.rule for i in items).items())
    subs = Counter(i.subsystem for i in items)
    models = Counter(model_of(i.finding) for i in items if model_of(i.finding))
    return (
        '<form id="filters" autocomplete="off">'
        + boxes
        + _select("rule", "rule", [("all", "all rules")] + [(r, f"{r} ({n})") for r, n in rules])
        + _select(
            "subsystem",
            "subsystem",
            [("all", "all")] + [(s, f"{s} ({subs[s]})") for s in SUBSYSTEMS if subs.get(s)],
        )
        + _select(
            "model",
            "model",
            [("all", "all models"), ("none", "no model's files")]
            + [(m, f"{m} ({n}) and the runtime") for m, n in sorted(models.items())],
        )
        + _select(
            "where",
            "where",
            [("runtime", "runtime"), ("test", "tests, examples, vendored"), ("all", "everywhere")],
        )
        + '<span id="count"></span></form>'
    )


def render_html(report: ScanReport, opts: ViewOptions) -> str:
    """The page; `opts` (--all, --where, --model) sets the filters it opens with, and all findings
    are in it (--max is for the text report)."""
    from rich.markup import escape as markup

    from capgap import output

    for notice in report.notices:  # stderr, as the text report says them
        output.info(f"notice: {markup(notice)}")
    for note in build_view(report, opts, fixes=False).notes:  # a --model no file belongs to
        output.info(f"note: {markup(note)}")
    view = build_view(report, ViewOptions(show_all=True, where="all"))
    items = sorted([*view.top, *view.rest], key=lambda i: (i.target, i.finding.path, i.finding.line))
    highs = sum(1 for i in items if i.finding.severity == "high")
    lines = _Lines()
    body: list[str] = ['<main id="findings">']
    current: tuple[int, str] | None = None
    for n, item in enumerate(items):
        key = (item.target, item.finding.path)
        if key != current:
            spec = f"{report.targets[key[0]].target.spec}: " if len(report.targets) > 1 else ""
            body.append(
                ("</section>" if current else "")
                + '<section class="file"><h3>'
                + escape(spec + key[1])
                + "</h3>"
            )
            current = key
        body.append(_finding(report, item, lines, n))
    body.append(("</section>" if current else "") + "</main>")
    counts = Counter(i.finding.severity for i in items)
    files = sum(t.files for t in report.targets)
    summary = (
        f"{len(items)} findings for {', '.join(report.archs)}: "
        + ", ".join(f"{counts.get(s, 0)} {s}" for s in reversed(SEVERITIES))
        + f"; {files} files scanned"
        + (f", {len(report.skipped)} skipped" if report.skipped else "")
    )
    severities = "high,medium,low" if opts.show_all or opts.where == "test" else "high,medium"
    # --model as the user spelled it (llama-x) -> the name the files carry (llama_x)
    model = next(
        (
            model_of(i.finding)
            for i in items
            if opts.model and model_name(model_of(i.finding)) == model_name(opts.model)
        ),
        "all",
    )
    defaults = f"severity={severities}&where={quote(opts.where)}&model={quote(model)}"
    css, js = _asset("report.css"), _asset("report.js")
    policy = f"default-src 'none'; style-src {_hash(css)}; script-src {_hash(js)}; img-src data:"
    scanned = "".join(f"<p>scanned {escape(t.resolved or t.target.spec)}</p>" for t in report.targets)
    scanned += "".join(f"<p>notice: {escape(n)}</p>" for n in report.notices)
    skipped = "".join(
        f"<li><code>{escape(s.path)}</code>: {escape(s.reason)}</li>" for s in report.skipped[:200]
    )
    if skipped:
        n = len(report.skipped)
        more = f"<li>&hellip; and {n - 200} more</li>" if n > 200 else ""
        skipped = f"<details><summary>{n} skipped</summary><ul>{skipped}{more}</ul></details>"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_a(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>capgap scan for {escape(', '.join(report.archs))}</title><style>{css}</style></head>"
        f'<body data-defaults="{_a(defaults)}"><header class="page"><h1>capgap scan for '
        f"{escape(', '.join(report.archs))}</h1>{scanned}</header>"
        + _todo(report, view.top, highs)
        + _filters(report, items)
        + "".join(body)
        + f'<footer id="summary">{escape(summary)} · capgap {escape(__version__)}{skipped}</footer>'
        + f"<script>{js}</script></body></html>\n"
    )
