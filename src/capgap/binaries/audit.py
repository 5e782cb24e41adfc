"""Audit a target's compiled kernels: read every candidate binary once, judge it for each arch."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from capgap.binaries.cache import MISS, BinaryCache
from capgap.binaries.compat import MISSING, NATIVE, NO_IMAGE, Verdict, judge
from capgap.binaries.reader import CudaBinary, UnreadableBinary, is_candidate, read_binary
from capgap.binaries.specific import arch_specific_only
from capgap.binaries.toolkits import too_old_for
from capgap.boundedread import kind_of
from capgap.findings import Finding, Skipped
from capgap.judging.where import placement

RULE = "binary-missing-arch"


@dataclass(frozen=True)
class LibraryReport:
    path: str  # relative to the target root
    binary: CudaBinary
    verdicts: tuple[Verdict, ...]  # one per asked arch, in the order asked

    @property
    def missing(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.status == MISSING]

    def to_json(self) -> dict[str, object]:
        b = self.binary
        return {
            "path": self.path,
            "library": b.path.name,
            "size": b.size,
            "format": b.format,
            "sass": list(b.sass),
            "ptx": list(b.ptx),
            "ptx_isa_versions": sorted(
                {f"{e.ptx_version[0]}.{e.ptx_version[1]}" for e in b.loadable if e.ptx_version},
                key=lambda v: tuple(int(x) for x in v.split(".")),
            ),
            "images": len(b.loadable),
            "embedded_images": len(b.embedded),  # in data sections; cuobjdump does not list these
            "empty_modules_images": b.empty,  # images of modules without kernels: never judged
            "compressed_images": b.compressed,
            "modules": len([m for m in b.modules() if m]),
            "verdicts": [v.to_json() for v in self.verdicts],
        }


@dataclass
class Audit:
    libraries: list[LibraryReport] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    files: int = 0  # candidate binaries read (with or without kernels)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _read(path: Path, st: os.stat_result, cache: BinaryCache | None) -> CudaBinary | str | None:
    """The file's binary, None (not one), or why it is unreadable; through the cache if given."""
    if cache is not None:
        hit = cache.get(path, st)
        if hit is not MISS:
            return hit  # type: ignore[return-value]
    try:
        result: CudaBinary | str | None = read_binary(path)
    except UnreadableBinary as exc:
        result = str(exc)
    if cache is not None:
        cache.put(path, st, result)
    return result


def audit_files(
    files: Iterable[Path], root: Path, ccs: Sequence[tuple[int, int]], cache: BinaryCache | None = None
) -> Audit:
    """Read each candidate file (symlinked duplicates once) and judge it for every (major, minor)."""
    out = Audit()
    seen: set[tuple[int, int]] = set()
    candidates = [p for p in files if is_candidate(p)]
    # real files before symlinks to them: a library is reported under its own name (libfoo.so.1.2)
    candidates.sort(key=lambda p: p.is_symlink())
    for path in candidates:
        try:
            st = path.stat()
        except OSError as exc:
            out.skipped.append(Skipped(_relative(path, root), f"cannot stat: {exc.strerror or exc}"))
            continue
        if not stat.S_ISREG(st.st_mode):  # a FIFO or a device (a link to /dev/zero) is never opened
            if not stat.S_ISDIR(st.st_mode):
                out.skipped.append(
                    Skipped(_relative(path, root), f"not a regular file ({kind_of(st.st_mode)})")
                )
            continue
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        binary = _read(path, st, cache)
        if isinstance(binary, str):
            out.skipped.append(Skipped(_relative(path, root), f"unreadable binary: {binary}"))
            continue
        if binary is None:
            continue
        out.files += 1
        if not binary.has_kernels:
            continue
        modules = binary.modules()
        verdicts = tuple(judge(modules, major, minor) for major, minor in ccs)
        out.libraries.append(LibraryReport(_relative(path, root), binary, verdicts))
    return out


def served(audit: Audit) -> frozenset[str]:
    """The archs (`12.0`) some library of the audited target was built for: it carries SASS the
    arch runs natively (PTX that any newer GPU JIT-compiles says nothing of what the build knew)."""
    return frozenset(v.cc for lib in audit.libraries for v in lib.verdicts if v.status == NATIVE)


def findings(report: LibraryReport, others_serve: frozenset[str] = frozenset()) -> list[Finding]:
    """One finding per arch the library has no image for: high; medium when other libraries of
    the same target carry SASS for that arch (`others_serve`: its build knew the GPU and left this
    library out, a path the engine dispatches only for other GPUs, or a per-library slip, not a
    wheel that fails at its first launch); low when the library is built only as other archs'
    arch-specific code (binaries/specific.py says why)."""
    b = report.binary
    present = b.sass + b.ptx
    out = []
    for v in report.missing:
        sm = "sm_" + v.cc.replace(".", "")
        severity = "high"
        message = (
            f"{b.path.name} carries no SASS or PTX a {v.cc} GPU can run; launching its kernels "
            f"fails with cudaErrorNoKernelImageForDevice"
        )
        extra: dict[str, object] = {"size": b.size, "modules": v.modules}
        why = arch_specific_only(b, *v.major_minor)
        if why is not None:
            severity = "low"
            built = ", ".join(why.images)
            lacks = " and ".join(why.features)
            extra["evidence"] = f"images: {built} (arch-specific targets only)"
            message = (
                f"expected: {b.path.name} is built only for {built}, arch-specific targets for "
                f"{lacks}, which {v.cc} lacks; it has no {v.cc} image by design (the engine must "
                f"not send {v.cc} to it)"
            )
        elif v.cc in others_serve and (old := too_old_for(b.path.name, v.cc)):
            # `libbitsandbytes_cuda118.so` beside `_cuda128.so`: one library per CUDA toolkit, the
            # one matching the runtime loaded; a GPU of this arch runs a toolkit new enough for it
            severity = "low"
            extra["evidence"] = f"its name: built with {old}"
            message = (
                f"expected: {b.path.name} was built with {old}; other libraries of the same target "
                f"carry {v.cc} SASS, and a {v.cc} GPU needs a CUDA runtime new enough to load those"
            )
        elif v.cc in others_serve:
            severity = "medium"
            message = (
                f"{b.path.name} carries no SASS or PTX a {v.cc} GPU can run, while other libraries "
                f"of the same target carry {v.cc} SASS: it was left out of the {v.cc} build, so its "
                f"kernels fail with cudaErrorNoKernelImageForDevice if the engine sends {v.cc} to them"
            )
        place = placement(report.path)
        extra.update(place)
        if place["where"] != "runtime":
            severity = "low"  # an example's or a test's library: not what a server loads
        out.append(
            Finding(
                rule=RULE,
                severity=severity,
                path=report.path,
                line=0,
                symbol=b.path.name,
                present=present,
                missing=sm,
                consequence=NO_IMAGE,
                message=message,
                arch=v.cc,
                source=f"SASS: {' '.join(b.sass) or 'none'} | PTX: {' '.join(b.ptx) or 'none'}",
                extra=extra,
            )
        )
    return out


def audit_findings(audit: Audit) -> list[Finding]:
    """Every library's findings, each judged against what the target's other libraries serve."""
    others_serve = served(audit)
    return [f for lib in audit.libraries for f in findings(lib, others_serve)]
