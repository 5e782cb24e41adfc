"""Judge host-side C++ dispatch decisions (`native.host`) per arch, as the Python side judges its
gates: a sibling arch (Hopper and newer, another generation) surely takes an arm of real code the
target never takes, while the target gets an error, nothing, or what older GPUs get too ->
`gate-excludes-arch`. Low (expected) when that arm, or its function, needs what the target lacks.
A call to an arch helper of the tree (`isSm90OrLater()`, `use_x(sm)`) is evaluated through it
(`native.helpers`), and a condition that names the target there (`isSm120Family()`) is its own.
Each decision is first judged for `gate-admits-unsupported` (`native.hostadmits`).
"""

from __future__ import annotations

import re

from capgap.arch import ArchFacts, ArchSpec, all_facts
from capgap.findings import Finding
from capgap.judging import evidence, newer
from capgap.judging.reach import arms_taken
from capgap.judging.rules import gate_excludes_arch
from capgap.native import bodies, expr, helpers, hostadmits
from capgap.native.helpers import HelperTable
from capgap.native.host import CODE, ERROR, HostDecision

_NUMBER = re.compile(r"\b\d{1,4}\b")
_FIELD = re.compile(r"\b[A-Za-z_]\w*(?:\.|->)(major|minor)\b")
_CALL = re.compile(r"\b(?:\w+::)*(get_?sm_?version|getSMVersion|get_sm)\s*\([^()]*\)", re.I)
_ARCH_VAR = re.compile(r"^(?:sm_?version|smversion|sm_?ver|sm_?arch|sm|arch|cc)$", re.I)


class _Arch(expr.Resolver):
    """Names as one arch sees them: arch variables, `major` / `minor`, and helpers called."""

    def __init__(
        self, facts: ArchFacts, scale: int, table: HelperTable | None, path: str, depth: int = 0
    ) -> None:
        self.facts, self.scale, self.table, self.path, self.depth = facts, scale, table, path, depth

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
        if not self.table or self.depth >= _DEPTH:
            return None
        found = self.table.find(name, len(args), self.path)
        if found is None:
            return None
        where, h = found  # the helpers it calls resolve from its own file
        inner = _Arch(self.facts, h.scale, self.table, where, self.depth + 1)
        return helpers.evaluate(h, args, inner.text)

    def text(self, text: str) -> expr.Value:
        return expr.evaluate(expr.parse(_prepared(text)), self)


_DEPTH = 6  # helpers calling helpers, at most this deep
_QUALIFIED = re.compile(r"\b(?:\w+::)+(?=\w)")
_OBJECT = re.compile(r"\b\w+\s*(?:\.|->)\s*(?=\w+\s*\()")


def _prepared(cond: str) -> str:
    cond = _FIELD.sub(lambda m: m[1], cond)
    cond = _CALL.sub("SMVERSION", cond)
    return _OBJECT.sub("", _QUALIFIED.sub("", cond)).strip()


def reach(
    d: HostDecision, facts: ArchFacts, table: HelperTable | None = None, path: str = ""
) -> tuple[int, ...]:
    """The arms an arch may take (-1: none); three-valued as for preprocessor groups."""
    scale = 10 if any(int(n) >= 200 for a in d.arms for n in _NUMBER.findall(a.cond)) else 1
    env = _Arch(facts, scale, table, path)
    return arms_taken((expr.answer(env.text(arm.cond)) for arm in d.arms), none=-1)


def findings(
    path: str,
    decisions: list[HostDecision],
    archs: tuple[ArchSpec, ...],
    place: dict[str, str],
    table: HelperTable | None = None,
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
            by_arch = {cc: reach(d, f, table, path) for cc, f in facts.items() if f.major >= 6}
            mine = set(by_arch[target.cc])
            own = _Own(d, target, table, path)
            if d.kind == "chain" and _guard_for(d, mine, own):
                turned_away.setdefault(d.function, d.line)
            admitted = hostadmits.check(path, d, arch, by_arch, place)
            if admitted is not None:
                out.append(admitted)
                continue
            missed: dict[int, list[str]] = {}
            for s in sibs:
                r = by_arch[s.cc]
                if len(r) == 1 and r[0] >= 0 and r[0] not in mine and d.arms[r[0]].body == CODE:
                    missed.setdefault(r[0], []).append(s.cc)
            if not missed:
                continue
            first = min(facts[cc].number for owners in missed.values() for cc in owners)
            older = [f.cc for f in facts.values() if f.major >= 7 and f.number < first]
            if not all(_fallback(d, j, own, older, by_arch) for j in mine):
                continue
            found = _finding(path, d, arch, missed, mine, place)
            if found is not None:
                out.append(found)
    return out


class _Own:
    """Does an arm's condition name the target (`sm_version == 120`, `isSm120()`, or a helper
    whose conditions do)?"""

    def __init__(self, d: HostDecision, target: ArchFacts, table: HelperTable | None, path: str) -> None:
        self.d, self.target, self.table, self.path = d, target, table, path

    def __call__(self, j: int) -> bool:
        cond = self.d.arms[j].cond
        text = self.table.expanded(cond, self.path) if self.table else cond
        return str(self.target.number) in text or f"== {self.target.major}" in text


def _guard_for(d: HostDecision, mine: set[int], own: _Own) -> bool:
    """Does the target surely take an arm of its own that returns (or throws) out of the function?"""
    if len(mine) != 1 or min(mine) < 0:
        return False
    arm = d.arms[min(mine)]
    return own(min(mine)) and re.search(r"\breturn\b|\bthrow\b", arm.text) is not None


def _fallback(
    d: HostDecision, j: int, own: _Own, older: list[str], by_arch: dict[str, tuple[int, ...]]
) -> bool:
    """Is the target's arm `j` an error, nothing, or what GPUs older than the owners get too?"""
    if j < 0 or d.arms[j].body != CODE:
        return True
    if own(j):
        return False  # the target's own arm
    return any(j in by_arch[cc] for cc in older)


# A predicate's name (`is_sm90`, `bool use_sm100_path`) says which arch it asks about, not what the
# function's code runs: blanked (length kept) before the function is read for needs
_PREDICATES = re.compile(r"\b(?:is|use|has|can|should|supports?|enable)_\w*?sm_?\d{2,3}[a-z]?\w*", re.I)


def _blank(hit: re.Match[str]) -> str:
    return " " * len(hit[0])


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
    for text, where in ((arm.text, ""), (_PREDICATES.sub(_blank, d.context), f"in {d.function}")):
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
    elif written := newer.written_for_newer([cc for o in missed.values() for cc in o], target):
        severity = "low"  # `if (sm >= 120)` on a B200: the later GPUs' path
        extra["evidence"] = written
        consequence = f"expected: a path {written}; {target.cc} gets {instead}"
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
