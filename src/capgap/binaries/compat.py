"""Which embedded kernel images a GPU of a given compute capability can run.

Rules (CUDA Programming Guide, binary and PTX compatibility; NVIDIA blog on family-specific
features; measured on an H200, see design.md):
- SASS sm_XY (and its alias sm_XYf) runs natively on X.Z for Z >= Y, same major only.
- SASS sm_XYa runs only on exactly X.Y.
- PTX compute_XY is JIT-compiled by the driver for any X'.Y' >= X.Y, across majors; the first
  launch pays the compilation (cached afterwards in the driver's compute cache).
- PTX compute_XYa: exactly X.Y. PTX compute_XYf: its family, same major and minor >= Y.
- Nothing matching: cudaErrorNoKernelImageForDevice (209).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

NO_IMAGE = "no kernel image is available for execution on the device"

NATIVE = "native"
PTX_JIT = "ptx-jit"
MISSING = "missing"


@dataclass(frozen=True, order=True)
class Image:
    """One embedded kernel image: SASS (a cubin) or PTX, for one arch."""

    major: int
    minor: int
    suffix: str = ""  # "", "a" or "f"
    kind: str = "sass"  # "sass" | "ptx"

    @classmethod
    def from_sm(cls, kind: str, sm: int, suffix: str = "") -> Image:
        if kind == "sass" and suffix == "f":
            suffix = ""  # code=sm_XYf and code=sm_XY are aliases: the same cubin
        return cls(sm // 10, sm % 10, suffix, kind)

    @property
    def name(self) -> str:
        prefix = "compute" if self.kind == "ptx" else "sm"
        return f"{prefix}_{self.major * 10 + self.minor}{self.suffix}"

    def runs_on(self, major: int, minor: int) -> bool:
        if self.suffix == "a":
            return (major, minor) == (self.major, self.minor)
        if self.kind == "sass" or self.suffix == "f":  # same major, minor >= ours
            return major == self.major and minor >= self.minor
        return (major, minor) >= (self.major, self.minor)


def sort_names(images: Iterable[Image]) -> tuple[str, ...]:
    return tuple(i.name for i in sorted(set(images)))


@dataclass(frozen=True)
class Verdict:
    """What a GPU of `cc` gets from a library: its own SASS, PTX through the JIT, or nothing."""

    cc: str
    status: str  # NATIVE | PTX_JIT | MISSING
    via: tuple[str, ...]  # the images that serve it (best first)
    modules: int  # compiled modules (fatbin containers) with kernels
    # of those, how many have nothing for `cc` (often by design: arch-specific kernels that the
    # library only dispatches on their own GPU), reported in JSON, not judged
    modules_without_image: int

    @property
    def major_minor(self) -> tuple[int, int]:
        major, minor = self.cc.split(".")
        return int(major), int(minor)

    @property
    def text(self) -> str:
        if self.status == NATIVE:
            return f"native {self.via[0]}"
        if self.status == PTX_JIT:
            return f"PTX JIT from {self.via[0]} (first launch compiles)"
        return "NO IMAGE"

    def to_json(self) -> dict[str, object]:
        return {
            "cc": self.cc,
            "status": self.status,
            "via": list(self.via),
            "modules": self.modules,
            "modules_without_image": self.modules_without_image,
            "text": self.text,
        }


def _best_first(images: Iterable[Image]) -> list[Image]:
    # the driver prefers the newest compatible SASS, then the newest PTX
    return sorted(images, key=lambda i: (i.kind != "sass", -i.major, -i.minor, i.suffix))


def judge(modules: Sequence[Sequence[Image]], major: int, minor: int) -> Verdict:
    """The verdict for a library made of `modules` (each the images of one fatbin container)."""
    cc = f"{major}.{minor}"
    runnable = [i for m in modules for i in m if i.runs_on(major, minor)]
    with_kernels = [m for m in modules if m]
    lacking = sum(1 for m in with_kernels if not any(i.runs_on(major, minor) for i in m))
    if not runnable:
        return Verdict(cc, MISSING, (), len(with_kernels), lacking)
    best = _best_first(set(runnable))
    status = NATIVE if best[0].kind == "sass" else PTX_JIT
    return Verdict(cc, status, tuple(i.name for i in best), len(with_kernels), lacking)
