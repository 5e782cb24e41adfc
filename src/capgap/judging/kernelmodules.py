"""What the kernel modules a module drives need, when they all agree: the evidence of a gate whose
own code only checks and hands on (an API's `check_support`, an adapter's eligibility test).

cuDNN's `native_sparse_attention/compression/api.py` imports `BlackwellFusedMultiHeadAttentionForward`
from `fmha.py` beside it (tcgen05, TMEM) and its `check_support` refuses only `cc < 100`; FlashInfer's
`kda_prefill_cute.py` imports `kda_kernels/kda_chunked_bt16.py` in its run function. A need every
kernel module it imports has is what its path runs; one module named for the target's arch
(`sm120_prefill.py`), or kernels that disagree, say nothing of it. The same holds of the kernel
modules beside a gate in a kernel family's own small package (FlashInfer's `prims_ts/gemm/api.py`
and the `kernel.py` it loads by file).
"""

from __future__ import annotations

import re

from capgap.arch import ArchFacts, all_facts
from capgap.judging import evidence
from capgap.judging.records import OWN_KERNEL_CODE, FileFacts
from capgap.judging.registry import Registry

MAX_MODULES = 8  # read modules driven or beside it; more is a library of many families
_ARCH_IN_FILE = re.compile(r"sm_?(\d{2,3}|\d+x)")  # `sm120_prefill.py`: "120"


def package_need(
    f: FileFacts, reg: Registry, target: ArchFacts, having: list[str]
) -> tuple[tuple[str, ...], str] | None:
    """What every module of the decision's own directory whose kernel code was read needs, and the
    target lacks while one of `having` (the archs that get the path) has it (a kernel family's
    package: its API module gates what its kernel modules run); None when the directory holds
    none, too many, one named for the target's own arch, or kernels that disagree."""
    package = f.module.rpartition(".")[0]
    if not package:
        return None
    own = [m for m in reg.callees.in_package(package) if m.module != f.module]
    if one_named_for(own, target):
        return None  # `sm120_prefill.py` beside `chunked_bt16.py`: the target has a kernel of its own
    # a kernel module another module of the package imports, which the decision's module does not
    # reach, is that module's (vLLM's `ops/fused_wo_a.py`, imported by `o_proj.py`, beside `mhc.py`)
    reach = {f.module, *f.siblings}
    reach |= {s for m in own if m.module in reach for s in m.siblings}
    kernels = [
        k
        for k in own
        if k.kernels
        and (k.module in reach or not any(k.module in m.siblings for m in own if m.module not in reach))
    ]
    if len(own) >= MAX_MODULES:
        return None  # `flashinfer/gemm/`: a library of many families, not one family's package
    if not kernels and not any(k.kernels for k in own):
        # a family whose kernel sources the wheel does not ship (`cake_jit.py` naming generated
        # programs): what each module beside the gate states it runs, when they all say it. Where
        # some kernel code of the package was read, it speaks for the package: a kernel module the
        # gate does not reach is another op's (vLLM's `fused_wo_a.py` beside `mhc.py`)
        stating = [k for k in own if k.needs]
        # what it imports says what its path runs; else the family's modules must say it together
        # (`cake_backend.py` and `cake_jit.py`), not one docstring in a package of alternatives
        # (sglang's `linear/kernels/`: a tcgen05 KDA kernel beside the portable GDN ones)
        kernels = [k for k in stating if k.module in reach] or (stating if len(stating) >= 2 else [])
        said = "module of its package that says what it runs"
        return every_kernel_needs(kernels, target, having, "", modules=said) if kernels else None
    if not kernels:
        return None
    return every_kernel_needs(kernels, target, having, "beside it")


def driven_need(
    f: FileFacts, reg: Registry, target: ArchFacts, having: list[str]
) -> tuple[tuple[str, ...], str] | None:
    """What every kernel module of its package `f` imports (at its top or in a function) needs,
    the target lacks and one of `having` (the archs that get the path) has, with where it is
    stated; None when it imports none whose kernel code was read, one named for the target's
    arch, or kernels that disagree."""
    if f.kernels:
        return None  # a kernel module itself, whose own code was read: it runs that first
    driven = _driven(f, reg)
    if one_named_for(driven, target):
        return None  # it drives a kernel of the target's own too
    kernels = [g for g in driven if g.kernels]
    return (
        every_kernel_needs(kernels, target, having, f"{f.path} drives", code_only=True) if kernels else None
    )


