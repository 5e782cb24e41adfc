"""`run_scan`: resolve targets, run every registered analyzer, gather one report.

The library entry the CLI and other verbs (`fix`, `upgrade`) share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from capgap.findings import Finding, Skipped, severity_rank
from capgap.scan.analyzers import ScanOptions, load_analyzers
from capgap.scan.fingerprint import fingerprints, package_name
from capgap.targets import Target, describe, resolve_target

if TYPE_CHECKING:
    from capgap.scan.baseline import Diff

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
    package: str = ""  # its package name, canonical (fingerprint.package_name)

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
    fingerprints: list[str] = field(default_factory=list)  # per finding (scan/fingerprint.py)
    config: str | None = None  # the configuration file the scan read
    acknowledged: dict[str, str] = field(default_factory=dict)  # fingerprint -> the config's reason
    diff: Diff | None = None  # against a baseline or an older target (scan/baseline.py)

    def finding_json(self, i: int) -> dict[str, Any]:
        data = self.findings[i].to_json()
        if len(self.targets) > 1:
            data["target"] = self.targets[self.finding_targets[i]].target.spec
        if i < len(self.fingerprints):
            data["fingerprint"] = self.fingerprints[i]
            reason = self.acknowledged.get(self.fingerprints[i])
            if reason is not None:
                data["acknowledged"] = reason
        return data

    def to_json(self) -> dict[str, Any]:
        out = {
            "arch": list(self.archs) if len(self.archs) > 1 else self.archs[0],
            "targets": [t.to_json() for t in self.targets],
            "findings": [self.finding_json(i) for i in range(len(self.findings))],
            "skipped": [s.to_json() for s in self.skipped],
            "notices": self.notices,
            "config": self.config,
        }
        if self.diff is not None:
            out.update(self.diff.to_json(self))
        return out

    def is_acknowledged(self, i: int) -> bool:
        return bool(self.acknowledged) and self.fingerprints[i] in self.acknowledged

    def counted(self) -> list[int]:
        """The findings the exit code counts: not acknowledged, and new when there is a diff."""
        pool = range(len(self.findings)) if self.diff is None else self.diff.new
        return [i for i in pool if not self.is_acknowledged(i)]

    def worst_at_or_above(self, fail_on: str) -> bool:
        rank = severity_rank(fail_on)
        return any(severity_rank(self.findings[i].severity) >= rank for i in self.counted())

    def keep(self, indices: list[int]) -> None:
        """Only these findings stay (a config's select, ignore and exclude)."""
        self.findings = [self.findings[i] for i in indices]
        self.finding_targets = [self.finding_targets[i] for i in indices]
        self.fingerprints = [self.fingerprints[i] for i in indices]


def run_scan(specs: list[str], options: ScanOptions, python: str | None = None) -> ScanReport:
    """Scan every target for every arch in `options` with every registered analyzer."""
    report = ScanReport(tuple(dict.fromkeys(a.cc for a in options.archs)))
    analyzers = load_analyzers()
    targets = [resolve_target(spec, python) for spec in specs]  # all errors before any work
    for ti, target in enumerate(targets):
        files = 0
        # an analyzer may start its work now in a child process (native sources beside Python ones)
        ahead = {a.__name__: getattr(a, "start_ahead", lambda t, o: None)(target, options) for a in analyzers}
        for analyzer in analyzers:
            started = ahead[analyzer.__name__]
            result = started.result() if started is not None else analyzer.analyze(target, options)
            files = max(files, result.files)
            report.findings.extend(result.findings)
            report.finding_targets.extend([ti] * len(result.findings))
            report.skipped.extend(result.skipped)
        package = package_name(target.name, str(target.root))
        report.targets.append(TargetReport(target, files, describe(target, python), package))
        if files == 0:  # one line in the text's skipped list, an entry in JSON's
            report.skipped.append(Skipped(target.spec, NOTHING_READ))
    if _no_devices(options):
        report.notices.append(NO_DEVICE)
    packages = [report.targets[ti].package for ti in report.finding_targets]
    report.fingerprints = fingerprints(report.findings, packages)
    return report


def _no_devices(options: ScanOptions) -> bool:
    """No --device and no GPU to name: the tuned-config analyzer judged nothing."""
    from capgap.scan.analyzers import LazyDevices

    devices = options.devices
    if isinstance(devices, LazyDevices):
        return devices.surely_none() or (devices.asked and not devices.get())
    return not devices
