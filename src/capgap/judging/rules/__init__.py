"""The source rules, an explicit registry: each module has a RULE_ID and a docstring that says
what it reports and at which severity. Decision rules (`check`) are judged per decision and arch;
table and build rules (`findings`) over every file's facts."""

from __future__ import annotations

import re

from capgap.arch import ArchSpec
from capgap.findings import Finding
from capgap.judging import outcomes
from capgap.judging.reach import Reached, reached
from capgap.judging.records import Decision, FileFacts
from capgap.judging.registry import Registry
from capgap.judging.rules import (
    branch_refuses_feature,
    build_missing_arch,
    class_bounds,
    gate_admits_unsupported,
    gate_excludes_arch,
    kernel_body_missing_arch,
    registry_excludes_arch,
    table_missing_arch,
)
from capgap.judging.where import placement

# a path the target is let into but cannot run is the worse news: judged first
DECISION_RULES = (gate_admits_unsupported, gate_excludes_arch)
RULES = {
    m.RULE_ID: m
    for m in (
        table_missing_arch,
        *DECISION_RULES,
        branch_refuses_feature,
        registry_excludes_arch,
        build_missing_arch,
        kernel_body_missing_arch,
    )
}

__all__ = ["RULES", "Registry", "build_findings", "gate_findings", "registry_findings", "table_findings"]


def table_findings(files: list[FileFacts], archs: tuple[ArchSpec, ...], reg: Registry) -> list[Finding]:
    return table_missing_arch.findings(files, archs, reg)


def registry_findings(files: list[FileFacts], archs: tuple[ArchSpec, ...], reg: Registry) -> list[Finding]:
    return registry_excludes_arch.findings(files, archs, reg)


def class_bound_findings(files: list[FileFacts], archs: tuple[ArchSpec, ...]) -> list[Finding]:
    """gate-excludes-arch for capability bounds written as class attributes (rules.class_bounds)."""
    return class_bounds.findings(files, archs)


def build_findings(files: list[FileFacts], archs: tuple[ArchSpec, ...]) -> list[Finding]:
    return build_missing_arch.findings(files, archs)


def gate_findings(files: list[FileFacts], archs: tuple[ArchSpec, ...], reg: Registry) -> list[Finding]:
    """Every decision evaluated once for all archs, then judged for each target arch."""
    out: list[Finding] = []
    said: set[tuple[str, str, int, str, str]] = set()  # a nested conditional read twice says it once

    def keep(finding: Finding) -> None:
        key = (finding.rule, finding.path, finding.line, finding.arch, finding.message)
        if key not in said:
            said.add(key)
            out.append(finding)

    for f in files:
        place = placement(f.path)
        found = [(d, reached(d, reg.context(d.scope, f))) for d in f.decisions]
        _introduce(found)
        _checked(found, f.checks)
        _called_past_refusals(found, f, reg)
        for decision, r in found:
            if r is None:
                continue
            _narrow(r, found)
            here = dict(place, where="backward") if _for_backward(decision) else place
            for arch in archs:
                for rule in DECISION_RULES:
                    finding = rule.check(r, f, arch, here, reg)
                    if finding is not None:
                        keep(finding)
                        break  # one finding per decision and arch
                # what the target's own arm refuses of the call is news beside any of those
                for finding in branch_refuses_feature.check(r, f, arch, here):
                    keep(finding)
    return out


_BACKWARD = re.compile(r"(?:^|[._])(?:\w*_bwd\w*|backward\w*)(?:$|\.)", re.I)


def _for_backward(d: Decision) -> bool:
    """Does the decision sit in a backward pass (`_flash_attn_bwd`), or set a flag named for one
    (TE's `self.use_FAv2_bwd = ... and cc == (9, 0)`)? Training code, which no server runs."""
    if _BACKWARD.search(d.context):
        return True
    flag = outcomes.SETS_FLAG.match(d.arms[0].summary) if d.kind == "flag" and d.arms else None
    return flag is not None and _BACKWARD.search(flag[1]) is not None


def _introduce(found: list[tuple[Decision, Reached | None]]) -> None:
    """Each decision learns the others of its function (`Reached.peers`)."""
    by_context: dict[str, list[Reached]] = {}
    for d, r in found:
        if r is not None and d.context:
            by_context.setdefault(d.context, []).append(r)
    for group in by_context.values():
        if len(group) > 1:
            for r in group:
                r.peers = [p for p in group if p is not r]


_CONTROL = {"chain", "guards", "assert"}  # decisions whose arms are blocks of statements (a flag's are not)


