"""registry-excludes-arch: a kernel registered for an op declares arch windows that admit sibling
archs but not the target (`KernelSpec(op=..., capabilities={CapabilityRequirement.cuda(min_sm=
(10, 0), max_sm=(10, 9))})`, judging.kernel_specs), so dispatch never gives it the kernel.

No finding when another kernel of the op is registered for the target's archs by a window of its
own (the target has its own implementation), nor when only GPUs of the target's own major get the
kernel (a GB10-only workaround is that product's). Otherwise the target gets the op's unrestricted
kernels (a generic Triton or torch one), or none it declares: medium, a model- or op-specific loss; the
message says which. Low (expected) when what the kernel loads needs a feature the target lacks
(its module imports tcgen05, its path says `sm100`), read where the registry points, and said
with where; low too outside runtime code (tests, benchmarks, examples, vendored libraries), as
for every rule.
"""

from __future__ import annotations

from capgap.arch import ArchSpec, all_facts
from capgap.findings import Finding
from capgap.judging import evidence, newer
from capgap.judging.kernel_specs import admits
from capgap.judging.records import FileFacts, KernelSpecEntry
from capgap.judging.registry import Registry
from capgap.judging.where import placement

RULE_ID = "registry-excludes-arch"


def findings(files: list[FileFacts], archs: tuple[ArchSpec, ...], reg: Registry) -> list[Finding]:
    by_op: dict[str, list[tuple[FileFacts, KernelSpecEntry]]] = {}
    for f in files:
        for entry in f.kernel_specs:
            by_op.setdefault(entry.op, []).append((f, entry))
    out: list[Finding] = []
    for entries in by_op.values():
        for arch in archs:
            mine = [e for _, e in entries if admits(e, arch.major, arch.minor)]
            if any(_bounded(e) for e in mine):
                continue  # a kernel registered for the target's archs: its own implementation
            for f, entry in entries:
                finding = _judge(f, entry, [e for e in mine if e is not entry], arch, reg)
                if finding is not None:
                    out.append(finding)
    return out


def _bounded(entry: KernelSpecEntry) -> bool:
    """Does the kernel declare an arch window (not just "any CUDA device")?"""
    return any(lo is not None or hi is not None for lo, hi in entry.windows)


def _judge(
    f: FileFacts, entry: KernelSpecEntry, instead: list[KernelSpecEntry], arch: ArchSpec, reg: Registry
) -> Finding | None:
    if not _bounded(entry) or admits(entry, arch.major, arch.minor):
        return None
    sibs = [cc for cc, a in all_facts().items() if admits(entry, a.major, a.minor)]
    if not sibs or all(all_facts()[cc].major == arch.major for cc in sibs):
        # a kernel only a product of the target's own family gets (a GB10-only workaround for 12.1)
        # is that product's, as gate-excludes-arch reads such gates: nothing the target was left out of
        return None
    kernel = f"its {entry.backend} kernel" if entry.backend else "its kernel"
    if instead:
        others = ", ".join(dict.fromkeys(e.backend or "unnamed" for e in instead))
        gets = f"{arch.cc} gets only the unrestricted {others} kernel"
    else:
        gets = f"no kernel of the op declares {arch.cc} (a dispatch that checks the windows finds none)"
    place = placement(f.path)
    extra: dict[str, object] = {"module": f.module, **place, "op": entry.op, "instead": gets}
    severity = "low" if place["where"] != "runtime" else "medium"
    consequence = f"{entry.op} registers {kernel} for {', '.join(sibs)} only: {gets}"
    needs, where, kernels = _loaded_needs(entry.target, reg)
    # what the registration itself says the kernel is ("FP32 sigmoid gate ... with PDL.")
    described = evidence.needs_with_evidence(entry.description.lower())
    _add(needs, where, [described], "the registration's description")
    theirs = [all_facts()[cc] for cc in sibs]
    lack = [n for n in evidence.lacking(needs, arch.facts) if evidence.had_by(n, theirs)]
    if lack:
        seen = where[needs.index(lack[0])]
        severity = "low"
        extra["evidence"] = seen
        what = f"{entry.target} needs {evidence.describe(lack[0])} (read from {seen})"
        consequence = f"expected: {what}; {consequence}"
    elif written := newer.written_for_newer(sibs, arch.facts):
        severity = "low"  # a kernel registered for 12.x only, read on a B200: theirs, not a floor
        extra["evidence"] = written
        consequence = f"expected: a kernel {written}; {consequence}"
    elif kernels:
        extra["evidence"] = kernels
        consequence += (
            f"; the kernels read ({kernels}) use no tcgen05, wgmma or multicast: they look portable"
        )
    return Finding(
        rule=RULE_ID,
        severity=severity,
        path=f.path,
        line=entry.line,
        symbol=entry.op,
        present=tuple(sibs),
        missing=arch.cc,
        consequence=consequence,
        message=f"{entry.op} registers {kernel} for {', '.join(sibs)} but not {arch.cc}: {gets}",
        arch=arch.cc,
        source=entry.source,
        extra=extra,
        basis=f"kernel {entry.op} {entry.backend}",
    )


def _loaded_needs(target: str, reg: Registry) -> tuple[list[tuple[str, ...]], list[str], str]:
    """What the callable a kernel entry loads needs: its module's needs (imports, path, its own
    kernels), then what its own text spells (a lazy `from ...flash_fwd_mla_sm100 import` in it)."""
    if not target:
        return [], [], ""
    needs, where, kernels = reg.callees.needs([target])
    module, _, name = target.rpartition(".")
    f = reg.callees.resolve(target)
    helper = (
        next((h for h in f.helpers if h.name == name), None) if f is not None and f.module == module else None
    )
    if helper is not None:
        text = "\n".join(helper.source)
        spelled = [evidence.needs_with_evidence(text.lower()), evidence.kernel_classes(text)]
        _add(needs, where, spelled, target)
    return needs, where, kernels


def _add(
    needs: list[tuple[str, ...]],
    where: list[str],
    found: list[tuple[list[tuple[str, ...]], list[str]]],
    read_in: str,
) -> None:
    """Append the needs `found` spells (needs, the words they were read from) that are not there yet,
    each with where it was read."""
    for need, seen in [pair for spelled in found for pair in zip(*spelled, strict=True)]:
        if need not in needs:
            needs.append(need)
            where.append(f"{seen} in {read_in}")
