"""Parse NVIDIA fatbin containers (the `.nv_fatbin` section, or a `.fatbin` file) header by header.

Layout (public reverse-engineering: the toolkit's fatbinary_section.h, n-eiling/cuda-fatbin-decompression,
jiegec/fatbinary, ZLUDA's zluda_dump; checked against cuobjdump 13.5 here), all little-endian:

container header, 16 bytes: u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries
entry header: u16 kind at 0x00 (1 PTX, 2 ELF cubin, 8 NVVM/LTO IR), u32 header size at 0x04,
    u64 payload size at 0x08 (next entry = entry + header size + payload size), u32 compressed size at
    0x10, u16 minor + u16 major at 0x18 (PTX: the PTX ISA version), u32 SM number at 0x1C (75..121,
    no suffix), u64 flags at 0x28, u64 decompressed size at 0x38 (header sizes below 0x40 stop earlier)

Only headers are read: a compressed entry is listed from its header, never inflated. Several
containers may follow each other, padded with zeros to an 8-byte boundary.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

CONTAINER_MAGIC = 0xBA55ED50
CONTAINER_HEADER = struct.Struct("<IHHQ")
MAGIC_BYTES = struct.pack("<I", CONTAINER_MAGIC)
_NONZERO = re.compile(rb"[^\x00]")  # skips padding between containers at C speed

KIND_PTX = 1
KIND_ELF = 2
KIND_IR = 8
KIND_NAMES = {KIND_PTX: "ptx", KIND_ELF: "sass", KIND_IR: "ir"}

FLAG_COMPRESS_OLD = 0x1000
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
FLAG_ARCH_SPECIFIC = 0x100000  # compiled for sm_XYa / compute_XYa
FLAG_FAMILY = 0x200000  # compiled for sm_XYf / compute_XYf

_MIN_ENTRY_HEADER = 0x20  # up to and including the SM number
_ENTRY_PREFIX = struct.Struct("<HxxIQ")  # kind, header size, payload size
# the whole 64-byte header at once (the common case): compressed size, minor, major, SM, flags, full size
_ENTRY_FULL = struct.Struct("<16xI4xHHI8xQ8xQ")
_MAX_ENTRY_HEADER = 1 << 16  # real ones are 64..112 bytes; bigger means garbage


class FatbinError(ValueError):
    """The bytes are not a well-formed fatbin container (truncated, corrupted, not a fatbin)."""


@dataclass(frozen=True, slots=True)
class FatbinEntry:
    kind: str  # "sass" | "ptx" | "ir" | "kind-N"
    sm: int  # SM number as the header writes it: 90 for sm_90/sm_90a/compute_90
    suffix: str  # "" | "a" | "f"
    compression: str  # "" | "zstd" | "lz4" | "compressed"
    payload_size: int  # bytes the entry takes in the container (maybe compressed)
    size: int  # uncompressed size (== payload_size when not compressed)
    ptx_version: tuple[int, int] | None  # PTX ISA (major, minor) of PTX entries
    container: int  # index of the container it sits in (one per compiled module)
    offset: int  # byte offset of the entry header within the parsed buffer
    # True: a module with no kernel at all (nvcc emits these for .cu files without kernels and for
    # device-link stubs); judged only for small uncompressed entries, else None (unknown)
    empty: bool | None = None

    @property
    def name(self) -> str:
        """cuobjdump's spelling: sm_90a for SASS, compute_90a for PTX."""
        prefix = "compute" if self.kind == "ptx" else "sm"
        return f"{prefix}_{self.sm}{self.suffix}"


def _compression(flags: int) -> str:
    if flags & FLAG_ZSTD:
        return "zstd"
    if flags & FLAG_LZ4:
        return "lz4"
    if flags & FLAG_COMPRESS_OLD:
        return "compressed"
    return ""


def _suffix(flags: int) -> str:
    if flags & FLAG_ARCH_SPECIFIC:
        return "a"
    if flags & FLAG_FAMILY:
        return "f"
    return ""


def _fields(buf: memoryview | bytes, at: int, header_size: int) -> tuple[int, int, int, int, int, int]:
    """(compressed size, minor, major, SM, flags, full size) of the entry header at `at`."""
    if header_size >= _ENTRY_FULL.size:
        return _ENTRY_FULL.unpack_from(buf, at)  # type: ignore[return-value]
    head = bytes(buf[at : at + header_size]).ljust(_ENTRY_FULL.size, b"\0")  # short headers: rest is 0
    return _ENTRY_FULL.unpack_from(head, 0)  # type: ignore[return-value]


