"""A library built only as arch-specific code: why a GPU outside those archs has no image by design.

`-arch=sm_90a` or `sm_100a`/`sm_100f` is what a kernel needs to use wgmma or tcgen05 (PTX ISA,
target requirements). A library whose every image is such a target, none of them in the asked GPU's
family (FlashAttention-3's sm_90a, FlashMLA's sm_90a + sm_100f, DeepSelect's sm_100f), was written
for features those GPUs have and the asked one lacks: its missing image is expected, not a
forgotten build arch. One portable image (sm_80, compute_90) among them and the library could
have been built for the asked GPU too: then the missing image stays a gap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from capgap.arch.facts import all_facts
from capgap.binaries.reader import CudaBinary, UnreadableBinary, read_binary

# the features an arch-specific target unlocks, in the facts file's words
_UNLOCKED = ("wgmma", "tcgen05")
_IMAGE = re.compile(r"(sm|compute)_(\d{2,3})([af]?)")


@dataclass(frozen=True)
class ArchSpecific:
    images: tuple[str, ...]  # the library's targets, cuobjdump's spelling: sm_90a, sm_100f
    features: tuple[str, ...]  # what those targets have and the asked GPU lacks: wgmma, tcgen05


def bound_to_features(binary: CudaBinary) -> ArchSpecific | None:
    """The features a library is bound to, whatever GPU asks: every image is an arch-specific target
    (`sm_90a`, `sm_100f`) of an arch with wgmma or tcgen05 (None otherwise: a portable image, or an
    `sm_120f` port beside them, says its kernels need neither)."""
    return bound_images([e.name for e in binary.loadable])


def bound_images(images: list[str]) -> ArchSpecific | None:
    """bound_to_features for images by cuobjdump's names (`sm_100f`, `compute_90`): those that hold
    one kernel, or a whole library's."""
    parsed = [m for name in images if (m := _IMAGE.fullmatch(name))]
    if not parsed or len(parsed) != len(images) or any(not m[3] for m in parsed):
        return None
    facts = all_facts()
    theirs = [facts.get(f"{int(m[2]) // 10}.{int(m[2]) % 10}") for m in parsed]
    features = tuple(f for f in _UNLOCKED if any(a is not None and a.has(f) for a in theirs))
    if not features or not all(a is not None and any(a.has(f) for f in features) for a in theirs):
        return None
    names = sorted(set(images), key=lambda n: (int("".join(filter(str.isdigit, n))), n))
    return ArchSpecific(tuple(names), features)


def arch_specific_only(binary: CudaBinary, major: int, minor: int) -> ArchSpecific | None:
    """Why `binary` has no image for `major.minor` by design, or None when it could have one."""
    bound = bound_to_features(binary)
    if bound is None or any(e.sm // 10 == major for e in binary.loadable):
        return None  # sm_120a read for 12.1: its own family's build
    target = all_facts().get(f"{major}.{minor}")
    if target is None:
        return None
    facts = all_facts()
    theirs = [facts.get(f"{e.sm // 10}.{e.sm % 10}") for e in binary.loadable]
    features = tuple(f for f in bound.features if not target.has(f))
    # every image must be explained: an sm_120f image beside sm_90a ones, read for 8.9, is a port
    # to a GPU without wgmma or tcgen05, so the kernel is not bound to those features
    if not features or not all(a is not None and any(a.has(f) for f in features) for a in theirs):
        return None
    return ArchSpecific(bound.images, features)


def bound_library(path: str) -> ArchSpecific | None:
    """What the library at `path` is bound to (bound_to_features); None when it is not, is no
    binary, or cannot be read (then nothing is known of it)."""
    try:
        binary = read_binary(Path(path))
    except UnreadableBinary:
        return None
    return bound_to_features(binary) if binary is not None else None