def _checked(found: list[tuple[Decision, Reached | None]], checks: list[tuple[str, int, int, str]]) -> None:
    """Archs a checking call turns away never reach what follows it in the caller: a function of
    the module called at the top of a function (`get_mla_decode_arch(cc)`, `n, m =
    get_arch_constraints(cc)`) whose decision raises for an arch, whatever else it asks, leaves
    that arch nowhere from the call on (the call's own flag, `n, m` set, is judged in the callee)."""
    if not checks:
        return
    by_context = _by_context(found)
    for caller, line, last, callee in checks:
        raising: set[str] = set()
        for d, g in by_context.get(callee, []):
            if d.kind in _CONTROL:
                raising |= {cc for cc, arms in g.reach.items() if arms and all(_errs(d, i) for i in arms)}
        for d, g in by_context.get(caller, []) if raising else []:
            if line <= d.line <= last:
                for cc in raising:
                    g.reach[cc] = ()


def _called_past_refusals(found: list[tuple[Decision, Reached | None]], f: FileFacts, reg: Registry) -> None:
    """Archs that never reach a call of a private function never reach its decisions: each call
    of it the module makes (judging.callsites) sits past a refusal of theirs, in an arm they do not
    take, or in a private function of the same kind (FlashInfer's `_pick_tile`, called only past
    `if major != 10: raise` two calls up). The refusal is where they are turned away."""
    if not f.callers:
        return
    by_context = _by_context(found)
    imported = reg.called_from_outside(f.module) & set(f.callers)
    for context, group in by_context.items():
        name = context.rsplit(".", 1)[-1]
        if name not in f.callers or name in imported:
            continue
        for cc in {cc for _, g in group for cc in g.reach}:
            if not _reached_by(name, cc, f.callers, by_context, imported, set()):
                for _, g in group:
                    g.reach[cc] = ()


def _reached_by(
    name: str,
    cc: str,
    callers: dict[str, tuple[tuple[str, int], ...]],
    by_context: dict[str, list[tuple[Decision, Reached]]],
    imported: set[str],
    seen: set[str],
) -> bool:
    """May arch `cc` reach a call of the private function `name`?"""
    if name not in callers or name in imported or name in seen:
        return True  # callers it cannot see, or a cycle: assume it may
    seen = seen | {name}
    for caller, line in callers[name]:
        if not caller:
            return True  # called at module level
        if _passes(by_context.get(caller, []), line, cc) and _reached_by(
            caller.rsplit(".", 1)[-1], cc, callers, by_context, imported, seen
        ):
            return True
    return False


def _passes(decisions: list[tuple[Decision, Reached]], line: int, cc: str) -> bool:
    """Does arch `cc` get to `line` of the function past every decision above it there?"""
    for d, g in decisions:
        if d.kind not in _CONTROL or d.line >= line or cc not in g.reach:
            continue
        arm = _arm_holding(d, line)
        if arm is not None and arm not in g.reach[cc]:
            return False
    return True


def _by_context(found: list[tuple[Decision, Reached | None]]) -> dict[str, list[tuple[Decision, Reached]]]:
    """The evaluated decisions of each function (qualname)."""
    out: dict[str, list[tuple[Decision, Reached]]] = {}
    for d, g in found:
        if g is not None:
            out.setdefault(d.context, []).append((d, g))
    return out


def _arm_holding(d: Decision, line: int) -> int | None:
    """The arm of a control decision whose statements hold `line` (for guard clauses, the rest of
    the block past them counts as their last arm); None when none does."""
    for i, a in enumerate(d.arms):
        if a.body[0] <= line <= a.body[1]:
            return i
    if d.kind == "guards" and d.rest[0] <= line <= d.rest[1]:
        return len(d.arms) - 1
    return None


def _errs(d: Decision, arm: int) -> bool:
    return d.arms[arm].action == "error"


def _narrow(r: Reached, found: list[tuple[Decision, Reached | None]]) -> None:
    """Archs an enclosing decision sends elsewhere never reach this one: an earlier guard clause
    turned them away (`if cap not in (...): raise` above it), or the decision sits in an arm
    they do not take (an assert in the else of `if is_sm100 or is_sm120:`), or an assert above it
    in the same block failed for them."""
    line = r.decision.line
    for d, g in found:
        if g is None or g is r or d.line >= line or d.kind not in _CONTROL:
            continue
        arm = _arm_holding(d, line)
        for cc, arms in g.reach.items() if arm is not None else ():
            if arm not in arms:
                r.reach[cc] = ()
