"""The compile environments a device pass sees, per arch and variant, as nvcc 13 sets them.

Measured with `nvcc -gencode arch=compute_XX,code=sm_XX -E` on marker files (the tests do it
again where nvcc is installed): every variant sets `__CUDA_ARCH__` = major*100 + minor*10;
`a` (arch-specific) adds `__CUDA_ARCH_SPECIFIC__` and `__CUDA_ARCH_FAMILY_SPECIFIC__` (both the
same number) and, on 9.0, 10.0, 10.3 and 12.0, `__CUDA_ARCH_FEAT_SMXX_ALL`; `f` (family) adds
only `__CUDA_ARCH_FAMILY_SPECIFIC__`. (`-arch=sm_120a -E` alone sets none of them.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from capgap.arch import ArchFacts, all_facts

_FEAT_ALL = {90, 100, 103, 120}  # archs whose `a` variant sets __CUDA_ARCH_FEAT_SMXX_ALL
COMPILER = {"__CUDACC__": 1, "__NVCC__": 1, "__CUDACC_VER_MAJOR__": 13, "__CUDACC_VER_MINOR__": 0,
            "__CUDACC_VER_BUILD__": 88, "CUDART_VERSION": 13000, "__CUDA_API_VER_MAJOR__": 13,
            "__CUDA_API_VER_MINOR__": 0, "true": 1, "false": 0, "__cplusplus": 201703,
            "__linux__": 1}  # fmt: skip
# Macros a Linux nvcc build never sets (another compiler or platform): undefined, so 0.
NEVER = frozenset({
    "__clang__", "__CUDA__", "__HIP__", "__HIPCC__", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__",
    "__HIP_DEVICE_COMPILE__", "USE_ROCM", "_MSC_VER", "_WIN32", "_WIN64", "__INTEL_COMPILER",
    "__CUDACC_RTC__", "__NVCOMPILER", "__APPLE__", "__QNX__", "CUTLASS_CLANG_CUDA_DEVICE",
})  # fmt: skip


@dataclass(frozen=True)
class Env:
    name: str  # sm_120a
    cc: str  # 12.0
    variant: str  # "" | "a" | "f"
    number: int  # 120
    macros: dict[str, int] = field(hash=False, compare=False)

    def known(self, name: str) -> int | None:
        """1/0 for a name this environment decides (`defined`), None when the tree must say."""
        if name in self.macros:
            return 1
        if name in NEVER or name.startswith("__CUDA_ARCH"):
            return 0
        return None


def env(facts: ArchFacts, variant: str) -> Env:
    number = facts.number
    arch = number * 10
    macros = dict(COMPILER)
    macros["__CUDA_ARCH__"] = arch
    macros["__CUDA_ARCH_LIST__"] = arch
    if variant == "a":
        macros["__CUDA_ARCH_SPECIFIC__"] = arch
        macros["__CUDA_ARCH_FAMILY_SPECIFIC__"] = arch
        if number in _FEAT_ALL:
            macros[f"__CUDA_ARCH_FEAT_SM{number}_ALL"] = 1
    elif variant == "f":
        macros["__CUDA_ARCH_FAMILY_SPECIFIC__"] = arch
    return Env(f"sm_{number}{variant}", facts.cc, variant, number, macros)


def variants(facts: ArchFacts) -> tuple[str, ...]:
    """The suffixes nvcc accepts for an arch: `a` from Hopper on, `f` from Blackwell on."""
    if facts.major >= 10:
        return ("", "a", "f")
    if facts.major == 9:
        return ("", "a")
    return ("",)


def envs_for(cc: str) -> list[Env]:
    facts = all_facts()[cc]
    return [env(facts, v) for v in variants(facts)]
