"""The source rules, an explicit registry: each module has a RULE_ID and a docstring that says
what it reports and at which severity. Decision rules (`check`) are judged per decision and arch;
table and build rules (`findings`) over every file's facts."""

from __future__ import annotations

import re

from capgap.arch import ArchSpec
from capgap.findings import Finding
from capgap.judging.reach import Reached, reached
from capgap.judging.records import FileFacts
from capgap.judging.registry import Registry
from capgap.judging.rules import (
    build_missing_arch,
    gate_admits_unsupported,
    gate_excludes_arch,
    kernel_body_missing_arch,
    table_missing_arch,
)
from capgap.judging.where import placement

DECISION_RULES = (gate_excludes_arch, gate_admits_unsupported)
RULES = {
    m.RULE_ID: m for m in (table_missing_arch, *DECISION_RULES, build_missing_arch, kernel_body_missing_arch)
}

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
        found = [(d, reached(d, reg.context(d.scope, f))) for d in f.decisions]
        guards = [(d.rest, r) for d, r in found if r is not None and d.kind == "guards"]
        for decision, r in found:
            if r is None:
                continue
            _narrow(r, guards)
            here = dict(place, where="backward") if _BACKWARD.search(decision.context) else place
            for arch in archs:
                for rule in DECISION_RULES:
                    finding = rule.check(r, f, arch, here)
                    if finding is not None:
                        out.append(finding)
                        break  # one finding per decision and arch
    return out


_BACKWARD = re.compile(r"(?:^|[._])(?:\w*_bwd\w*|backward\w*)(?:$|\.)", re.I)


def _narrow(r: Reached, guards: list[tuple[tuple[int, int], Reached]]) -> None:
    """Archs an earlier guard clause turned away never reach this decision (`if cap not in
    (...): raise` above it): they get no outcome here."""
    line = r.decision.line
    for (first, last), g in guards:
        if g is r or not first <= line <= last:
            continue
        rest = len(g.decision.arms) - 1
        for cc, arms in g.reach.items():
            if rest not in arms:
                r.reach[cc] = ()
