"""Judge every arch-dependent preprocessor group for each target arch, as nvcc would compile it.

For each group the target's three variants (sm_120, sm_120a, sm_120f) and each sibling arch's
variants (Hopper and newer, other generations) are run through `macros.Table`. A sibling that
surely takes an arm of real code the target takes in none of its variants, while what the target
takes is a fallback (nothing, an empty body, a trap, an error, or a path older GPUs get too), is
a finding: `kernel-body-missing-arch` when the target's kernel (or device function) body is
empty or traps, else `gate-excludes-arch`. Severity as on the Python side: low (expected) when
the path needs an instruction set the target lacks (evidence from the arm, its function, or the
file), medium otherwise; low for tests, benchmarks, examples and vendored libraries. Each group
is first judged for `gate-admits-unsupported` (`native.admits`: the target let into tcgen05 or
wgmma code beside a sibling that runs it); a group that is one is not judged again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from capgap.arch import ArchFacts, ArchSpec, all_facts
from capgap.boundedread import read_prefix
from capgap.findings import Finding
from capgap.judging import evidence, newer
from capgap.judging.rules import gate_excludes_arch, kernel_body_missing_arch
from capgap.judging.where import VENDORED_LIBRARIES, placement
from capgap.native import admits, bodies
from capgap.native.envs import Env, env, variants
from capgap.native.macros import NO_ARM, NOT_REACHED, Table
from capgap.native.records import CODE, EMPTY, ERROR, TRAP, Arm, Group, NativeFacts

# vendored headers: read for their macros, their own gates reported only with --all
VENDORED_DIRS = VENDORED_LIBRARIES | {"cute", "3rdparty", "third_party", "thirdparty"}
_ARM_BYTES, _FUNC_BYTES, _FILE_BYTES = 32 << 10, 64 << 10, 4 << 20  # enough code to say what it needs
Needs = tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]
_IDENT = re.compile(r"[A-Za-z_]\w*")
_OUTCOME = {EMPTY: "an empty body", TRAP: "a __trap()", ERROR: "an #error / failing static_assert"}


def where(path: str) -> dict[str, str]:
    dirs = path.lower().split("/")[:-1]
    if VENDORED_DIRS.intersection(dirs):
        return {"where": "vendored"}
    return placement(path)


class _Archs:
    """The environments one target arch is judged with."""

    def __init__(self, arch: ArchSpec) -> None:
        target = arch.facts
        self.arch = arch
        self.target = [env(target, v) for v in ("", "a", "f")]
        sibs = [s for s in gate_excludes_arch.siblings(target) if s.major != target.major]
        self.siblings = [(s, [env(s, v) for v in variants(s)]) for s in sibs]
        self.all: list[tuple[ArchFacts, list[Env]]] = [
            (f, [env(f, v) for v in variants(f)]) for f in all_facts().values() if f.major >= 6
        ]


def findings(files: list[NativeFacts], archs: tuple[ArchSpec, ...], vendored: bool) -> list[Finding]:
    table = Table(files)
    out: list[Finding] = []
    texts: dict[int, _Texts] = {}
    for arch in archs:
        envs = _Archs(arch)
        for fi, f in enumerate(files):
            place = where(f.path)
            if place["where"] == "vendored" and not vendored:
                continue
            for gi, g in enumerate(f.groups):
                if not g.archish:
                    continue
                text = texts.setdefault(fi, _Texts(f))
                try:
                    found = admits.check(table, fi, gi, g, f, envs, place, text.data) or _judge(
                        table, fi, gi, g, f, envs, place, text
                    )
                except RecursionError:  # a pathological chain of macros: this gate is left unjudged
                    continue
                if found is not None:
                    out.append(found)
            if fi in texts:  # what the file's arms need stays; its bytes go (a scan read them all)
                texts[fi].release()
    return out


def _judge(
    table: Table, fi: int, gi: int, g: Group, f: NativeFacts, a: _Archs, place: dict[str, str], texts: _Texts
) -> Finding | None:
    mine_by = {e.name: table.reach(fi, gi, e) for e in a.target}
    if not any(mine_by.values()) or any(NOT_REACHED in r for r in mine_by.values()):
        return None  # the target does not reach the group (judged at the outer one), or may not
    mine = {i for r in mine_by.values() for i in r}
    missed: dict[int, list[str]] = {}
    for sib, envs in a.siblings:
        for e in envs:
            r = table.reach(fi, gi, e)
            took = r[0] if len(r) == 1 else NO_ARM
            if took >= 0 and took not in mine and g.arms[took].body == CODE:
                owners = missed.setdefault(took, [])
                if sib.cc not in owners:
                    owners.append(sib.cc)
    if not missed:
        return None
    first_owner = min(all_facts()[cc].number for owners in missed.values() for cc in owners)
    if not all(_fallback(table, fi, gi, g, j, a, first_owner) for j in mine):
        return None
    target = a.arch.facts

    def lacking(i: int) -> list[tuple[str, tuple[str, ...]]]:
        for needs, seen in texts.needs(g, i):
            hit = [
                (w, n)
                for n, w in zip(needs, seen, strict=True)
                if evidence.lacking([n], target) and gate_excludes_arch.someone_has(n, missed[i])
            ]
            if hit:
                return hit
        return []

    def special_of(i: int) -> str:  # a one-chip arm (`#if __CUDA_ARCH__ == 900`) other GPUs go without
        if _EXACT.match(g.arms[i].cond.strip()) is None:
            return ""
        return _special_case(table, fi, gi, g, i, missed[i], mine, a)

    # the arm to name: one with no evidence that the target lacks what it needs, and no special case
    arm_i = min(missed, key=lambda i: (bool(lacking(i)), bool(special_of(i)), i))
    arm, owners, lack = g.arms[arm_i], missed[arm_i], lacking(arm_i)
    outcomes = {name: _describe(g, r) for name, r in mine_by.items() if r}
    instead = "; ".join(dict.fromkeys(outcomes.values()))
    kinds = {g.arms[j].body if j >= 0 else EMPTY for j in mine}
    fn = g.function
    body_lost = fn is not None and (kinds <= {TRAP, ERROR} or (kinds <= {EMPTY} and g.whole_body))
    rule = kernel_body_missing_arch.RULE_ID if body_lost else gate_excludes_arch.RULE_ID
    symbol = fn.name if fn is not None else next(iter(_IDENT.findall(arm.cond)), arm.cond[:60])
    what = f"{fn.kind} {fn.name}" if fn is not None else "this code"
    taken = f"the code under line {arm.line}"
    extra: dict[str, Any] = {
        "decision": "preprocessor",
        "condition": arm.cond[:200],
        "admits": [e.name for _, envs in a.all for e in envs if table.reach(fi, gi, e) == (arm_i,)],
        "compiles": outcomes,
        "needs": [evidence.describe(n) for n in next(texts.needs(g, arm_i))[0]],
        **place,
    }
    if fn is not None:
        extra["function"] = {"kind": fn.kind, "name": fn.name, "line": fn.line}
    same = _same_values(texts, g, arm_i, mine)
    if same:
        extra["equivalent"] = same
    if lack:
        seen, need = lack[0]
        extra["evidence"] = seen
        severity = "low"
        consequence = (
            f"expected: that path needs {evidence.describe(need)} (read from {seen}), which "
            f"{target.cc} lacks; {target.cc} compiles {instead}"
        )
    else:
        severity = "medium"
        consequence = (
            f"{target.cc} compiles {instead} for {what}, where {', '.join(owners)} compile {taken}; "
            f"nothing in that code needs what {target.cc} lacks"
        )
    pdl = not lack and not same and _only_pdl(texts, g.arms[arm_i])
    if pdl:
        severity = "low"
        consequence = (
            f"{target.cc} loses only programmatic dependent launch (griddepcontrol, sm_90+ PTX) "
            f"here: launch overlap, not a path; {target.cc} compiles {instead}"
        )
    if same and not lack:
        severity = "low"
        consequence = (
            f"{target.cc} computes the same values ({same}) another way (the fallback under line "
            f"{g.arms[min(i for i in mine if i >= 0)].line}): a per-arch micro-optimisation, no lost path"
        )
    special = special_of(arm_i) if severity == "medium" and not body_lost else ""
    written = (
        ""
        if severity != "medium" or body_lost
        else newer.written_for_newer([cc for owners_of in missed.values() for cc in owners_of], target)
    )
    if written:
        severity = "low"  # `#if __CUDA_ARCH__ >= 1200` compiled for a B200: the later GPUs' code
        extra["evidence"] = written
        consequence = f"expected: code {written}; {target.cc} compiles {instead}"
    elif special:
        severity = "low"
        consequence = (
            f"a special case of {', '.join(owners)}, which {special} goes without as {target.cc} does: "
            f"no path the others share is lost; {target.cc} compiles {instead}"
        )
    if place.get("where", "runtime") != "runtime":
        severity = "low"
    message = f"{symbol} leaves {target.cc} out: {', '.join(owners)} compile {taken}, {target.cc} {instead}"
    return Finding(
        rule=rule,
        severity=severity,
        path=f.path,
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


class _Texts:
    """What a file's arms, functions and whole text need, read from the file when first asked."""

    def __init__(self, f: NativeFacts) -> None:
        self.f = f
        self._data: bytes | None = None
        self._memo: dict[tuple[str, int], Needs] = {}

    def release(self) -> None:
        """Let the file's bytes go (read again if a later arch asks what is not remembered)."""
        self._data = None

    def data(self) -> bytes:
        if self._data is None:
            try:
                self._data = read_prefix(self.f.source, _FILE_BYTES)[0] if self.f.source else b""
            except OSError:
                self._data = b""
        return self._data

    def needs(self, g: Group, i: int) -> Iterator[Needs]:
        """The needs of arm `i`'s code, of the function it is in, of the file: in that order."""
        arm = g.arms[i]
        yield self._get(
            "arm",
            arm.body_start,
            lambda d: bodies.needs(
                bodies.code(d[arm.body_start : min(arm.body_end, arm.body_start + _ARM_BYTES)]), arm.line, ""
            ),
        )  # the text starts at the directive's newline: its lines count from the directive
        fn = g.function
        if fn is not None:
            yield self._get("function", fn.start, lambda d: bodies.needs(
                bodies.code(d[fn.start : fn.start + _FUNC_BYTES]), fn.line, f"in {fn.name}"))  # fmt: skip
        yield self._get("file", 0, lambda d: bodies.needs(bodies.code(d), 1, "in this file"))

    def _get(self, kind: str, at: int, compute: Callable[[bytes], Needs]) -> Needs:
        key = (kind, at)
        if key not in self._memo:
            self._memo[key] = compute(self.data())
        return self._memo[key]


