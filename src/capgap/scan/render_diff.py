"""The text of a scan compared with a baseline or an older release: the new findings first, then
what is gone, and at the end "N new, M gone, K unchanged" and the saved patches' verdicts."""

from __future__ import annotations

from typing import Any

from capgap import output
from capgap.scan.run import ScanReport

_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}


def _show(text: str) -> None:
    output.show(text, soft_wrap=True)


def _one(f: dict[str, Any], consequence: bool) -> None:
    from rich.markup import escape

    sev = str(f.get("severity", ""))
    style = _STYLE.get(sev, "")
    where = f"{f.get('path', '?')}:{f.get('line', '?')}"
    _show(
        f"  [{style}]{sev:<6}[/{style}] {escape(where)}  [cyan]{escape(str(f.get('rule', '')))}[/cyan]  "
        f"{escape(str(f.get('message', '')))}"
    )
    if consequence and f.get("consequence"):
        _show(f"         -> {escape(str(f['consequence']))}")


def show_head(report: ScanReport, show_all: bool) -> None:
    """What the scan was compared with, its new findings, what is gone (low ones: with --all)."""
    from rich.markup import escape

    diff = report.diff
    assert diff is not None
    if diff.against is not None:
        _show(f"[dim]against[/dim] {escape(str(diff.against.get('resolved') or diff.label))}")
    else:
        _show(f"[dim]baseline[/dim] {escape(diff.label)}")
    new = [
        i
        for i in diff.new
        if not report.is_acknowledged(i) and (show_all or report.findings[i].severity != "low")
    ]
    gone = [f for f in diff.gone if show_all or f.get("severity") != "low"]
    was = "the older target" if diff.against is not None else "the baseline"
    _show(f"\n[bold]{len(new)} new[/bold] (not in {was}){_hidden(len(diff.new) - len(new))}")
    for i in new:
        _one(report.finding_json(i), consequence=True)
    _show(f"\n[bold]{len(gone)} gone[/bold] (in {was}, not found now){_hidden(len(diff.gone) - len(gone))}")
    for f in gone:
        _one(f, consequence=False)
    if not diff.stayed:
        return
    _show(f"\n[bold]{len(diff.stayed)} unchanged[/bold] (in both; by file below)")
    for i, old in diff.stayed:  # the same place, rated otherwise now: worth a look before the rest
        f = report.findings[i]
        if old.get("severity") != f.severity and not report.is_acknowledged(i):
            where, was = escape(f"{f.path}:{f.line}"), old.get("severity")
            _show(f"  severity {was} -> {f.severity}: {where}  [cyan]{f.rule}[/cyan]  {escape(f.symbol)}")


def _hidden(n: int) -> str:
    return f"; {n} more hidden: low or acknowledged (--all shows the low ones)" if n else ""


def show_tail(report: ScanReport) -> None:
    from rich.markup import escape

    diff = report.diff
    assert diff is not None
    _show(
        f"[bold]{len(diff.new)} new, {len(diff.gone)} gone, {len(diff.stayed)} unchanged[/bold] "
        f"against {escape(diff.label)}"
    )
    if diff.against is None:
        return
    _show(f"{escape(diff.patches_note)}" + (":" if diff.patches else ""))
    for p in diff.patches:
        _show(f"  {escape(p['name'])}: {escape(p['verdict'])}")
