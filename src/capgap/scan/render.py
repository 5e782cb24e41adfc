"""Text output of a scan: findings grouped by file, each with its source line and consequence."""

from __future__ import annotations

from collections import Counter, defaultdict

from capgap import output
from capgap.findings import severity_rank
from capgap.scan.run import ScanReport

_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}


def _show(text: str) -> None:
    output.show(text, soft_wrap=True)


def render_text(report: ScanReport, show_all: bool) -> None:
    from rich.markup import escape

    for t in report.targets:  # what was scanned, as resolved (a downloaded wheel says so)
        _show(f"[dim]scanned[/dim] {escape(t.resolved or t.target.spec)}")
    if report.config:
        _show(f"config: {escape(report.config)}")
    for notice in report.notices:
        output.info(f"notice: {escape(notice)}")
    if report.diff is not None:  # new findings first, then what is gone (render_diff.py)
        from capgap.scan.render_diff import show_head

        show_head(report, show_all)
    new = set(report.diff.new) if report.diff is not None else set()
    shown = [
        (f, ti)
        for i, (f, ti) in enumerate(zip(report.findings, report.finding_targets, strict=True))
        if (show_all or f.severity != "low") and i not in new and not report.is_acknowledged(i)
    ]
    # tuned-config findings read best as one shape table per directory (capgap.configs.report)
    configs = [f for f, _ in shown if f.rule == "config-missing-device"]
    by_file: dict[tuple[int, str], list] = defaultdict(list)
    for f, ti in shown:
        if f.rule != "config-missing-device":
            by_file[(ti, f.path)].append(f)
    several = len(report.targets) > 1
    for (ti, path), items in sorted(by_file.items()):
        prefix = f"{report.targets[ti].target.spec}: " if several else ""
        _show(f"\n[bold]{escape(prefix + path)}[/bold]")
        for f in sorted(items, key=lambda x: (x.line, -severity_rank(x.severity), x.rule)):
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
    counts = Counter(f.severity for f in report.findings)
    hidden = 0 if show_all else counts.get("low", 0)
    parts = [f"{counts.get(s, 0)} {s}" for s in ("high", "medium", "low")]
    files = sum(t.files for t in report.targets)
    archs = ", ".join(report.archs)
    tail = f" ({hidden} low hidden: expected gaps; --all shows them)" if hidden else ""
    skipped = f", {len(report.skipped)} skipped" if report.skipped else ""
    _show(
        f"\n[bold]{len(report.findings)} findings[/bold] for {archs}: {', '.join(parts)}{tail}; "
        f"{files} files scanned{skipped}",
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
