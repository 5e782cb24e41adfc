"""What guarded code evidently needs, read from the names and strings in it.

Each feature is an `ArchFacts` field; a need is met when the arch has *any* of its features
(DeepGEMM runs on wgmma or tcgen05 hardware, and 12.0 has neither).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from capgap.arch import ArchFacts

Spelling = tuple[str, "re.Pattern[str] | None"]  # a substring it must hold; a regex when that is not all


def _spellings(*alternatives: str) -> tuple[Spelling, ...]:
    """Each alternative as (the literal it starts with, its regex; None when it is just that literal).

    Led by a literal, the regex engine jumps between candidates (a leading `\\b` made it try every
    position of the text), and a plain `in` rules most texts out before any regex runs.
    """
    out: list[Spelling] = []
    for alt in alternatives:
        literal = re.match(r"[a-z0-9_]+(?!\?)", alt)  # `sm_?90a`: "sm", the `_` is optional
        assert literal is not None, alt
        out.append((literal[0], None if alt == literal[0] else re.compile(alt)))
    return tuple(out)


# (features any of which the code needs, their spellings in lowercased names and strings).
# `\bx\b` is written `x(?<=\bx)\b`: the same matches, led by the literal.
NEEDS: tuple[tuple[tuple[str, ...], tuple[Spelling, ...]], ...] = (
    (
        ("wgmma",),
        _spellings(
            "wgmma",
            # `warpgroup.make_smem_layout_atom`: CuTe's swizzled smem layout, no MMA (quack's SM120
            # GEMM builds its tiles with it too)
            r"warpgroup(?!\.(?:make_smem_layout_atom|smemlayoutatomkind))",
            "sm_?90a",
            "flash_?attn_?v?3",
            "flash_?attention_?v?3",
            r"fa3(?<=\bfa3)(?:\b|_)",  # `fa3`, `fa3_available`
            r"_fa3(?:\b|_)",  # `FP8_FA3`, `use_fa3_kernel`
            r"_sm90(?:\b|_)",
        ),
    ),
    (
        ("tcgen05",),
        _spellings(
            "tcgen05",
            r"tmem(?<=\btmem)(?:\b|_)",
            "_tmem",
            r"umma(?<=\bumma)\b",
            "sm_?100a",
            r"_sm100(?:\b|_)",
            "sm10x",
            r"cta_group(?<=\bcta_group)\b",  # `cta_group::2`: the 2-SM MMA of tcgen05 PTX
            "trtllm[-_]?gen",  # `trtllm_gen_fmha`, FlashInfer's backend="trtllm-gen"
            "flashinfer_trtllm",  # the TRT-LLM-gen fused MoE / FP8 GEMM backends (SM100 cubins)
            # FlashInfer's `trtllm_ragged_attention_deepseek`: trtllm-gen FMHA cubins, or its
            # `cute-dsl` SM100 FMHA (flashinfer/prefill.py); engines gate it on 10.x
            "trtllm_ragged",
            "cutlass_mla",
        ),
    ),
    # DeepGEMM, FlashMLA: Hopper's wgmma or Blackwell's tcgen05 kernels. `hpc`: Tencent's HPC-Ops,
    # CuTe/CUTLASS kernels for SM90 ("Requirements: NVIDIA SM90 architecture GPU", its README) and
    # SM100 builds; the word alone (`import hpc`, `_hpc_ihc_op`), not inside another
    (("wgmma", "tcgen05"), _spellings("deep_?gemm", "flash_?mla", "hpc(?<![a-z0-9]hpc)(?![a-z0-9])")),
    # the Tensor Memory Accelerator: by name, or its bulk-copy PTX (`cp.async.bulk.tensor`, and the
    # plain bulk copies and stores it brought: `cp.async.bulk.global.shared::cta`)
    (("tma",), _spellings(r"tma(?:(?<=\btma)|(?<=_tma))(?:\b|_)", r"cp[._]async[._]bulk")),
    # thread-block clusters (sm_90 and newer): launched with cluster dimensions, synchronized on the
    # cluster barrier, or grouped by cooperative groups' cluster API
    (
        ("clusters",),
        _spellings(
            "__cluster_dims__",
            r"barrier[._]cluster",
            "cluster_arrive",  # CuTe DSL's cluster barrier
            "cluster_wait",
            "cudalaunchattributeclusterdimension",
            "this_cluster",
            "cluster_group",
        ),
    ),
    (("fp4_tensor_cores",), _spellings("nvfp4", "mxfp4", r"fp4(?<=\bfp4)\b", "_fp4", "fp4_", "e2m1")),
    # (MXFP8 before FP8: its need is the block-scaled MMA, the FP8 one comes with it)
    (("block_scaled_mma",), _spellings("mxfp8", "mx_fp8", "mxfp6")),
    (("fp8_tensor_cores",), _spellings(r"fp8(?<=\bfp8)\b", "_fp8", "fp8_", "e4m3", "e5m2")),
    (("nvls_multicast",), _spellings("multicast", "multimem", r"nvls(?<=\bnvls)\b", "_nvls", "nvls_")),
    (("nvswitch",), _spellings("mnnvl", "nvswitch")),
    # PTX of sm_90 and newer (arch.facts DERIVED): programmatic dependent launch asked for or
    # waited on, `elect_one()` (elect.sync), register reallocation
    (
        ("ptx_sm90",),
        _spellings(
            "griddepcontrol",
            "is_arch_support_pdl",
            "supports_pdl",
            # the word `pdl` in a name: `launch_pdl=True`, `ENABLE_PDL`, `pdl_sync()`, `use_pdl`
            r"pdl(?<![a-z0-9]pdl)(?![a-z0-9])",
            "programmatic_?stream_?serialization",
            "cudagriddependencysynchronize",  # the CUDA device API of PDL
            "cudatriggerprogrammaticlaunchcompletion",
            "gdc_wait",  # Triton's PDL wait / launch_dependents (`USE_GDC`)
            "gdc_launch_dependents",
            r"mbarrier\.try_wait",
            "elect_one",
            r"elect\.sync",
            "setmaxnreg",
            "setmaxregister",
        ),
    ),
    # packed FP32 arithmetic (`fma.rn.ftz.f32x2`, `__ffma2_rn`): sm_100 and newer
    (("ptx_sm100",), _spellings("f32x2", "ffma2", "fmul2", "fadd2")),
    # (`cute.arch.warp_redux_sync(x, "fmax")`: CuTe DSL's spelling of the same instruction)
    (
        ("redux_f32",),
        _spellings(r"redux\.sync\.(?:min|max)[.a-z]*\.f32", r"warp_redux_sync\([^)]*['\"]f(?:max|min)"),
    ),
    (("cvt_rs",), _spellings(r"cvt[._]rs(?![a-z0-9])")),  # (`CVT_RS_SUPPORTED_ARCHES`)
    # collectives between GPUs: nothing to run on a one-GPU system (a Jetson, a DGX Spark)
    (
        ("multi_gpu",),
        _spellings("all_?reduce", "all_?gather", "reduce_?scatter", "all_?to_?all", "all2all", "symm_?mem"),
    ),
    # `if not is_fully_connected(ids): return None`, `is_full_nvlink`: a path that then needs GPUs
    # joined by NVLink, which GeForce / RTX PRO boards have none of
    (("nvlink",), _spellings("is_fully_connected", "nvlink")),
)
# Kernel libraries whose upstream releases build for SM90 (wgmma) and SM100 (tcgen05) only: DeepGEMM
# (README: "Hopper or Blackwell architecture GPUs, sm_90a / sm_100a") and FlashMLA (README: SM90 and
# SM100 kernels). Forks may add other archs (an engine's vendored copy): their name is evidence only
# where the code probes the upstream package itself (`import deep_gemm`) behind an open-ended test.
LIBRARIES = ("deep_gemm", "deepgemm", "flash_mla", "flashmla")
_MAX_CHARS = 8000  # the guarded code's start says what it needs; a long tail only costs time


def library_of(seen: str) -> str:
    """The kernel library of LIBRARIES (underscores dropped) an evidence word names, or ""
    (`"'DeepGemmQuantScaleFMT' (line 368)"` -> `deepgemm`)."""
    word = (seen.split("'")[1] if "'" in seen else seen).lower().replace("_", "")
    return next((lib.replace("_", "") for lib in LIBRARIES if lib.replace("_", "") in word), "")


# Predicate names (`is_sm100`, `has_device_capability`, `supports_tma`) say which arch a test asks
# about, not what the code it guards runs
PREDICATE_NAMES = re.compile(r"\b_?(?:is|has|supports?)_\w+")


def needs_in(text: str) -> list[tuple[str, ...]]:
    """The feature needs evident in `text` (names and strings, lowercased)."""
    text = text[:_MAX_CHARS]
    return [feats for feats, spellings in NEEDS if any(_spelled(text, s) for s in spellings)]


def _spelled(text: str, spelling: Spelling) -> bool:
    literal, pattern = spelling
    return literal in text and (pattern is None or pattern.search(text) is not None)


def lacking(needs: list[tuple[str, ...]], arch: ArchFacts) -> list[tuple[str, ...]]:
    return [feats for feats in needs if not any(has(arch, f) for f in feats)]


def had_by(need: tuple[str, ...], archs: Iterable[ArchFacts]) -> bool:
    """Does one of `archs` have the need (any of its features)? A need none of the archs that get
    a path has explains nothing about why the target is left out of it."""
    return any(has(arch, feat) for arch in archs for feat in need)


# More shared memory per block than `N` KB: a kernel whose stated size only GPUs with more can
# launch (`#define SMEM_TOTAL 221696`); N is the largest per-block limit of an arch below it.
_SMEM = re.compile(r"smem_over_(\d+)kb")


def smem_need(nbytes: int) -> tuple[str, ...] | None:
    """The need of a kernel that launches with `nbytes` of shared memory per block: more than the
    largest per-block limit of the known archs that is below it (None: every arch fits it)."""
    from capgap.arch import all_facts

    below = [a.smem_per_block_kb for a in all_facts().values() if a.smem_per_block_kb * 1024 < nbytes]
    return (f"smem_over_{max(below)}kb",) if below else None


def has(arch: ArchFacts, feature: str) -> bool:
    """Does the arch have the feature (a shared-memory need: more than its per-block limit)?"""
    hit = _SMEM.fullmatch(feature)
    if hit is not None:
        return arch.smem_per_block_kb > int(hit[1])
    return arch.has(feature)


# how the derived facts (arch.facts DERIVED) read in a finding
_DERIVED_WORDS = {
    "ptx_sm90": "sm_90 PTX (griddepcontrol, elect.sync, setmaxnreg)",
    "ptx_sm100": "packed FP32 (f32x2) PTX of sm_100 and newer",
    "redux_f32": "redux.sync on f32 (sm_100a/sm_103a only)",
    "cvt_rs": "stochastic-rounding cvt.rs (sm_100a/sm_103a only)",
    "multi_gpu": "more than one GPU in a system",
    "sm100_build": "code built for the SM100 family (sm_100a/sm_100f/sm_103a)",
    "block_scaled_mma": "block-scaled (MX format) tensor-core MMA",
    "torch_fa4": "torch's registered FA4 attention (compute capability 9.x or 10.x only)",
}


def describe(feats: tuple[str, ...]) -> str:
    return " or ".join(
        _DERIVED_WORDS.get(f)
        or _SMEM.sub(r"more than \1 KB of shared memory per block", f)
        .replace("_tensor_cores", " tensor cores")
        .replace("nvls_", "NVLS ")
        .replace("nvlink", "NVLink")
        for f in feats
    )


# Kernel classes named after the arch they are written for: `GroupedGemmKernelSm100Fp8`,
# `Sm90GemmKernel` (case kept: in lowercased text "sm100" is also any arch number).
_KERNEL_CLASS = (
    (("tcgen05",), re.compile(r"\b\w*?(?:[a-z0-9]Sm10[03]|\bSm10[03](?=[A-Z]))\w*")),
    (("wgmma",), re.compile(r"\b\w*?(?:[a-z0-9]Sm90a?|\bSm90a?(?=[A-Z]))\w*")),
)


def kernel_classes(text: str) -> tuple[list[tuple[str, ...]], list[str]]:
    """Needs read from arch-named kernel classes in code whose case is kept."""
    needs: list[tuple[str, ...]] = []
    where: list[str] = []
    text = text[:_MAX_CHARS]
    if "Sm" not in text:
        return needs, where
    for feats, pattern in _KERNEL_CLASS:
        hit = pattern.search(text)
        if hit:
            needs.append(feats)
            where.append(f"'{hit[0]}'")
    return needs, where


# Spellings that name an arch, not what its code uses: in a message ("Using fp8 KV cache on SM10x",
# "Auto-enabling AllReduce Fusion on SM90/SM10X") they say which GPUs the authors meant, not why
# (as judging.remarks reads prose); in a name or a flag (`_sm100_kernel`, "-arch=sm_100a") they
# name the code's build.
_ARCH_NAME = re.compile(r"sm_?(?:90|10[0-9])a|_?sm_?(?:90|10[0-9x])\b|_sm(?:90|100)_", re.I)
# A one-line string literal with a space in it: prose (a message, a log line), not a name or a flag
_PROSE_STRING = re.compile(r"""(["'])(?:\\.|(?!\1)[^\\\n])*?[ \t](?:\\.|(?!\1)[^\\\n])*?\1""")


# unless the message says the path needs the arch ("... requires its packed API, CUDA SM10x, ..."):
# the authors' word that it cannot run elsewhere, as a refusal's text is
_REQUIREMENT = re.compile(r"requir|\bneeds?\b|only (?:on|for|supported|runs)", re.I)
_MESSAGE_BEFORE = 80  # characters before a literal that its message may have begun in


def arch_names_unsaid(code: str) -> str:
    """`code` with the arch names inside its prose strings blanked (same length, lines kept),
    but for a string that states a requirement."""
    if "sm" not in code.lower():
        return code

    def unsaid(string: re.Match[str]) -> str:
        # (a message runs over several literals: "... requires its " "API, CUDA SM10x, ...")
        if _REQUIREMENT.search(code, max(0, string.start() - _MESSAGE_BEFORE), string.end()):
            return string[0]
        return _ARCH_NAME.sub(lambda a: " " * len(a[0]), string[0])

    return _PROSE_STRING.sub(unsaid, code)


def needs_with_evidence(
    text: str, first_line: int | Sequence[int] = 0, limit: int | None = _MAX_CHARS
) -> tuple[list[tuple[str, ...]], list[str]]:
    """The needs in `text` (lowercased code) and, for each, the spelling it was read from and on
    which line (`first_line`: the file line `text` starts at, or the file line of each of its
    lines where it joins several ranges; 0 leaves lines out; `limit`: the characters read, None
    for all of a module read whole)."""
    text = text[:limit] if limit is not None else text
    needs: list[tuple[str, ...]] = []
    where: list[str] = []
    for feats, spellings in NEEDS:
        for spelling in spellings:
            start = _find(text, spelling)
            if start < 0:
                continue
            needs.append(feats)
            word = re.match(r"[a-z0-9_]+", text[start:])
            line = f" (line {_file_line(first_line, text.count(chr(10), 0, start))})" if first_line else ""
            where.append(f"'{word[0] if word else spelling[0]}'{line}")
            break
    return needs, where


def _file_line(first_line: int | Sequence[int], index: int) -> int:
    if isinstance(first_line, int):
        return first_line + index
    return first_line[min(index, len(first_line) - 1)]


def _find(text: str, spelling: Spelling) -> int:
    literal, pattern = spelling
    if literal not in text:
        return -1
    if pattern is None:
        return text.index(literal)
    hit = pattern.search(text)
    return hit.start() if hit else -1