def _only_pdl(texts: _Texts, arm: Arm) -> bool:
    """Is a short arm only programmatic dependent launch (`griddepcontrol.wait` / `.launch_dependents`)?"""
    if arm.body_end - arm.body_start > _SHORT:
        return False
    text = bodies.code(texts.data()[arm.body_start : arm.body_end])
    return b"griddepcontrol" in text and b"tcgen05" not in text and b"wgmma" not in text


_SHORT = 600  # bytes: two arms this short that assign the same names are alternatives, not paths


def _same_values(texts: _Texts, g: Group, arm_i: int, mine: set[int]) -> str:
    """The names both the missed arm and every arm the target takes assign, when all are short."""
    data = texts.data()
    arms = [g.arms[i] for i in (arm_i, *sorted(mine))]
    if any(i < 0 or g.arms[i].body != CODE for i in mine) or any(
        a.body_end - a.body_start > _SHORT for a in arms
    ):
        return ""
    names = [bodies.assigned(data[a.body_start : a.body_end]) for a in arms]
    if not names[0] or any(n != names[0] for n in names[1:]):
        return ""
    return ", ".join(sorted(n.decode("utf-8", "replace") for n in names[0]))


# `#if __CUDA_ARCH__ == 1030`: one chip named exactly, the way per-chip variants of generated kernels
# are written (a feature macro, `__CUDA_ARCH_FEAT_SM90_ALL` or a family's, says what hardware it needs)
# one chip's arm: `__CUDA_ARCH__ == 900`, or its arch-specific feature macro (`sm_90a` only defines
# `__CUDA_ARCH_FEAT_SM90_ALL`)
_EXACT = re.compile(
    r"^(?:defined\s*\(\s*__CUDA_ARCH__\s*\)\s*&&\s*)?\(?\s*__CUDA_ARCH__\s*==\s*\d+\s*\)?$"
    r"|^\(?\s*(?:defined\s*\(?\s*)?__CUDA_ARCH_FEAT_SM\d+_ALL\s*\)?\s*\)?$"
)


