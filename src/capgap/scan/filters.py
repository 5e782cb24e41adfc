"""A configuration's say over a scan's findings: select / ignore by rule id, exclude and
per-path-ignores by path glob, acknowledged fingerprints (kept, marked, never counted).

Fingerprints are made before anything is filtered: what a config hides never shifts the
`:2` suffixes of the findings it keeps.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from capgap.scan.run import ScanReport
from capgap.settings import Settings


def path_matches(path: str, pattern: str) -> bool:
    """`pattern` (fnmatch: `*` crosses `/`, so `a/**` and `a/*` both take all of `a`) matches the
    path or one of its parent directories; a pattern without `/` matches any one path component
    (`tests` leaves out every `tests/` directory), as ruff's exclude does."""
    pattern = pattern.strip("/")
    parts = path.split("/")
    if "/" not in pattern and any(fnmatchcase(part, pattern) for part in parts):
        return True
    return any(fnmatchcase("/".join(parts[:n]), pattern) for n in range(1, len(parts) + 1))


def wanted(rule: str, path: str, settings: Settings) -> bool:
    """Does the configuration report a finding of `rule` in `path`?"""
    if (settings.select and rule not in settings.select) or rule in settings.ignore:
        return False
    if any(path_matches(path, g) for g in settings.exclude):
        return False
    return not any(rule in rules and path_matches(path, g) for g, rules in settings.per_path_ignores.items())


def apply_settings(report: ScanReport, settings: Settings) -> None:
    """Filter `report` in place and mark what the configuration acknowledges."""
    everything = set(report.fingerprints)
    stale = [fp for fp in settings.acknowledged if fp not in everything]
    if stale:  # as ruff's unused-noqa: an acknowledgement nothing matches any more (fixed? moved?)
        shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
        report.notices.append(
            f"{len(stale)} acknowledged fingerprint(s) in {settings.path} match no finding: {shown}"
        )
    keep = [i for i, f in enumerate(report.findings) if wanted(f.rule, f.path, settings)]
    if len(keep) != len(report.findings):
        report.keep(keep)
    if settings.path is not None:
        report.config = str(settings.path)
    present = set(report.fingerprints)
    report.acknowledged = {fp: why for fp, why in settings.acknowledged.items() if fp in present}