def driven_portable(f: FileFacts, reg: Registry, target: ArchFacts) -> str:
    """The kernel code read in the kernel modules of its package `f` imports, when there is some
    and none of those modules needs anything the target lacks, by any evidence (its imports, those
    of modules it imports, its path, its docstring): cuDNN's `rope/tail.py` refuses all but 10.0
    in words, but the kernel it runs, `rope/frost/tail.py`, is SIMT CuTe DSL code. "" otherwise,
    and for a module with kernel code of its own (read as `f.kernels`)."""
    if f.kernels or f.loads_by_name:
        return ""  # (a module importing others by name may run kernels none of its imports holds)
    driven = _driven(f, reg)
    # Python kernel code of their own (`@cute.kernel`, `@triton.jit`): a `.cu` a JIT module names
    # may take its tcgen05 from headers it includes
    kernels = [g for g in driven if g.kernels.startswith(OWN_KERNEL_CODE)]
    if not kernels or any(evidence.lacking(g.needs, target) for g in driven):
        return ""
    named = [f"{g.kernels.removeprefix('its own ')} of {g.path.rsplit('/', 1)[-1]}" for g in kernels[:3]]
    return "; ".join(named)


def _driven(f: FileFacts, reg: Registry) -> list[FileFacts]:
    """The modules of its package `f` imports (at its top or in a function) that the scan read."""
    return [g for g in map(reg.callees.module, f.siblings[:MAX_MODULES]) if g is not None]


def _read(m: FileFacts, code_only: bool) -> list[tuple[str, ...]]:
    """The module's needs; with `code_only`, those its own imports and kernel code spell (not its
    path, its docstring, nor a module it imports in turn)."""
    if not code_only:
        return m.needs
    return [
        n
        for n, seen in zip(m.needs, m.needs_from, strict=True)
        if _OWN_CODE.search(seen) and " via " not in seen
    ]


# how judging.extract says it read a need from the module's imports or its own kernel code
_OWN_CODE = re.compile(r"imported at line \d+$|in its kernel code$")


def one_named_for(modules: list[FileFacts], target: ArchFacts) -> bool:
    """Is one of the modules named for the target's arch (`sm120_prefill.py`, `sm12x_gemm.py`)?"""
    return any(
        names_target(tuple(_ARCH_IN_FILE.findall(m.path.rsplit("/", 1)[-1].lower())), target) for m in modules
    )


def names_target(numbers: tuple[str, ...], target: ArchFacts) -> bool:
    """Does one of the arch numbers code or a file name spells mean the target (`120`, `12x`)?"""
    own = f"{target.major}{target.minor}"
    return any(n == own or n == f"{target.major}x" for n in numbers)


def every_kernel_needs(
    kernels: list[FileFacts],
    target: ArchFacts,
    having: list[str],
    whose: str,
    code_only: bool = False,
    modules: str = "kernel module",
) -> tuple[tuple[str, ...], str] | None:
    """A need every one of the kernel modules has, which the target lacks and one of `having` has,
    with where the first states it; `whose` says which kernel modules they are (`modules`: what they
    are called, where no kernel code of theirs was read). `code_only`: not a need only their paths
    or docstrings state (`causal_conv1d_update_sm100/kernel.py`, SIMT)."""
    facts = all_facts()
    for need in kernels[0].needs:
        shared = all(need in _read(m, code_only) for m in kernels[1:]) and need in _read(
            kernels[0], code_only
        )
        had = evidence.had_by(need, (facts[cc] for cc in having))
        if shared and had and evidence.lacking([need], target):
            first = kernels[0]
            names = ", ".join(m.path.rsplit("/", 1)[-1] for m in kernels[:3])
            seen = first.needs_from[first.needs.index(need)]
            every = " ".join(w for w in ("every", modules, whose) if w)
            return need, f"{seen} in {first.path}: {every} ({names}) needs it"
    return None
