"""build-missing-arch: a build arch list (TORCH_CUDA_ARCH_LIST, -gencode, CMAKE_CUDA_ARCHITECTURES,
cuda_archs, a JIT flag builder's `supported_major_versions=[9, 10]`) compiles no code, or only PTX,
for the target.

Medium. Low (expected) when the sources the list compiles need an instruction set the target
lacks (tcgen05, wgmma), read from the sources a JIT module names or those a CMake intersection
sets below it (their names, `scaled_mm_c3x_sm90.cu`, or their text), else, in a Python module, what
the module itself states (its path `fmha_sm100/`, its imports), said with where; low too in
tests, benchmarks and examples.
"""

from __future__ import annotations

from capgap.arch import ArchSpec
from capgap.findings import Finding
from capgap.judging import builds, evidence
from capgap.judging.records import BuildList, FileFacts
from capgap.judging.where import placement

RULE_ID = "build-missing-arch"


def findings(files: list[FileFacts], archs: tuple[ArchSpec, ...]) -> list[Finding]:
    out: list[Finding] = []
    for f in files:
        for bl in f.builds:
            for arch in archs:
                cover = builds.coverage(bl.archs, arch)
                if cover == "sass" or _own_variant(f, bl, arch):
                    continue
                severity, expected = "medium", ""
                needs, needs_from = bl.needs, bl.needs_from
                if not needs and (bl.symbol == builds.JIT_MAJORS or f.path.endswith(".py")):
                    # the module's own sources, else what its file states: a `-gencode` list in
                    # `fmha_sm100/jit.py` builds what the module's path says it is written for
                    needs, needs_from = f.needs, f.needs_from
                if needs:
                    lack = evidence.lacking(needs, arch.facts)
                    if lack:
                        seen = needs_from[needs.index(lack[0])]
                        severity = "low"
                        expected = (
                            f"expected: its sources need {evidence.describe(lack[0])} (read from {seen}); "
                        )
                if bl.symbol == builds.JIT_MAJORS and not cover:
                    consequence = (
                        f"{expected}this JIT module compiles only for majors {', '.join(bl.archs)}: built on "
                        f"{arch.cc} it gets no arch to compile for (FlashInfer's get_nvcc_flags_list raises "
                        f"'No supported CUDA architectures found')"
                    )
                elif cover == "ptx":
                    consequence = (
                        f"{expected}no {arch.sm} SASS: {arch.cc} runs these kernels only by JIT-compiling "
                        f"PTX at first launch (slow start, older-arch code)"
                    )
                else:
                    consequence = (
                        f"{expected}no code for {arch.cc} is built: its kernels fail with 'no kernel image "
                        f"is available for execution on the device'"
                    )
                if placement(f.path)["where"] != "runtime":
                    severity = "low"
                out.append(
                    Finding(
                        rule=RULE_ID,
                        severity=severity,
                        path=f.path,
                        line=bl.line,
                        symbol=bl.function or bl.symbol,  # a JIT list: the module builder's name
                        present=tuple(bl.archs),
                        missing=_build_key(bl, arch),
                        consequence=consequence,
                        message=f"{bl.function or bl.symbol} lists {', '.join(bl.archs)} but not {arch.cc}",
                        arch=arch.cc,
                        source=bl.source[:200],
                        extra={"module": f.module, **placement(f.path), **_context(bl)},
                    )
                )
    return out


def _own_variant(f: FileFacts, bl: BuildList, arch: ArchSpec) -> bool:
    """A JIT module built per arch (gen_x_sm80_module, gen_x_sm90_module, gen_x_sm100_module): the
    target is not left out when a variant of the same module, in the same file, covers it."""
    if bl.symbol != builds.JIT_MAJORS or not bl.function:
        return False
    stem = builds.variant_stem(bl.function)
    return any(
        other is not bl
        and other.symbol == builds.JIT_MAJORS
        and other.function
        and builds.variant_stem(other.function) == stem
        and builds.coverage(other.archs, arch) == "sass"
        for other in f.builds
    )


def _build_key(bl: BuildList, arch: ArchSpec) -> str:
    sample = bl.archs[0]
    if bl.symbol == builds.JIT_MAJORS:
        return str(arch.major)
    if sample.startswith(("sm_", "compute_")):
        return f"sm_{arch.number}"
    if "." in sample:
        return arch.cc
    return str(arch.number)


def _context(bl: BuildList) -> dict[str, str]:
    """The function a Python module's list is written in: a list in a private function nothing calls
    builds nothing (judging.uncalled)."""
    return {"context": bl.within} if bl.within else {}
