"""The source rules, an explicit registry: each module has a RULE_ID and a docstring that says
what it reports and at which severity. Decision rules (`check`) are judged per decision and arch;
table and build rules (`findings`) over every file's facts."""

from __future__ import annotations

from capgap.arch import ArchSpec
from capgap.findings import Finding
from capgap.judging.reach import reached
from capgap.judging.records import FileFacts
from capgap.judging.registry import Registry
from capgap.judging.rules import (
    build_missing_arch,
    gate_admits_unsupported,
    gate_excludes_arch,
    table_missing_arch,
)
from capgap.judging.where import placement

DECISION_RULES = (gate_excludes_arch, gate_admits_unsupported)
RULES = {m.RULE_ID: m for m in (table_missing_arch, *DECISION_RULES, build_missing_arch)}

__all__ = ["RULES", "Registry", "build_findings", "gate_findings", "table_findings"]


def table_findings(files: list[FileFacts], archs: tuple[ArchSpec, ...], reg: Registry) -> list[Finding]:
    return table_missing_arch.findings(files, archs, reg)


def build_findings(files: list[FileFacts], archs: tuple[ArchSpec, ...]) -> list[Finding]:
    return build_missing_arch.findings(files, archs)


def gate_findings(files: list[FileFacts], archs: tuple[ArchSpec, ...], reg: Registry) -> list[Finding]:
    """Every decision evaluated once for all archs, then judged for each target arch."""
    out: list[Finding] = []
    for f in files:
        place = placement(f.path)
        for decision in f.decisions:
            r = reached(decision, reg.context(decision.scope, f))
            if r is None:
                continue
            for arch in archs:
                for rule in DECISION_RULES:
                    finding = rule.check(r, f, arch, place)
                    if finding is not None:
                        out.append(finding)
                        break  # one finding per decision and arch
    return out