def _special_case(
    table: Table, fi: int, gi: int, g: Group, arm_i: int, owners: list[str], mine: set[int], a: _Archs
) -> str:
    """The GPUs that go without arm `arm_i` as the target does, where that makes the arm a special
    case of its owners rather than a path the target lacks ("" when none): every 10.x GPU, where
    only GPUs before Blackwell get it (`#if __CUDA_ARCH__ == 900`; a 10.x GPU may have a special
    arm of its own, `#elif __CUDA_ARCH__ == 1000`, while another compiles what the target does), or
    a GPU of the owners' own generation (`#if __CUDA_ARCH__ == 1030`, which 10.0 goes without). Not
    asked where the target's kernel body is lost: an empty or trapping kernel is a hole, whoever
    shares it."""
    facts = all_facts()

    def without(f: ArchFacts, envs: list[Env]) -> bool:
        return f.cc not in owners and all(set(table.reach(fi, gi, e)) <= mine for e in envs)

    def not_taking(f: ArchFacts, envs: list[Env]) -> bool:
        return f.cc not in owners and all(arm_i not in table.reach(fi, gi, e) for e in envs)

    majors = {facts[cc].major for cc in owners}
    # every datacenter Blackwell, a shipped target of the same code, compiles what the target does,
    # code of its own or nothing (`#if __CUDA_ARCH__ == 900` finishing the Hopper arm's reduction):
    # what only older GPUs get is theirs
    if a.arch.facts.major >= 10 and max(majors) < 10:
        blackwell = [(f, envs) for f, envs in a.all if f.major == 10]
        if (
            blackwell
            and all(not_taking(f, envs) for f, envs in blackwell)
            and any(without(f, envs) for f, envs in blackwell)
        ):
            return "datacenter Blackwell (10.x)"
    if len(majors) == 1:
        kin = [f.cc for f, envs in a.all if f.major in majors and without(f, envs)]
        if kin:
            return ", ".join(kin)
    return ""