def _entry(buf: memoryview | bytes, at: int, end: int, container: int) -> tuple[FatbinEntry, int]:
    if at + _ENTRY_PREFIX.size > end:
        raise FatbinError(f"truncated entry header at {at:#x}")
    kind_id, header_size, payload_size = _ENTRY_PREFIX.unpack_from(buf, at)
    if not _MIN_ENTRY_HEADER <= header_size <= _MAX_ENTRY_HEADER:
        raise FatbinError(f"entry at {at:#x}: implausible header size {header_size}")
    next_at = at + header_size + payload_size
    if next_at > end:
        raise FatbinError(f"entry at {at:#x} ({header_size}+{payload_size} bytes) runs past its container")
    compressed_size, minor, major, sm, flags, full = _fields(buf, at, header_size)
    compression = _compression(flags) if compressed_size else ""
    kind = KIND_NAMES.get(kind_id, f"kind-{kind_id}")
    size = full if compression and full else payload_size
    ptx_version = (major, minor) if kind == "ptx" else None
    empty = (
        None
        if compression or payload_size > _EMPTY_CHECK_MAX
        else _is_empty(buf, kind, at + header_size, payload_size)
    )
    entry = FatbinEntry(
        kind, sm, _suffix(flags), compression, payload_size, size, ptx_version, container, at, empty
    )
    return entry, next_at


_EMPTY_CHECK_MAX = 16 << 10  # modules without kernels are ~2 kB; bigger ones are not checked


def _is_empty(buf: memoryview | bytes, kind: str, start: int, size: int) -> bool | None:
    """Whether a small uncompressed image holds no kernel: a cubin without `.text.*` sections,
    PTX without `.entry`. None when it cannot tell (not ELF64, odd headers)."""
    data = bytes(buf[start : start + size])
    if kind == "ptx":
        return b".entry" not in data
    if kind != "sass" or data[:5] != b"\x7fELF\x02" or len(data) < 64:
        return None
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize < 64 or not 0 < shnum <= 4096 or shstrndx >= shnum or shoff + shnum * shentsize > len(data):
        return None
    str_off = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)[0]
    for i in range(shnum):
        name_at = struct.unpack_from("<I", data, shoff + i * shentsize)[0]
        if data[str_off + name_at : str_off + name_at + 6] == b".text.":
            return False
    return True


def iter_entries(
    buf: memoryview | bytes, base: int = 0, end: int | None = None, first_container: int = 0
) -> Iterator[FatbinEntry]:
    """Every entry of every container in buf[base:end]; raises FatbinError on malformed bytes.

    Zero padding between containers is skipped; anything else that is not a container magic is
    an error (a `.nv_fatbin` section holds nothing but containers).
    """
    end = len(buf) if end is None else end
    at, container = base, first_container
    while at < end:
        if end - at < CONTAINER_HEADER.size:
            if bytes(buf[at:end]).strip(b"\0"):
                raise FatbinError(f"trailing bytes at {at:#x} are not a container")
            return
        magic, _version, header_size, size = CONTAINER_HEADER.unpack_from(buf, at)
        if magic != CONTAINER_MAGIC:
            if magic == 0:  # alignment padding between containers: skip the zero bytes
                nonzero = _NONZERO.search(buf, at, end)  # type: ignore[call-overload]
                at = nonzero.start() if nonzero else end
                continue
            raise FatbinError(f"no fatbin container magic at {at:#x} (found {magic:#010x})")
        if header_size < CONTAINER_HEADER.size or at + header_size + size > end:
            raise FatbinError(f"container at {at:#x} claims {size} bytes, more than there are")
        pos, container_end = at + header_size, at + header_size + size
        while pos < container_end:
            entry, pos = _entry(buf, pos, container_end, container)
            yield entry
        at, container = container_end, container + 1


def find_containers(buf: Any, start: int, end: int) -> Iterator[FatbinEntry]:
    """Entries of fatbin containers embedded in data (`.rodata`, `.ldata`, ...), found by their magic.

    Some libraries (cuFFT: ~24,000 containers in `.ldata`) keep their kernels there and load
    them with the driver API; cuobjdump does not list them. A magic that does not start a
    well-formed container (version 1, 16-byte header, entries that parse and fit) is data and
    is passed over.
    """
    at, container = buf.find(MAGIC_BYTES, start, end), 0
    while at != -1:
        magic, version, header_size, size = (
            CONTAINER_HEADER.unpack_from(buf, at) if at + 16 <= end else (0, 0, 0, 0)
        )
        container_end = at + header_size + size
        if version == 1 and header_size == CONTAINER_HEADER.size and size and container_end <= end:
            try:
                entries = [_entry_checked(e) for e in iter_entries(buf, at, container_end, container)]
            except FatbinError:
                entries = []
            if entries:
                yield from entries
                container += 1
                at = buf.find(MAGIC_BYTES, container_end, end)
                continue
        at = buf.find(MAGIC_BYTES, at + 4, end)


def _entry_checked(e: FatbinEntry) -> FatbinEntry:
    if e.kind.startswith("kind-") or not 20 <= e.sm <= 200:
        raise FatbinError("not a kernel image")
    return e


def parse(buf: memoryview | bytes, base: int = 0, end: int | None = None) -> list[FatbinEntry]:
    return list(iter_entries(buf, base, end))
