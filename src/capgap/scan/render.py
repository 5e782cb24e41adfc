"""Text output of a scan: what to do first (the highs by subsystem, with the fix command when
there is one), then the rest grouped by file, each with its source line and consequence, then a
one-line summary saying what the filters hid and which flag shows it."""

from __future__ import annotations

from collections import Counter, defaultdict

from capgap import output
from capgap.scan.run import ScanReport
from capgap.scan.view import Item, View, ViewOptions, build_view, hidden_text

_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}


def _show(text: str) -> None:
    output.show(text, soft_wrap=True)


def render_text(report: ScanReport, options: ViewOptions | bool = False) -> None:
    from rich.markup import escape

    opts = options if isinstance(options, ViewOptions) else ViewOptions(show_all=bool(options))
    view = build_view(report, opts)
    for t in report.targets:  # what was scanned, as resolved (a downloaded wheel says so)
        _show(f"[dim]scanned[/dim] {escape(t.resolved or t.target.spec)}")
    if report.config:
        _show(f"config: {escape(report.config)}")
    for notice in report.notices:
        output.info(f"notice: {escape(notice)}")
    for note in view.notes:
        output.info(f"note: {escape(note)}")
    if report.diff is not None:  # new findings first, then what is gone (render_diff.py)
        from capgap.scan.render_diff import show_head

        show_head(report, opts.show_all)
    _opening(report, view)
    _by_file(report, view)
    _summary(report, view)


def _where(report: ScanReport, item: Item) -> str:
    f = item.finding
    prefix = f"{report.targets[item.target].target.spec}: " if len(report.targets) > 1 else ""
    return f"{prefix}{f.path}:{f.line}" if f.line >= 1 else f"{prefix}{f.path}"


def _opening(report: ScanReport, view: View) -> None:
    from rich.markup import escape

    archs = ", ".join(report.archs)
    highs = sum(1 for i in (*view.top, *view.rest) if i.finding.severity == "high")
    if not highs:
        _show(
            f"\n[bold]What to do first[/bold]: nothing high for {archs} "
            "(no runtime path shown here fails outright)"
        )
    else:
        _show(f"\n[bold]What to do first[/bold]: {highs} high for {escape(archs)}, by subsystem")
    subsystem = ""
    for item in view.top:
        f = item.finding
        if item.subsystem != subsystem:
            subsystem = item.subsystem
            _show(f"  [bold]{subsystem}[/bold]")
        arch = f" [{f.arch}]" if len(report.archs) > 1 else ""
        _show(f"    [bold red]high[/bold red] {escape(_where(report, item) + arch)}  {escape(f.message)}")
        _show(f"         -> {escape(f.consequence)}")
        if item.fix:
            _show(f"         fix: [green]{escape(item.fix)}[/green]")
    more = highs - len(view.top)
    if more > 0:
        _show(f"  ... {more} more high listed below by file")
    mediums = Counter(i.subsystem for i in view.rest if i.finding.severity == "medium")
    if mediums:
        from capgap.scan.subsystems import SUBSYSTEMS

        ranked = sorted(mediums.items(), key=lambda p: (-p[1], SUBSYSTEMS.index(p[0])))  # most first
        parts = ", ".join(f"{s} {n}" for s, n in ranked)
        _show(f"  medium below, by subsystem: {parts}")
    if view.tables:
        spec = report.targets[0].target.spec if len(report.targets) == 1 else "TARGET"
        import shlex

        cmds = " ; ".join(shlex.join(["capgap", "fix", spec, "--arch", a, "--dry-run"]) for a in report.archs)
        _show(
            f"  {view.tables} table(s) below lack an entry (medium): [green]{escape(cmds)}[/green] "
            "shows the entries capgap fix can add"
        )


def _by_file(report: ScanReport, view: View) -> None:
    from rich.markup import escape

    # tuned-config findings read best as one shape table per directory (capgap.configs.report)
    configs = [i.finding for i in view.rest if i.finding.rule == "config-missing-device"]
    by_file: dict[tuple[int, str], list[Item]] = defaultdict(list)
    for item in view.rest:
        if item.finding.rule != "config-missing-device":
            by_file[(item.target, item.finding.path)].append(item)
    if by_file:
        _show("\n[bold]The rest, by file[/bold]" if view.top else "\n[bold]By file[/bold]")
    several = len(report.targets) > 1
    for (ti, path), items in by_file.items():  # view.rest is sorted by target, file, line
        prefix = f"{report.targets[ti].target.spec}: " if several else ""
        _show(f"\n[bold]{escape(prefix + path)}[/bold]")
        for item in items:
            f = item.finding
            style = _STYLE.get(f.severity, "")
            arch = f" [{f.arch}]" if len(report.archs) > 1 else ""
            head = f"  [{style}]{f.severity:<6}[/{style}] {f.line:>5}  [cyan]{f.rule}[/cyan]{escape(arch)}"
            _show(f"{head}  {escape(f.message)}")
            if f.source:
                _show(f"         [dim]{escape(f.source[:160])}[/dim]")
            _show(f"         -> {escape(f.consequence)}")
    if configs:
        from capgap.configs.report import show_config_findings

        _show("")
        show_config_findings(configs)


def _summary(report: ScanReport, view: View) -> None:
    from rich.markup import escape

    counts = Counter(f.severity for f in report.findings)
    parts = [f"{counts.get(s, 0)} {s}" for s in ("high", "medium", "low")]
    files = sum(t.files for t in report.targets)
    archs = ", ".join(report.archs)
    hidden = hidden_text(view)
    shown = f"{view.shown} shown" + (f", {sum(view.hidden.values())} hidden: {hidden}" if hidden else "")
    skipped = f", {len(report.skipped)} skipped" if report.skipped else ""
    _show(
        f"\n[bold]{len(report.findings)} findings[/bold] for {escape(archs)}: {', '.join(parts)}; "
        f"{escape(shown)}; {files} files scanned{skipped}",
    )
    if report.acknowledged:
        acked = len(report.acknowledged)
        _show(f"{acked} acknowledged in {escape(str(report.config))} (hidden; JSON marks them)")
    if report.diff is not None:
        from capgap.scan.render_diff import show_tail

        show_tail(report)
    for s in report.skipped[:20]:
        _show(f"  [dim]skipped {escape(s.path)}: {escape(s.reason)}[/dim]")
    if len(report.skipped) > 20:
        _show(
            f"  [dim]... and {len(report.skipped) - 20} more skipped (see --format json)[/dim]",
        )
