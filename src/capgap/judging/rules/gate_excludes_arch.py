"""gate-excludes-arch: the target reaches a generic, fallback or error outcome of a decision while
a sibling arch reaches a positive outcome of its own.

Medium: the target loses a path the evidence says it could run. High: the target's only outcome
is an error (a raise, a failed assert) where the sibling's is not. Low (an expected gap): the
sibling's path needs a feature the target lacks, named with what it was read from. No finding
when the target has an arm of its own, or when what it misses is a restriction (a raise, a
refusal, a downgrade): being left out of that is good for it.
"""

from __future__ import annotations

from typing import Any

from capgap.arch import ArchFacts, ArchSpec, all_facts
from capgap.findings import Finding
from capgap.judging import evidence
from capgap.judging.reach import Reached, pure
from capgap.judging.records import FileFacts

RULE_ID = "gate-excludes-arch"


def siblings(target: ArchFacts) -> list[ArchFacts]:
    """The archs whose own paths a target may lack: Ampere and newer, other than itself."""
    return [a for a in all_facts().values() if a.major >= 8 and a.cc != target.cc]


def _generic(r: Reached, arm: int, target: ArchFacts) -> bool:
    """An outcome the target shares with what older GPUs get, or a fallback, an error, nothing."""
    a = r.decision.arms[arm]
    if a.test is None or a.action != "positive":
        return True
    older = [x for x in all_facts().values() if x.major < target.major and x.major >= 7]
    return any(arm in r.reach[x.cc] for x in older)


def check(r: Reached, f: FileFacts, arch: ArchSpec, place: dict[str, str]) -> Finding | None:
    d, target = r.decision, arch.facts
    if d.kind == "return" and pure(r, 0):
        return None  # a predicate's definition: its callers hold the decisions
    mine = r.reach[target.cc]
    if not all(_generic(r, i, target) for i in mine):
        return None  # the target has an outcome of its own
    # where the target is turned away (an error, a refusal), carrying on untouched is the good outcome
    refused = all(d.arms[i].action in {"error", "reject"} for i in mine)
    good = {"positive", "nothing"} if refused else {"positive"}
    missed: dict[int, list[str]] = {}
    for sib in siblings(target):
        for i in r.reach[sib.cc]:
            # the else (or the rest after guards) is nobody's own path, unless the target is turned away
            own = d.arms[i].test is not None or refused
            if i not in mine and own and d.arms[i].action in good:
                missed.setdefault(i, []).append(sib.cc)
    if not missed:
        return None
    arm_i = min(missed)
    arm, sibs = d.arms[arm_i], missed[arm_i]
    lack = [n for n in evidence.lacking(arm.needs, target) if _someone_has(n, sibs)]
    instead = "; ".join(dict.fromkeys(d.arms[i].summary for i in mine)) or "nothing"
    decider = (
        arm_i if arm.test is not None else max((i for i in mine if d.arms[i].test is not None), default=0)
    )
    names = r.names(decider) or r.names(0)
    symbol = names[0] if names else d.source[:60]
    taken = arm.summary
    extra: dict[str, Any] = {
        "module": f.module,
        "context": d.context,
        "decision": d.kind,
        "admits": r.archs_reaching(arm_i),
        "needs": [evidence.describe(n) for n in arm.needs],
        "instead": instead,
        **place,
    }
    message = f"{symbol} leaves {arch.cc} out: {', '.join(sibs)} {taken}, {arch.cc} {instead}"
    if lack:
        need = evidence.describe(lack[0])
        extra["evidence"] = arm.evidence[arm.needs.index(lack[0])]
        severity = "low"
        consequence = (
            f"expected: that path needs {need} (read from {extra['evidence']}), which {arch.cc} lacks; "
            f"{arch.cc} {instead}"
        )
    elif all(d.arms[i].action == "error" for i in mine):
        severity = "high"
        consequence = f"on {arch.cc} this {instead}, where {', '.join(sibs)} {taken}"
    else:
        severity = "medium"
        consequence = f"{arch.cc} never gets this path ({taken}); it {instead} instead"
    line = d.arms[decider].line if d.arms[decider].test is not None else d.line
    return Finding(
        rule=RULE_ID,
        severity=severity,
        path=f.path,
        line=line,
        symbol=symbol,
        present=tuple(sibs),
        missing=arch.cc,
        consequence=consequence,
        message=message,
        arch=arch.cc,
        source=d.source if line == d.line else _line_source(f, line, d.source),
        extra=extra,
    )


def _someone_has(need: tuple[str, ...], ccs: list[str]) -> bool:
    facts = all_facts()
    return any(facts[cc].has(feat) for cc in ccs for feat in need)


def _line_source(f: FileFacts, line: int, fallback: str) -> str:
    return fallback
