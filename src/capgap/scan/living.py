"""What `capgap scan` does around the scan itself for a configuration, a baseline or an older
target: every check that can fail before any work, then the comparison and the baseline file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from capgap import output
from capgap.errors import UsageError
from capgap.scan import baseline as base
from capgap.scan.analyzers import ScanOptions
from capgap.scan.filters import apply_settings
from capgap.scan.run import ScanReport
from capgap.settings import Settings


@dataclass(frozen=True)
class Comparison:
    baseline: str | None = None  # --baseline FILE
    write_baseline: str | None = None  # --write-baseline FILE
    against: str | None = None  # --against TARGET
    store: str | None = None  # --store DIR: the patches --against judges

    def check(self, targets: int) -> list[dict[str, Any]] | None:
        """Refuse what cannot work before scanning; the baseline's findings, when one is named."""
        if self.baseline and self.against:
            raise UsageError("--baseline and --against exclude each other: compare with one of them")
        if self.against and targets != 1:
            raise UsageError("--against compares one target with another: name one TARGET")
        old = base.load_baseline(self.baseline) if self.baseline else None
        if self.write_baseline:
            base.check_writable(self.write_baseline)
        return old

    def apply(
        self,
        report: ScanReport,
        old: list[dict[str, Any]] | None,
        options: ScanOptions,
        settings: Settings,
        python: str | None = None,
    ) -> None:
        """The configuration's filters, then the comparison, then the baseline file."""
        apply_settings(report, settings)
        if old is not None:
            report.diff = base.compare(report, old, str(self.baseline), settings)
        elif self.against:
            from capgap.patches.store import store_dir
            from capgap.scan.against import against

            where = store_dir(self.store, settings.patch_store)
            report.diff = against(report, self.against, options, settings, where, python)
        if self.write_baseline:
            n = base.write_baseline(self.write_baseline, report)
            output.info(f"baseline written: {self.write_baseline} ({n} findings)")
