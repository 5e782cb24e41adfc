"""Scan analyzer for tuned-config coverage: rule `config-missing-device` (medium).

Engines ship tuned kernel configs as files named after the GPU. For every directory of such
files and every target device (`ScanOptions.devices`: `--device`, or the probe's GPU names, probed
only when the target has tuned configs), one finding lists the shapes that another GPU of its
vendor has a file for and the target has none: for those shapes the engine logs a warning and runs
its default config. The finding also says which siblings' files would not fit the target's shared
memory per block (`smem.py`), i.e. which ones `capgap fix --configs` would refuse to copy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from capgap.findings import Finding, Skipped
from capgap.scan.analyzers import AnalyzerResult, LazyDevices, ScanOptions

if TYPE_CHECKING:  # the rest is imported where used: every scan imports this module, few judge configs
    from capgap.arch import ArchFacts, ArchSpec
    from capgap.configs.coverage import ConfigDir, DirCoverage
    from capgap.targets import Target

ANALYZER_ID = "configs"
RULE = "config-missing-device"
RULES = (RULE,)
SEVERITY = "medium"
EXAMPLES = 5
_VENDORS = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "other": ""}

CONSEQUENCE = (
    "the engine finds no tuned config for these shapes on this GPU, logs a warning and falls back to "
    "its default kernel config (often much slower); `capgap fix --configs` copies the closest fitting "
    "sibling's file (not measured here), `capgap tune` measures one"
)


def target_arch(device: str, archs: tuple[ArchSpec, ...]) -> ArchFacts | None:
    """The device's arch from its name; else the given archs' (the smallest per-block limit if several)."""
    from capgap.configs.devices import facts_for_device

    facts = facts_for_device(device)
    if facts is not None:
        return facts
    known = [a.facts for a in archs]
    return min(known, key=lambda f: (f.smem_per_block_kb, f.number)) if known else None


def target_devices(devices: Sequence[str], dirs: Sequence[ConfigDir] = ()) -> list[str]:
    """Normalised, de-duplicated device names (8 GPUs of one kind are one target).

    The device spellings found in `dirs` complete partial names (`naming.normalise_device`).
    """
    from capgap.configs.naming import normalise_device

    known = sorted({f.name.device for d in dirs for f in d.files})
    return list(dict.fromkeys(n for n in (normalise_device(d, known) for d in devices) if n))


def analyze(target: Target, options: ScanOptions) -> AnalyzerResult:
    result = AnalyzerResult()
    lazy = isinstance(options.devices, LazyDevices)
    if lazy and options.devices.surely_none():  # type: ignore[union-attr]
        return result  # no GPU driver here: nothing to judge configs for, no need to look
    if not lazy and not options.devices:
        return result
    from capgap.configs.coverage import collect_dirs, coverage, rel_to

    dirs = collect_dirs(target)
    if lazy and not dirs:
        return result  # no tuned configs: the GPUs are never probed
    names = options.device_names()
    if not names:
        return result
    devices = target_devices(names, dirs)
    result.files = sum(len(d.files) for d in dirs)
    for device in devices:
        arch = target_arch(device, options.archs)
        covs = [coverage(directory, device, arch) for directory in dirs]
        elsewhere = _other_triton_dirs(covs)
        for cov in covs:
            for path in cov.unreadable:
                skip = Skipped(rel_to(path, target.root), "tuned config is not readable JSON")
                if skip not in result.skipped:
                    result.skipped.append(skip)
            if cov.gaps:
                result.findings.append(finding_for(cov, target, elsewhere.get(cov.directory.rel)))
    return result


def _other_triton_dirs(covs: list[DirCoverage]) -> dict[str, int]:
    """SGLang dirs `configs/triton_X_Y_Z`: how many gaps the target has a file for in a sibling dir.

    SGLang looks in its own Triton version's directory first, then in every other `triton_*`
    directory, newest first, with a warning; such shapes are not lost, just not tuned for this
    Triton version.
    """
    groups: dict[str, list[DirCoverage]] = {}
    for cov in covs:
        parent, _, leaf = cov.directory.rel.rpartition("/")
        if cov.directory.engine == "sglang" and leaf.startswith("triton_"):
            groups.setdefault(parent, []).append(cov)
    out: dict[str, int] = {}
    for members in groups.values():
        for cov in members:
            have = {
                f.name.key
                for other in members
                if other is not cov
                for f in other.directory.files
                if f.name.device == other.spelling
            }
            out[cov.directory.rel] = sum(1 for g in cov.gaps if g.name.key in have)
    return out


def finding_for(cov: DirCoverage, target: Target, in_other_triton_dirs: int | None = None) -> Finding:
    from capgap.configs.coverage import rel_to
    from capgap.configs.naming import vendor

    missing = len(cov.gaps)
    by_device: Counter[str] = Counter(c.device for g in cov.gaps for c in g.candidates)
    limit = cov.arch.smem_per_block_kb if cov.arch else None
    unfit: Counter[str] = Counter()
    unfit_examples: list[dict[str, object]] = []
    for gap in cov.gaps:
        for cand in gap.candidates:
            if cand.need is not None and cand.need.bytes is not None and cand.fits is False:
                unfit[cand.device] += 1
                if len(unfit_examples) < 3:
                    unfit_examples.append(
                        {
                            "shape": gap.shape,
                            "device": cand.device,
                            "need_kb": round(cand.need.bytes / 1024, 1),
                            "limit_kb": limit,
                            "file": rel_to(cand.file.path, target.root),
                        }
                    )
    copyable = sum(1 for g in cov.gaps if g.best is not None)
    rel = cov.directory.rel
    top = ", ".join(f"{d} ({n})" for d, n in by_device.most_common(3))
    return Finding(
        rule=RULE,
        severity=SEVERITY,
        path=rel,
        line=0,
        symbol=rel,
        present=cov.siblings,
        missing=cov.spelling,
        consequence=CONSEQUENCE,
        message=(
            f"{missing} of {cov.shapes} tuned config shapes have a file for another "
            f"{_VENDORS[vendor(cov.spelling)]} GPU but none for {cov.spelling}"
        ),
        arch=cov.arch.cc if cov.arch else "",
        source=f"{cov.spelling} has {cov.target_has} of {cov.shapes} shapes; siblings: {top}",
        extra={
            "device": cov.device,
            "engine": cov.directory.engine,
            "shapes": cov.shapes,
            "target_has": cov.target_has,
            "missing_count": missing,
            "missing_examples": [g.shape for g in cov.gaps[:EXAMPLES]],
            "missing_by_device": dict(by_device.most_common()),
            "families": [{"family": f, "target_has": t, "siblings_have": s} for f, t, s in cov.families],
            "smem_limit_kb": limit,
            "smem_unfit_by_device": dict(unfit.most_common()),
            "smem_unfit_examples": unfit_examples,
            "copyable": copyable if limit is not None else None,
            **({} if in_other_triton_dirs is None else {"in_other_triton_dirs": in_other_triton_dirs}),
        },
    )
