"""Read one file's CUDA kernel images: shared objects, bare cubins and bare fatbins alike."""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from pathlib import Path

from capgap.binaries.compat import Image, sort_names
from capgap.binaries.elf import BinaryReadError, read_elf
from capgap.binaries.fatbin import MAGIC_BYTES as FATBIN_MAGIC
from capgap.binaries.fatbin import FatbinEntry, FatbinError, parse
from capgap.binaries.names import is_candidate_name
from capgap.boundedread import open_regular

ELF_MAGIC = b"\x7fELF"
LISTED = ("", ".nv_fatbin")  # what cuobjdump lists; "" = a bare .cubin/.fatbin file
RELOCATABLE = "__nv_relfatbin"  # device code awaiting a device link: never loaded as is


class UnreadableBinary(Exception):
    """A file that looks like a binary capgap reads, but cannot be parsed; becomes a Skipped."""


@dataclass(frozen=True)
class CudaBinary:
    path: Path
    size: int
    format: str  # "elf" | "cubin" | "fatbin"
    entries: tuple[tuple[str, FatbinEntry], ...]  # (section, entry) in file order

    @property
    def listed(self) -> list[FatbinEntry]:
        """The SASS/PTX images cuobjdump lists: `.nv_fatbin` (or the bare file), in file order."""
        return [e for s, e in self.entries if s in LISTED and e.kind in ("sass", "ptx")]

    @property
    def embedded(self) -> list[FatbinEntry]:
        """SASS/PTX images of containers embedded in data sections (loaded by the library itself)."""
        return [e for s, e in self.entries if s not in LISTED and _kernel_image(s, e)]

    @property
    def loadable(self) -> list[FatbinEntry]:
        """Every image the GPU may be asked to run: listed plus embedded, without relocatable code
        and without modules known to hold no kernel (those can never fail a launch)."""
        return [e for s, e in self.entries if _kernel_image(s, e)]

    @property
    def empty(self) -> int:
        """Images of modules without any kernel (not judged)."""
        return sum(1 for s, e in self.entries if s != RELOCATABLE and e.empty)

    @property
    def images(self) -> list[Image]:
        return [Image.from_sm(e.kind, e.sm, e.suffix) for e in self.loadable]

    @property
    def has_kernels(self) -> bool:
        return bool(self.loadable)

    @property
    def sass(self) -> tuple[str, ...]:
        return sort_names(i for i in self.images if i.kind == "sass")

    @property
    def ptx(self) -> tuple[str, ...]:
        return sort_names(i for i in self.images if i.kind == "ptx")

    @property
    def compressed(self) -> int:
        return sum(1 for e in self.loadable if e.compression)

    def modules(self) -> list[list[Image]]:
        """The images grouped by fatbin container (one container per compiled module)."""
        groups: dict[tuple[str, int], list[Image]] = {}
        for section, e in self.entries:
            if _kernel_image(section, e):
                groups.setdefault((section, e.container), []).append(Image.from_sm(e.kind, e.sm, e.suffix))
        return list(groups.values())


def _kernel_image(section: str, e: FatbinEntry) -> bool:
    return section != RELOCATABLE and e.kind in ("sass", "ptx") and not e.empty


def is_candidate(path: Path) -> bool:
    """A file name that may hold kernels: *.so, *.so.N..., *.cubin, *.fatbin."""
    return is_candidate_name(path.name)


def read_binary(path: Path) -> CudaBinary | None:
    """The CUDA images in `path`; None when it is neither ELF nor fatbin (not a binary at all).

    Raises UnreadableBinary when the file claims to be one but is truncated or corrupted.
    """
    try:
        fd, st = open_regular(path)  # never a FIFO or a device; a file is mapped, not read
        with os.fdopen(fd, "rb") as fh:
            head = fh.read(4)
            size = st.st_size
            if head not in (ELF_MAGIC, FATBIN_MAGIC):
                return None
            if size == 0:
                return None
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                if hasattr(mm, "madvise") and hasattr(mmap, "MADV_RANDOM"):
                    mm.madvise(mmap.MADV_RANDOM)  # we touch one header per entry: no readahead
                if head == FATBIN_MAGIC:
                    entries = tuple(("", e) for e in parse(mm))
                    return CudaBinary(path, size, "fatbin", entries)
                fmt, located = read_elf(fh, mm)
                return CudaBinary(path, size, fmt, tuple(located))
    except (BinaryReadError, FatbinError) as exc:
        raise UnreadableBinary(str(exc)) from exc
    except OSError as exc:
        raise UnreadableBinary(f"cannot read: {exc.strerror or exc}") from exc
