"""The explicit registry of analyzers `capgap scan` runs over a resolved target.

An analyzer is a module exposing

    ANALYZER_ID: str
    def analyze(target: Target, options: ScanOptions) -> AnalyzerResult

Source rules (Python/build files), compiled-binary rules and tuned-config rules are each one
analyzer; each owns its own rule modules and rule ids.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capgap.arch import ArchSpec
    from capgap.findings import Finding, Skipped

# Module paths, in the order their findings are reported.
ANALYZER_MODULES = (
    # table-missing-arch, gate-excludes-arch, gate-admits-unsupported, build-missing-arch:
    "capgap.scan.source",
    "capgap.binaries.analyzer",  # binary-missing-arch
    "capgap.configs.analyzer",  # config-missing-device
)


@dataclass(frozen=True)
class ScanOptions:
    archs: tuple[ArchSpec, ...]
    binaries: bool = True
    use_cache: bool = True
    devices: tuple[str, ...] = ()  # GPU names for config coverage (probe or --device)
    jobs: int = 0  # 0: one worker per core


@dataclass
class AnalyzerResult:
    findings: list[Finding] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    files: int = 0


def load_analyzers() -> list[ModuleType]:
    out = []
    for name in ANALYZER_MODULES:
        try:
            out.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:  # an analyzer still being built
            if exc.name is None or not name.startswith(exc.name):
                raise
    return out
