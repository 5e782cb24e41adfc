"""Text renderers for tuned-config coverage (scan) and config copies (fix --configs).

`show_config_findings(findings)` is what `capgap scan` calls for its text output: one compact
table per directory and device (shape family, target has, siblings have), plus one line on the
siblings whose files would not fit the target's shared memory. `show_config_copies(copies)` is
the text output of `capgap fix --configs`. JSON output needs neither: findings and copies have
`to_json()`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from capgap import output

if TYPE_CHECKING:
    from rich.table import Table

    from capgap.configs.fixer import ConfigCopy
    from capgap.findings import Finding

RULE = "config-missing-device"


def config_table(finding: Finding) -> Table:
    """One finding as a table: per shape family, how many shapes the target and its siblings have."""
    from rich.table import Table

    table = Table(show_lines=False)
    table.add_column("shape family")
    table.add_column("target has", justify="right")
    table.add_column("siblings have", justify="right")
    for row in finding.extra.get("families", []):
        table.add_row(str(row["family"]), str(row["target_has"]), str(row["siblings_have"]))
    return table


def _fit_line(finding: Finding) -> str | None:
    extra = finding.extra
    unfit = extra.get("smem_unfit_by_device") or {}
    limit = extra.get("smem_limit_kb")
    if limit is None:
        return "  shared-memory limit unknown for this device: fit of siblings' configs not checked"
    if not unfit:
        return None
    worst = ", ".join(f"{d} ({n})" for d, n in list(unfit.items())[:3])
    return (
        f"  would not fit {limit} KB per block (out of resource: shared memory): {worst}; "
        f"{extra.get('copyable')} of {extra.get('missing_count')} missing shapes have a sibling that fits"
    )


def show_config_findings(findings: Iterable[Finding]) -> None:
    """Print the `config-missing-device` findings among `findings` as compact tables."""
    from rich.markup import escape

    for finding in findings:
        if finding.rule != RULE:
            continue
        extra = finding.extra
        arch = f" (cc {finding.arch})" if finding.arch else ""
        output.show(
            escape(
                f"{finding.symbol}: {finding.missing}{arch} lacks {extra.get('missing_count')} "
                f"of {extra.get('shapes')} shapes"
            )
        )
        output.show(config_table(finding))
        examples = (finding.extra.get("missing_examples") or [])[:3]
        more = int(finding.extra.get("missing_count") or 0) - len(examples)
        if examples:
            tail = f" (+{more} more)" if more > 0 else ""
            output.show(escape(f"  missing e.g.: {'; '.join(examples)}{tail}"))
        line = _fit_line(finding)
        if line:
            output.show(escape(line))


def show_config_copies(copies: Sequence[ConfigCopy], dry_run: bool) -> None:
    """Print what `fix_configs` copied (or would copy) and refused: one table per directory and device."""
    groups: dict[tuple[str, str, int], list[ConfigCopy]] = {}
    for c in copies:
        groups.setdefault((c.directory, c.device, c.limit_kb), []).append(c)
    for (directory, device, limit), rows in groups.items():
        done = sum(1 for c in rows if c.status != "refused")
        verb = "would copy" if dry_run else "copied"
        title = f"{directory}: {device} ({limit} KB per block): {verb} {done} of {len(rows)}, not measured"
        output.table(title, ("shape", "status", "from", "need KB"), [_copy_row(c) for c in rows])
    if dry_run and copies:
        output.show("dry run: nothing written")


def _copy_row(c: ConfigCopy) -> tuple[str, str, str, str]:
    if c.status == "refused":
        worst = ", ".join(f"{d} {n:g}" if n is not None else f"{d} unreadable" for d, n in c.refused[:2])
        return (c.shape, "refused", "none fits", worst)
    return (c.shape, c.status, c.source_device or "-", "-" if c.need_kb is None else f"{c.need_kb:g}")
