"""`run_scan`: resolve targets, run every registered analyzer, gather one report.

The library entry the CLI and other verbs (`fix`, `upgrade`) share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from capgap.findings import Finding, Skipped, severity_rank
from capgap.scan.analyzers import ScanOptions, load_analyzers
from capgap.targets import Target, describe, resolve_target

NOTHING_READ = (
    "nothing here that capgap reads (Python source, build files, compiled libraries, tuned configs)"
)
NO_DEVICE = (
    "tuned-config coverage not checked: no GPU found here to take the device from; "
    "pass --device NAME (e.g. --device 'NVIDIA RTX PRO 6000 Blackwell Server Edition')"
)


@dataclass
class TargetReport:
    target: Target
    files: int
    resolved: str = ""  # what the target resolved to (targets.describe), for the header

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"spec": self.target.spec, "root": str(self.target.root), "files": self.files}
        if self.target.name:
            out.update(name=self.target.name, version=self.target.version)
        return {**out, "kind": self.target.kind, "resolved": self.resolved}


@dataclass
class ScanReport:
    archs: tuple[str, ...]
    targets: list[TargetReport] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    finding_targets: list[int] = field(default_factory=list)  # index into targets, per finding
    notices: list[str] = field(default_factory=list)  # what was not scanned, one line each

    def to_json(self) -> dict[str, Any]:
        several = len(self.targets) > 1
        findings = []
        for finding, ti in zip(self.findings, self.finding_targets, strict=True):
            data = finding.to_json()
            if several:
                data["target"] = self.targets[ti].target.spec
            findings.append(data)
        return {
            "arch": list(self.archs) if len(self.archs) > 1 else self.archs[0],
            "targets": [t.to_json() for t in self.targets],
            "findings": findings,
            "skipped": [s.to_json() for s in self.skipped],
            "notices": self.notices,
        }

    def worst_at_or_above(self, fail_on: str) -> bool:
        return any(severity_rank(f.severity) >= severity_rank(fail_on) for f in self.findings)


def run_scan(specs: list[str], options: ScanOptions, python: str | None = None) -> ScanReport:
    """Scan every target for every arch in `options` with every registered analyzer."""
    report = ScanReport(tuple(dict.fromkeys(a.cc for a in options.archs)))
    analyzers = load_analyzers()
    targets = [resolve_target(spec, python) for spec in specs]  # all errors before any work
    for ti, target in enumerate(targets):
        files = 0
        for analyzer in analyzers:
            result = analyzer.analyze(target, options)
            files = max(files, result.files)
            report.findings.extend(result.findings)
            report.finding_targets.extend([ti] * len(result.findings))
            report.skipped.extend(result.skipped)
        report.targets.append(TargetReport(target, files, describe(target, python)))
        if files == 0:  # one line in the text's skipped list, an entry in JSON's
            report.skipped.append(Skipped(target.spec, NOTHING_READ))
    if _no_devices(options):
        report.notices.append(NO_DEVICE)
    return report


def _no_devices(options: ScanOptions) -> bool:
    """No --device and no GPU to name: the tuned-config analyzer judged nothing."""
    from capgap.scan.analyzers import LazyDevices

    devices = options.devices
    if isinstance(devices, LazyDevices):
        return devices.surely_none() or (devices.asked and not devices.get())
    return not devices
