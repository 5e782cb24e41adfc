"""The explicit registry of analyzers `capgap scan` runs over a resolved target.

An analyzer is a module exposing

    ANALYZER_ID: str
    RULES: tuple[str, ...]  # the rule ids it reports
    def analyze(target: Target, options: ScanOptions) -> AnalyzerResult

Source rules (Python/build files), compiled-binary rules and tuned-config rules are each one
analyzer; each owns its own rule modules and rule ids.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capgap.arch import ArchSpec
    from capgap.findings import Finding, Skipped

# Module paths, in the order their findings are reported.
ANALYZER_MODULES = (
    # table-missing-arch, gate-excludes-arch, gate-admits-unsupported, registry-excludes-arch,
    # build-missing-arch:
    "capgap.scan.source",
    "capgap.native.analyzer",  # kernel-body-missing-arch, gate-excludes-arch in CUDA/C++ sources
    "capgap.binaries.analyzer",  # binary-missing-arch
    "capgap.configs.analyzer",  # config-missing-device
)


class LazyDevices:
    """GPU names found on first use: probing the GPUs (NVML start-up) is paid only by a scan
    whose target has tuned configs to judge. Asks `find` once; `surely_none` tells cheaply, without
    probing, that `find` would find nothing (no GPU driver here), so no one looks for configs."""

    def __init__(
        self, find: Callable[[], tuple[str, ...]], surely_none: Callable[[], bool] | None = None
    ) -> None:
        self._find = find
        self._surely_none = surely_none
        self._names: tuple[str, ...] | None = None

    def get(self) -> tuple[str, ...]:
        if self._names is None:
            self._names = tuple(self._find())
        return self._names

    @property
    def asked(self) -> bool:
        return self._names is not None

    def surely_none(self) -> bool:
        if self._names is not None:
            return not self._names
        return self._surely_none is not None and self._surely_none()

    def __repr__(self) -> str:
        return f"LazyDevices({'not asked yet' if self._names is None else self._names!r})"


@dataclass(frozen=True)
class ScanOptions:
    archs: tuple[ArchSpec, ...]
    binaries: bool = True
    use_cache: bool = True
    # GPU names for config coverage (--device, or the probe's: then LazyDevices, asked only when needed)
    devices: tuple[str, ...] | LazyDevices = ()
    jobs: int = 0  # 0: one worker per core
    vendored: bool = False  # --all: also judge vendored libraries' own native gates (cutlass, cccl)

    def device_names(self) -> tuple[str, ...]:
        """The GPU names (probing the GPUs now if they were left to a LazyDevices)."""
        return self.devices.get() if isinstance(self.devices, LazyDevices) else self.devices


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


def rule_ids() -> frozenset[str]:
    """Every rule id a scan can report, from the analyzers' own registries."""
    return frozenset(rid for module in load_analyzers() for rid in getattr(module, "RULES", ()))
