"""branch-refuses-feature: the target has its own arm of an arch decision, and a statement of that
arm refuses something of the call (an `assert`, or `if <test>: raise`) that the arms GPUs of
other generations take let through: flash-attn-4's `elif arch // 10 == 12:` forward asserts
`page_table is None` ("Paged KV not supported on SM 12.0 in this PR") where the SM90 and SM100
arms page. The target has a path, but not that feature of it.

Medium: a feature of a path fails on the target (a paged cache, split-KV, a score_mod), which a
default launch need not ask for. Low (expected) where the refusal's own words name something the
target lacks and the accepting archs have (tcgen05, wgmma, multicast), and in tests, benchmarks,
examples and backward passes. A refusal every accepting arm also makes, in any spelling of the
same test, is no loss; nor is one in an arm a GPU of another generation takes too (a shared path's
limit, not the target's own), nor one only newer generations' arms let through (an older GPU's
path that newer kernels outgrew: FA4's SM80 arm refuses paged KV, which only SM90+ arms take).
"""

from __future__ import annotations

from capgap.arch import ArchSpec
from capgap.findings import Finding
from capgap.judging import evidence
from capgap.judging.reach import Reached
from capgap.judging.records import Decision, FileFacts
from capgap.judging.refusals import parse
from capgap.judging.rules.gate_excludes_arch import facts_of, siblings

RULE_ID = "branch-refuses-feature"

_ACCEPTING = {"positive", "nothing"}  # an arm that errs for every call refuses more than a feature


def check(r: Reached, f: FileFacts, arch: ArchSpec, place: dict[str, str]) -> list[Finding]:
    d, target = r.decision, arch.facts
    mine = r.reach.get(target.cc, ())
    if d.kind != "chain" or len(mine) != 1 or r.value(mine[0], target.cc) is not True:
        return []  # the target's arm must be certain, and be a tested one
    own = mine[0]
    arm = d.arms[own]
    if not arm.refusals or any(facts_of(cc).major != target.major for cc in r.archs_reaching(own)):
        return []
    accepting: dict[int, list[str]] = {}
    for sib in siblings(target):
        if sib.major == target.major:
            continue
        for i in r.reach.get(sib.cc, ()):
            if i != own and d.arms[i].action in _ACCEPTING:
                accepting.setdefault(i, []).append(sib.cc)
    out: list[Finding] = []
    for refusal in arm.refusals:
        line, test, words = parse(refusal)
        archs = sorted(
            {cc for i, ccs in accepting.items() if not _refuses_too(d, i, test) for cc in ccs},
            key=lambda cc: facts_of(cc).number,
        )
        # a feature only newer generations' arms take is theirs, never carried back to an older
        # GPU's path (FA4's SM80 arm without paged KV, judged for 8.9): the target's own arm is a
        # port that left behind what an older generation has only when one of them takes it
        if any(facts_of(cc).major < target.major for cc in archs):
            out.append(_finding(d, own, f, arch, place, line, test, words, archs))
    return out


def _refuses_too(d: Decision, arm: int, test: str) -> bool:
    return any(parse(other)[1] == test for other in d.arms[arm].refusals)


def _finding(
    d: Decision,
    own: int,
    f: FileFacts,
    arch: ArchSpec,
    place: dict[str, str],
    line: int,
    test: str,
    words: str,
    archs: list[str],
) -> Finding:
    target = arch.facts
    said = f" ('{words}')" if words else ""
    needs, seen = evidence.needs_with_evidence(words.lower())
    owners = [facts_of(cc) for cc in archs]
    lacked = [
        (need, word)
        for need, word in zip(needs, seen, strict=True)
        if evidence.lacking([need], target) and evidence.had_by(need, owners)
    ]
    severity = "medium"
    consequence = (
        f"{target.cc} has a path of its own here, but only for calls with `{test}`; "
        f"the arms of {', '.join(archs)} take the others"
    )
    extra: dict[str, object] = dict(place)
    # what a call asking for more gets on the target: the refusal, in its own words where it has some
    extra["instead"] = f"fails `{test}`" + (f": '{words}'" if words else "")
    if lacked:
        severity = "low"
        extra["evidence"] = [word for _, word in lacked]
        consequence += f"; the refusal names what {target.cc} lacks: {', '.join(w for _, w in lacked)}"
    if place.get("where", "runtime") != "runtime":
        severity = "low"
    message = (
        f"{target.cc}'s own branch fails calls unless `{test}`{said}; "
        f"the branches {', '.join(archs)} take have no such check"
    )
    return Finding(
        rule=RULE_ID,
        severity=severity,
        path=f.path,
        line=line,
        symbol=test,
        present=tuple(archs),
        missing=arch.cc,
        consequence=consequence,
        message=message,
        arch=arch.cc,
        source=d.arms[own].source,  # the branch that is the target's own
        extra=extra,
        basis=f"{d.context}\t{test}",
    )
