"""gate-admits-unsupported for host-side C++ dispatch: `if (sm >= 100) { launch_fmha_Sm100(...); }`
sends 12.0, with 10.0, into a launcher of kernels it cannot run, while older GPUs get a portable
path or an error.

Only on direct evidence (`native.direct`) in the arm's own code: CuTe / CUTLASS atoms and
arch-named classes (`SM100_MMA_...`, `CollectiveMmaSm100`, `GemmKernelSm90Fp8`), `tcgen05` / `umma`
/ `wgmma` names; a bare `sm100` in a name is not enough (a family path may serve 12.x too). And
only where the decision is about that feature: a sibling that has it takes the arm, and an arch
kept out of it gets something that does not need it. High when the target surely takes the arm
(its every call lands there: no kernel image for it, or a trap, on first use); medium when the arm
also depends on something besides the arch; low in tests, benchmarks, examples and vendored code.
"""

from __future__ import annotations

from typing import Any

from capgap.arch import ArchSpec, all_facts
from capgap.findings import Finding
from capgap.judging import evidence
from capgap.native import bodies, direct
from capgap.native.admits import admits_finding, newest_first
from capgap.native.host import CODE, HostDecision


def check(
    path: str, d: HostDecision, arch: ArchSpec, by_arch: dict[str, tuple[int, ...]], place: dict[str, str]
) -> Finding | None:
    """The finding for decision `d`, or None; `by_arch`: the arms each arch may take."""
    target, facts = arch.facts, all_facts()
    mine = by_arch[target.cc]
    for i in (j for j in mine if j >= 0 and d.arms[j].body == CODE):
        for ev in _needs(d, i):
            if not evidence.lacking([ev.need], target):
                continue
            with_it = [
                cc
                for cc, r in by_arch.items()
                if cc != target.cc and i in r and evidence.had_by(ev.need, [facts[cc]])
            ]
            kept = [
                cc
                for cc, r in by_arch.items()
                if r and i not in r and not any(_needs_too(d, j, ev) for j in r)
            ]
            if with_it and kept:
                return _finding(path, d, arch, i, ev, with_it, kept, mine == (i,), place)
    return None


def _needs(d: HostDecision, i: int) -> list[direct.Direct]:
    arm = d.arms[i]
    return direct.read(bodies.code(arm.text.encode()), arm.line) if arm.text else []


def _needs_too(d: HostDecision, j: int, ev: direct.Direct) -> bool:
    return j >= 0 and d.arms[j].body == CODE and any(x.need == ev.need for x in _needs(d, j))


def _finding(
    path: str,
    d: HostDecision,
    arch: ArchSpec,
    i: int,
    ev: direct.Direct,
    with_it: list[str],
    kept: list[str],
    sure: bool,
    place: dict[str, str],
) -> Finding:
    target, arm = arch.facts, d.arms[i]
    what, seen = evidence.describe(ev.need), ev.seen()
    symbol = d.function or arm.cond[:60]
    others = newest_first(kept)
    outcome = (
        f"every call on {target.cc} lands there and fails when first used (no kernel image for "
        f"{target.cc}, or a kernel built without those instructions)"
        if sure
        else f"when that arm is taken on {target.cc}, expect 'no kernel image is available' or a trap"
    )
    severity = "high" if sure else "medium"
    if place.get("where", "runtime") != "runtime":
        severity = "low"
    extra: dict[str, Any] = {
        "decision": f"host-{d.kind}",
        "condition": arm.cond[:200],
        "function": d.function,
        "needs": [what],
        "evidence": seen,
        "fails": ev.fails,
        **place,
    }
    kept_words = f"{others} are kept out of it"
    return admits_finding(
        path,
        arm.line,
        symbol,
        with_it,
        target.cc,
        (what, seen),
        outcome,
        kept_words,
        arm.source,
        severity,
        extra,
    )
