"""gate-admits-unsupported for preprocessor gates: an `#if` that lets the target into code it
cannot run, beside a sibling that can (`#if __CUDA_ARCH__ >= 1000` around tcgen05 PTX admits
sm_120 with sm_100a; `__CUDA_ARCH_FAMILY_SPECIFIC__ >= 1000` admits sm_120a and sm_120f).

Only on direct evidence (`native.direct`) in the code the target compiles there: the arm's text
less the nested arms it does not surely take. And only where the gate is about that feature:
some GPU is kept out and gets code without it (an `== 1000` / `else` pair of two tcgen05 variants
is no such gate), the file needs the feature nowhere outside its arch gates (then it is built for
that arch alone, whatever the gate says), and its path names no other arch (`sm_100a/`,
`_sm90.cu`). `__CUDA_ARCH_FEAT_SM100_ALL`, `__CUDA_ARCH_SPECIFIC__ == 1000` and CUTLASS's
`*_SM100A_ENABLED` are evaluated as nvcc sets them, so such gates stay silent.

High when the target fails to compile the file (PTX its ptxas refuses): a from-source or JIT build
for it breaks; medium when it compiles and the kernel fails when run (CuTe / CUTLASS atoms built
without their instructions); low in tests, benchmarks, examples and vendored libraries.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from capgap.arch import ArchFacts, all_facts
from capgap.findings import Finding
from capgap.judging import evidence
from capgap.judging.rules import gate_admits_unsupported
from capgap.native import bodies, direct
from capgap.native.macros import NO_ARM, NOT_REACHED, Table
from capgap.native.records import CODE, Group, NativeFacts

if TYPE_CHECKING:
    from capgap.native.envs import Env
    from capgap.native.judge import _Archs

# A path that names another arch: its sources are built for that arch alone.
_RESTRICTED = re.compile(r"(?:^|[/_.-])sm_?(?:90a?|10[03][af]?|110[af]?|10x)(?=[/_.-]|$)", re.I)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_BLANK = bytes(10 if b == 10 else 32 for b in range(256))  # every byte a space, newlines kept


def check(
    table: Table,
    fi: int,
    gi: int,
    g: Group,
    f: NativeFacts,
    a: _Archs,
    place: dict[str, str],
    data: Callable[[], bytes],
) -> Finding | None:
    """The finding for group `gi` of file `fi`, or None."""
    admitted: dict[int, list[Env]] = {}
    for e in a.target:
        r = table.reach(fi, gi, e)
        if len(r) == 1 and r[0] >= 0 and g.arms[r[0]].body == CODE and g.arms[r[0]].hint:
            admitted.setdefault(r[0], []).append(e)
    if not admitted or _RESTRICTED.search(f.path):
        return None
    target = a.arch.facts
    for i, envs in sorted(admitted.items()):
        if not _may_matter(table, fi, gi, i, a):
            continue
        text = data()
        found = [
            (e, d)
            for e in envs
            for d in direct.read(_compiled(text, f, table, fi, gi, i, e), g.arms[i].line)
            if evidence.lacking([d.need], target)
        ]
        for _, d in sorted(found, key=lambda ed: ed[1].fails != direct.COMPILE):
            with_it = _with_it(table, fi, gi, i, a, d.need)
            kept_out = _kept_out(table, fi, gi, g, i, a, d.need, text)
            if not with_it or not kept_out or _ungated(text, f, d.need):
                continue
            variants = [e.name for e, seen in found if seen.need == d.need and seen.fails == d.fails]
            return _finding(g, f, i, a, place, d, with_it, kept_out, variants, table, fi, gi)
    return None


def _may_matter(table: Table, fi: int, gi: int, i: int, a: _Archs) -> bool:
    """Before any text is read: a sibling's arch-specific build takes arm `i` with the target, and
    some GPU surely does not."""
    if not any(table.reach(fi, gi, e) == (i,) for _, envs in a.siblings for e in envs if e.variant):
        return False
    return any(
        r and NOT_REACHED not in r and i not in r
        for _, envs in a.all
        for r in (table.reach(fi, gi, e) for e in envs)
    )


def _compiled(data: bytes, f: NativeFacts, table: Table, fi: int, gi: int, i: int, e: Env) -> bytes:
    """Arm `i`'s code as `e` compiles it: nested arms it does not surely take are blanked (their
    newlines kept, so lines keep their numbers); comments and directives are cut."""
    arm = f.groups[gi].arms[i]
    text = bytearray(data[arm.body_start : arm.body_end])
    todo = [(gi, i)]
    while todo:
        parent = todo.pop()
        for gj, child in enumerate(f.groups):
            if child.parent != parent:
                continue
            r = table.reach(fi, gj, e)
            for k, inner in enumerate(child.arms):
                if r == (k,):
                    todo.append((gj, k))
                    continue
                lo, hi = inner.offset - arm.body_start, inner.body_end - arm.body_start
                if 0 <= lo < hi <= len(text):
                    text[lo:hi] = bytes(text[lo:hi]).translate(_BLANK)
    return bodies.code(bytes(text))


def _usable(facts: ArchFacts, variant: str, need: tuple[str, ...]) -> bool:
    """Can code built for this arch and variant use the need (wgmma: sm_90a; tcgen05: a or f)?"""
    has = any(facts.has(feat) for feat in need)
    return has and (variant == "a" or (variant == "f" and "tcgen05" in need))


def _with_it(table: Table, fi: int, gi: int, i: int, a: _Archs, need: tuple[str, ...]) -> list[str]:
    """The siblings admitted with the target whose build can run the path."""
    return [
        s.cc
        for s, envs in a.siblings
        if any(table.reach(fi, gi, e) == (i,) and _usable(s, e.variant, need) for e in envs)
    ]


def _kept_out(
    table: Table, fi: int, gi: int, g: Group, i: int, a: _Archs, need: tuple[str, ...], data: bytes
) -> list[str]:
    """The archs the gate surely keeps out of arm `i` whose outcome does not need `need` too."""
    out: list[str] = []
    for facts, envs in a.all:
        for e in envs:
            r = table.reach(fi, gi, e)
            if not r or NOT_REACHED in r or i in r:
                continue
            if all(not _needs(g, j, need, data) for j in r):
                out.append(facts.cc)
                break
    return out


def _needs(g: Group, j: int, need: tuple[str, ...], data: bytes) -> bool:
    if j == NO_ARM or g.arms[j].body != CODE or not g.arms[j].hint:
        return False
    arm = g.arms[j]
    return any(
        d.need == need for d in direct.read(bodies.code(data[arm.body_start : arm.body_end]), arm.line)
    )


def _ungated(data: bytes, f: NativeFacts, need: tuple[str, ...]) -> bool:
    """Does the file need `need` outside its arch gates (then it is built for that arch alone)?
    Read around each spelling `direct.HINT` finds outside every arch-dependent group, not between
    two of them."""
    spans = sorted((g.arms[0].offset, g.end_offset) for g in f.groups if g.archish and g.arms)
    starts = [lo for lo, _ in spans]
    ends = list(accumulate((hi for _, hi in spans), max))  # the furthest end among the spans so far
    for m in direct.HINT.finditer(data):
        k = bisect_right(starts, m.start())
        before = ends[k - 1] if k else 0
        if before > m.start():
            continue  # inside a gate
        lo = max(before, data.rfind(b"\n", 0, max(0, m.start() - _AROUND)) + 1)
        hi = min(starts[k] if k < len(starts) else len(data), m.end() + _AROUND // 2)
        if any(d.need == need for d in direct.read(bodies.code(data[lo:hi]), 1)):
            return True
    return False


_AROUND = 400  # bytes read before a spelling outside the gates (an asm statement's start)


def _finding(
    g: Group,
    f: NativeFacts,
    i: int,
    a: _Archs,
    place: dict[str, str],
    d: direct.Direct,
    with_it: list[str],
    kept_out: list[str],
    variants: list[str],
    table: Table,
    fi: int,
    gi: int,
) -> Finding:
    target = a.arch.facts
    arm, fn = g.arms[i], g.function
    what = evidence.describe(d.need)
    seen = d.seen()
    symbol = fn.name if fn is not None else next(iter(_IDENT.findall(arm.cond)), arm.cond[:60])
    builds = ", ".join(variants)
    if d.fails == direct.COMPILE:
        severity = "high"
        outcome = (
            f"nvcc refuses to assemble it for {builds} (ptxas: instruction not supported on that "
            f"target), so a build of this file for {target.cc} (from source, or a JIT that compiles it "
            f"for the GPU it finds) fails"
        )
    else:
        severity = "medium"
        outcome = (
            f"it compiles for {builds} without those instructions (CuTe/CUTLASS leave a trap or an "
            f"'Arch conditional MMA instruction' abort there), so the kernel fails when it runs"
        )
    if place.get("where", "runtime") != "runtime":
        severity = "low"
    kept = newest_first(kept_out)
    extra: dict[str, Any] = {
        "decision": "preprocessor",
        "condition": arm.cond[:200],
        "admits": [e.name for _, envs in a.all for e in envs if table.reach(fi, gi, e) == (i,)],
        "needs": [what],
        "evidence": seen,
        "fails": d.fails,
        "compiles": variants,
        **place,
    }
    if fn is not None:
        extra["function"] = {"kind": fn.kind, "name": fn.name, "line": fn.line}
    kept_words = f"the gate keeps {kept} out of it"
    need = (what, seen)
    return admits_finding(
        f.path, arm.line, symbol, with_it, target.cc, need, outcome, kept_words, arm.source, severity, extra
    )


def newest_first(ccs: list[str]) -> str:
    """The three newest archs of `ccs`, "and older" when there are more."""
    newest = sorted(ccs, key=lambda cc: -all_facts()[cc].number)
    return ", ".join(newest[:3]) + (" and older" if len(newest) > 3 else "")


def admits_finding(
    path: str,
    line: int,
    symbol: str,
    with_it: list[str],
    target: str,
    need: tuple[str, str],
    outcome: str,
    kept: str,
    source: str,
    severity: str,
    extra: dict[str, Any],
) -> Finding:
    """A native gate-admits-unsupported finding (a preprocessor gate or a host dispatch): `need` is
    what the admitted code needs and where that was read."""
    what, seen = need
    return Finding(
        rule=gate_admits_unsupported.RULE_ID,
        severity=severity,
        path=path,
        line=line,
        symbol=symbol,
        present=tuple(with_it),
        missing=target,
        consequence=(
            f"{target} is let into code that needs {what} (read from {seen}), which {target} lacks: "
            f"{outcome}; {kept}"
        ),
        message=f"{symbol} admits {target} with {', '.join(with_it)}, but the path needs {what}",
        arch=target,
        source=source,
        extra=extra,
    )
