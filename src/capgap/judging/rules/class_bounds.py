"""gate-excludes-arch, for bounds written as class attributes: an operator class caps the GPUs it
serves (`CUDA_MAXIMUM_COMPUTE_CAPABILITY = (9, 0)`) and a method of a base class refuses a device
past the cap (`if device_capability > cls.CUDA_MAXIMUM_COMPUTE_CAPABILITY: reasons.append(...)`).
A floor above the target within its own generation (`MIN_COMPUTE_CAPABILITY = (12, 1)` read on a
12.0, `if capability < cls.MIN_COMPUTE_CAPABILITY: return False, ...`) refuses it the same way.

Reported at the class's own assignment when the bound leaves the target out while known GPUs
within the class's window keep the operator: medium; low (expected) when the class's module
evidently needs what the target lacks (`torch.ops.flash_attn_3`: FlashAttention-3, wgmma), and
outside runtime code. A bound copied from another class (`= FwOp.CUDA_MAXIMUM_COMPUTE_CAPABILITY`)
is that class's finding.
"""

from __future__ import annotations

from capgap.arch import ArchSpec, all_facts
from capgap.findings import Finding
from capgap.judging import evidence
from capgap.judging.records import ClassBound, FileFacts
from capgap.judging.rules.gate_excludes_arch import RULE_ID
from capgap.judging.where import placement

Sides = dict[str, tuple[str, str, int]]  # bound name -> (where compared, "upper" / "lower", line)


def findings(files: list[FileFacts], archs: tuple[ArchSpec, ...]) -> list[Finding]:
    sides: Sides = {n: (f.path, side, line) for f in files for n, (side, line) in f.bound_checks.items()}
    out: list[Finding] = []
    for f in files:
        for bound in f.class_bounds:
            if bound.name not in sides:
                continue  # no method compares a device with it: a number, not a gate we can read
            where, side, line = sides[bound.name]
            if side == "lower":
                # `MIN_COMPUTE_CAPABILITY = (12, 1)`: a floor above the target refuses it
                high = min(_own(f.class_bounds, bound, sides, "upper"), default=(99, 9))
                kept = [cc for cc, a in all_facts().items() if bound.value <= (a.major, a.minor) <= high]
                for arch in archs if kept else ():
                    # (only within the target's own generation: a floor at a later one is where
                    # the operator's hardware begins, which an older GPU predates)
                    if arch.facts.major == bound.value[0] and arch.facts.minor < bound.value[1]:
                        out.append(_finding(f, bound, arch, kept, f"{where}:{line}", floor=True))
                continue
            low = max(_own(f.class_bounds, bound, sides, "lower"), default=(0, 0))
            kept = [cc for cc, a in all_facts().items() if low <= (a.major, a.minor) <= bound.value]
            for arch in archs if kept else ():
                if (arch.facts.major, arch.facts.minor) > bound.value:
                    out.append(_finding(f, bound, arch, kept, f"{where}:{line}"))
    return out


def _own(bounds: list[ClassBound], bound: ClassBound, sides: Sides, side: str) -> list[tuple[int, int]]:
    """The bounds of one side (`lower`, `upper`) the class writes beside `bound`."""
    own = {b.name: b.value for b in bounds if b.cls == bound.cls}  # the last assignment holds
    return [value for name, value in own.items() if _side(sides, name) == side]


def _side(sides: Sides, name: str) -> str:
    return sides[name][1] if name in sides else ""


def _finding(
    f: FileFacts, bound: ClassBound, arch: ArchSpec, kept: list[str], compared: str, floor: bool = False
) -> Finding:
    place = placement(f.path)
    lack = evidence.lacking(list(bound.needs), arch.facts)
    cap = f"{bound.value[0]}.{bound.value[1]}"
    instead = f"the operator refuses {arch.cc} where {compared} compares the device with {bound.name}"
    extra: dict[str, object] = {
        "module": f.module,
        "context": bound.cls,
        "decision": "class-bound",
        "admits": kept,
        "needs": [evidence.describe(n) for n in bound.needs],
        "instead": instead,
        **place,
    }
    if lack:
        seen = bound.needs_from[list(bound.needs).index(lack[0])]
        extra["evidence"] = seen
        severity = "low"
        consequence = (
            f"expected: {bound.cls}'s module needs {evidence.describe(lack[0])} (read from {seen}), which "
            f"{arch.cc} lacks; {instead}"
        )
    else:
        severity = "medium"
        consequence = (
            f"{bound.cls} serves GPUs {'from' if floor else 'up to'} {cap}; {instead}, and nothing in its "
            f"module needs what {arch.cc} lacks"
        )
    if place["where"] != "runtime":
        severity = "low"
    return Finding(
        rule=RULE_ID,
        severity=severity,
        path=f.path,
        line=bound.line,
        symbol=f"{bound.cls}.{bound.name}",
        present=tuple(kept),
        missing=arch.cc,
        consequence=consequence,
        message=f"{bound.cls}.{bound.name} = {cap} "
        + (f"is the operator's floor: GPUs from {cap}" if floor else f"caps the operator: GPUs up to {cap}")
        + f" keep it, {arch.cc} is refused",
        arch=arch.cc,
        source=bound.source,
        extra=extra,
    )
