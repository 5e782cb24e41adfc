"""Presentation of apply/upgrade results (text and JSON), apart from the pipeline."""

from __future__ import annotations

from capgap import output
from capgap.patches.apply import PatchResult

_STYLE = {
    "applied": "green",
    "applied-already": "green",
    "merged": "cyan",
    "semantic": "cyan",
    "upstreamed": "magenta",
    "conflict": "red",
    "skipped": "yellow",
}


def warnings_of(results: list[PatchResult]) -> list[str]:
    return [w for r in results for w in r.warnings]


def exit_code(results: list[PatchResult], strict: bool, extra_warnings: int = 0) -> int:
    if any(r.outcome == "conflict" for r in results):
        return 1
    return 1 if strict and (warnings_of(results) or extra_warnings) else 0


def print_results(results: list[PatchResult], title: str) -> None:
    from rich.markup import escape

    rows = []
    for r in results:
        for f in r.files or [None]:  # type: ignore[list-item]
            style = _STYLE.get(f.outcome if f else r.outcome, "white")
            outcome = f.outcome if f else r.outcome
            rows.append(
                (
                    r.name,
                    escape(f.path) if f else "",
                    f"[{style}]{outcome}[/{style}]",
                    escape(f.detail) if f else "",
                )
            )
    output.table(title, ("patch", "file", "outcome", "detail"), rows)
    for r in results:
        for f in r.files:
            if f.conflict:
                output.show(
                    f"[red]conflict in {escape(f.path)}[/red] (patch {r.name}): current | pristine | patch"
                )
                output.show(escape(f.conflict.rstrip("\n")))
        for w in r.warnings:
            output.warn(w)
        if r.outcome == "upstreamed":
            output.info(f"patch {r.name} is upstreamed: `capgap patch drop {r.name}` removes it")
