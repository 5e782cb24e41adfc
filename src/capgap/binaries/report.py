"""What `capgap binaries` does between parsing its options and exiting: resolve, audit, render."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from capgap import output
from capgap.arch import ArchSpec, parse_arch
from capgap.binaries.audit import Audit, audit_files, audit_findings
from capgap.binaries.cache import BinaryCache
from capgap.errors import EnvironmentProblem
from capgap.paths import cache_dir
from capgap.targets import Target, iter_files, resolve_target


def probed_archs() -> list[ArchSpec]:
    """This machine's GPUs' archs, via the probe module when it is there."""
    try:
        from capgap.probe.gpus import probe_machine
    except ImportError as exc:
        raise EnvironmentProblem("no --arch given and GPU probing is unavailable; pass --arch") from exc
    machine = probe_machine()
    ccs = [str(getattr(g, "compute_capability", "")) for g in getattr(machine, "gpus", [])]
    archs = [parse_arch(cc) for cc in dict.fromkeys(c for c in ccs if c)]
    if not archs:
        raise EnvironmentProblem("no --arch given and no GPU found on this machine; pass --arch")
    return archs


def resolve_archs(spellings: Sequence[str]) -> list[ArchSpec]:
    if not spellings:
        return probed_archs()
    archs = [parse_arch(s) for s in spellings]
    seen: dict[str, ArchSpec] = {}
    for a in archs:  # a device is a compute capability: sm_90a and 9.0 ask the same question
        seen.setdefault(a.cc, a)
    return list(seen.values())


def audit_targets(
    specs: Sequence[str], archs: Sequence[ArchSpec], python: str | None, use_cache: bool = True
) -> list[tuple[Target, Audit]]:
    ccs = [(a.major, a.minor) for a in archs]
    cache = BinaryCache(cache_dir()) if use_cache else None
    out = []
    for spec in specs:
        target = resolve_target(spec, python)
        out.append((target, audit_files(iter_files(target), target.root, ccs, cache)))
    return out


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def render_text(results: Sequence[tuple[Target, Audit]], archs: Sequence[ArchSpec]) -> None:
    verdict_cols = [f"on {a.cc}" for a in archs] if len(archs) > 1 else ["verdict"]
    for target, audit in results:
        libs = sorted(audit.libraries, key=lambda r: r.path)
        names = Counter(lib.binary.path.name for lib in libs)
        rows = []
        for lib in libs:
            b = lib.binary
            name = b.path.name if names[b.path.name] == 1 else lib.path  # the path only when ambiguous
            sass, ptx = " ".join(b.sass) or "-", " ".join(b.ptx) or "-"
            rows.append((name, _size(b.size), sass, ptx, *(v.text for v in lib.verdicts)))
        title = f"{target.spec}: {len(audit.libraries)} of {audit.files} binaries carry CUDA kernels"
        if rows:
            output.table(title, ("library", "size", "SASS", "PTX", *verdict_cols), rows)
        else:
            output.show(title)
        for s in audit.skipped:
            output.warn(f"skipped {s.path}: {s.reason}")
    missing = [f for _, a in results for f in audit_findings(a)]  # one per library/arch pair
    if missing:
        by_design = sum(1 for f in missing if f.severity == "low")
        why = (
            f" ({by_design} by design: built only for other GPUs' arch-specific targets)" if by_design else ""
        )
        output.show(
            f"{len(missing)} library/arch pair(s) with no kernel image{why}: "
            '"no kernel image is available for execution on the device" at their first kernel launch'
        )


def render_json(results: Sequence[tuple[Target, Audit]], archs: Sequence[ArchSpec]) -> None:
    output.emit_json(
        {
            "archs": [a.cc for a in archs],
            "targets": [
                {
                    "target": target.to_json(),
                    "binaries_read": audit.files,
                    "libraries": [lib.to_json() for lib in sorted(audit.libraries, key=lambda r: r.path)],
                    "findings": [f.to_json() for f in audit_findings(audit)],
                    "skipped": [s.to_json() for s in audit.skipped],
                }
                for target, audit in results
            ],
        }
    )
