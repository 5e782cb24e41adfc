"""Judge host-side C++ dispatch decisions (`native.host`) per arch, as the Python side judges its
gates: a sibling arch (Hopper and newer, another generation) surely takes an arm of real code the
target never takes, while the target gets an error, nothing, or what older GPUs get too ->
`gate-excludes-arch`. Low (expected) when that arm, or its function, needs what the target lacks.
"""

from __future__ import annotations

import re

from capgap.arch import ArchFacts, ArchSpec, all_facts
from capgap.findings import Finding
from capgap.judging import evidence
from capgap.judging.reach import arms_taken
from capgap.judging.rules import gate_excludes_arch
from capgap.native import bodies, expr
from capgap.native.host import CODE, ERROR, HostDecision

_NUMBER = re.compile(r"\b\d{1,4}\b")
_FIELD = re.compile(r"\b[A-Za-z_]\w*(?:\.|->)(major|minor)\b")
_CALL = re.compile(r"\b(?:\w+::)*(get_?sm_?version|getSMVersion|get_sm)\s*\([^()]*\)", re.I)
_ARCH_VAR = re.compile(r"^(?:sm_?version|smversion|sm_?ver|sm_?arch|sm|arch|cc)$", re.I)


class _Arch(expr.Resolver):
    def __init__(self, facts: ArchFacts, scale: int) -> None:
        self.facts, self.scale = facts, scale

    def defined(self, name: str) -> expr.Value:
        return None

    def value(self, name: str) -> expr.Value:
        if name.lower() == "major":
            return self.facts.major
        if name.lower() == "minor":
            return self.facts.minor
        if _ARCH_VAR.match(name) or name == "SMVERSION":
            return self.facts.number * self.scale
        return {"true": 1, "false": 0}.get(name)

    def call(self, name: str, args: tuple[str, ...]) -> expr.Value:
        return None


def _prepared(cond: str) -> str:
    cond = _FIELD.sub(lambda m: m[1], cond)
    return _CALL.sub("SMVERSION", cond).strip()


def reach(d: HostDecision, facts: ArchFacts) -> tuple[int, ...]:
    """The arms an arch may take (-1: none); three-valued as for preprocessor groups."""
    scale = 10 if any(int(n) >= 200 for a in d.arms for n in _NUMBER.findall(a.cond)) else 1
    env = _Arch(facts, scale)
    answers = (expr.answer(expr.evaluate(expr.parse(_prepared(arm.cond)), env)) for arm in d.arms)
    return arms_taken(answers, none=-1)


def findings(
    path: str, decisions: list[HostDecision], archs: tuple[ArchSpec, ...], place: dict[str, str]
) -> list[Finding]:
    out: list[Finding] = []
    facts = all_facts()
    for arch in archs:
        target = arch.facts
        sibs = [s for s in gate_excludes_arch.siblings(target) if s.major != target.major]
        turned_away: dict[str, int] = {}  # function -> line of a guard that took the target elsewhere
        for d in decisions:
            if d.function in turned_away and d.line > turned_away[d.function]:
                continue  # an earlier `if (sm_version == 120) return ...;` here decided for the target
            mine = set(reach(d, target))
            if d.kind == "chain" and _guard_for(d, mine, target):
                turned_away.setdefault(d.function, d.line)
            missed: dict[int, list[str]] = {}
            for s in sibs:
                r = reach(d, s)
                if len(r) == 1 and r[0] >= 0 and r[0] not in mine and d.arms[r[0]].body == CODE:
                    missed.setdefault(r[0], []).append(s.cc)
            if not missed:
                continue
            first = min(facts[cc].number for owners in missed.values() for cc in owners)
            older = [f for f in facts.values() if f.major >= 7 and f.number < first]
            if not all(_fallback(d, j, target, older) for j in mine):
                continue
            found = _finding(path, d, arch, missed, mine, place)
            if found is not None:
                out.append(found)
    return out


def _guard_for(d: HostDecision, mine: set[int], target: ArchFacts) -> bool:
    """Does the target surely take an arm of its own that returns (or throws) out of the function?"""
    if len(mine) != 1 or min(mine) < 0:
        return False
    arm = d.arms[min(mine)]
    own = str(target.number) in arm.cond or f"== {target.major}" in arm.cond
    return own and re.search(r"\breturn\b|\bthrow\b", arm.text) is not None


def _fallback(d: HostDecision, j: int, target: ArchFacts, older: list[ArchFacts]) -> bool:
    """Is the target's arm `j` an error, nothing, or what GPUs older than the owners get too?"""
    if j < 0 or d.arms[j].body != CODE:
        return True
    if str(target.number) in d.arms[j].cond or f"== {target.major}" in d.arms[j].cond:
        return False  # the target's own arm
    return any(j in reach(d, f) for f in older)


def _finding(
    path: str,
    d: HostDecision,
    arch: ArchSpec,
    missed: dict[int, list[str]],
    mine: set[int],
    place: dict[str, str],
) -> Finding | None:
    target = arch.facts
    arm_i = min(missed)
    arm, owners = d.arms[arm_i], missed[arm_i]
    lack, seen = [], ""
    for text, where in ((arm.text, ""), (d.context, f"in {d.function}")):
        needs, wheres = bodies.needs(text.encode(), arm.line if not where else d.line, where)
        hits = [(n, w) for n, w in zip(needs, wheres, strict=True) if evidence.lacking([n], target)]
        if hits:
            lack, seen = [hits[0][0]], hits[0][1]
            break
    errors = all(j >= 0 and d.arms[j].body == ERROR for j in mine)
    instead = "an error" if errors else "nothing (no arm)" if mine == {-1} else "the fallback"
    symbol = d.function or arm.cond[:60]
    extra = {"decision": f"host-{d.kind}", "condition": arm.cond[:200], "function": d.function, **place}
    if lack:
        severity = "low"
        extra["evidence"] = seen
        consequence = (
            f"expected: that path needs {evidence.describe(lack[0])} (read from {seen}), which "
            f"{target.cc} lacks; {target.cc} gets {instead}"
        )
    else:
        severity = "medium"
        consequence = (
            f"{target.cc} gets {instead} here, where {', '.join(owners)} take the path at line {arm.line}"
        )
    if place.get("where", "runtime") != "runtime":
        severity = "low"
    message = (
        f"{symbol} leaves {target.cc} out: {', '.join(owners)} take line {arm.line}, {target.cc} {instead}"
    )
    return Finding(
        rule=gate_excludes_arch.RULE_ID,
        severity=severity,
        path=path,
        line=arm.line,
        symbol=symbol,
        present=tuple(owners),
        missing=target.cc,
        consequence=consequence,
        message=message,
        arch=target.cc,
        source=arm.source,
        extra=extra,
    )
