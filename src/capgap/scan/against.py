"""`capgap scan NEW --against OLD`: the pre-upgrade audit. OLD is scanned as NEW was (same
archs, devices, configuration); findings match by fingerprint, which leaves the version and
root out, so: "new" (the newer release opened them), "gone" (upstream closed them), "stayed".
Then each saved patch of the package is tried on NEW's files (patches/upstreamed.py)."""

from __future__ import annotations

from pathlib import Path

from capgap.errors import UsageError
from capgap.scan.analyzers import ScanOptions
from capgap.scan.baseline import Diff, compare
from capgap.scan.filters import apply_settings
from capgap.scan.run import ScanReport, run_scan
from capgap.settings import Settings


def against(
    report: ScanReport,
    spec: str,
    options: ScanOptions,
    settings: Settings,
    store: Path | None,
    python: str | None = None,
) -> Diff:
    if len(report.targets) != 1:
        raise UsageError("--against compares one target with another: name one TARGET")
    older = run_scan([spec], options, python)
    apply_settings(older, settings)
    old = [older.finding_json(i) for i in range(len(older.findings))]
    diff = compare(report, old, spec, settings)
    target = older.targets[0]
    diff.against = {**target.to_json(), "findings": len(old)}
    if store is not None:
        from capgap.patches.store import Store
        from capgap.patches.upstreamed import verdicts

        diff.patches, diff.patches_note = verdicts(Store(store), report.targets[0].target, python)
    return diff