def _fallback(table: Table, fi: int, gi: int, g: Group, j: int, a: _Archs, first_owner: int) -> bool:
    """Is the target's arm `j` a fallback: nothing, a stub, or what GPUs older than the owners get?"""
    if j == NO_ARM or g.arms[j].body != CODE:
        return True
    if _names(g.arms[j].cond, a.arch.facts):
        return False  # an arm that names the target (`__CUDA_ARCH__ == 1200 || ...`) is its own
    return any(
        j in table.reach(fi, gi, e) for facts, envs in a.all if facts.number < first_owner for e in envs
    )


def _names(cond: str, target: ArchFacts) -> bool:
    """Does a condition name the target's arch (1200, SM120, sm_120)?"""
    upper = cond.upper()
    return str(target.number * 10) in upper or f"SM{target.number}" in upper or f"SM_{target.number}" in upper


def _describe(g: Group, r: tuple[int, ...]) -> str:
    parts = []
    for j in r:
        if j == NO_ARM:
            parts.append("nothing here (no arm taken)")
        elif g.arms[j].body == CODE:
            parts.append(f"the fallback under line {g.arms[j].line}")
        else:
            parts.append(f"{_OUTCOME[g.arms[j].body]} (line {g.arms[j].line})")
    return " or ".join(parts)
