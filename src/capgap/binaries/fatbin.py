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

import struct
from collections.abc import Iterator
from dataclasses import dataclass

CONTAINER_MAGIC = 0xBA55ED50
CONTAINER_HEADER = struct.Struct("<IHHQ")

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
_MAX_ENTRY_HEADER = 1 << 16  # real ones are 64..112 bytes; bigger means garbage


class FatbinError(ValueError):
    """The bytes are not a well-formed fatbin container (truncated, corrupted, not a fatbin)."""


@dataclass(frozen=True)
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


def _u(fmt: str, buf: memoryview | bytes, at: int, limit: int) -> int:
    size = struct.calcsize(fmt)
    if at + size > limit:
        raise FatbinError(f"entry header field at {at:#x} runs past the entry header")
    return int(struct.unpack_from(fmt, buf, at)[0])


def _entry(buf: memoryview | bytes, at: int, end: int, container: int) -> tuple[FatbinEntry, int]:
    if at + 16 > end:
        raise FatbinError(f"truncated entry header at {at:#x}")
    kind_id, header_size, payload_size = struct.unpack_from("<HxxIQ", buf, at)
    if not _MIN_ENTRY_HEADER <= header_size <= _MAX_ENTRY_HEADER:
        raise FatbinError(f"entry at {at:#x}: implausible header size {header_size}")
    next_at = at + header_size + payload_size
    if next_at > end:
        raise FatbinError(f"entry at {at:#x} ({header_size}+{payload_size} bytes) runs past its container")
    hend = at + header_size
    compressed_size = _u("<I", buf, at + 0x10, hend)
    minor = _u("<H", buf, at + 0x18, hend)
    major = _u("<H", buf, at + 0x1A, hend)
    sm = _u("<I", buf, at + 0x1C, hend)
    flags = _u("<Q", buf, at + 0x28, hend) if header_size >= 0x30 else 0
    full = _u("<Q", buf, at + 0x38, hend) if header_size >= 0x40 else 0
    compression = _compression(flags) if compressed_size else ""
    kind = KIND_NAMES.get(kind_id, f"kind-{kind_id}")
    entry = FatbinEntry(
        kind=kind,
        sm=sm,
        suffix=_suffix(flags),
        compression=compression,
        payload_size=payload_size,
        size=full if compression and full else payload_size,
        ptx_version=(major, minor) if kind == "ptx" else None,
        container=container,
        offset=at,
    )
    return entry, next_at


def iter_entries(buf: memoryview | bytes, base: int = 0, end: int | None = None) -> Iterator[FatbinEntry]:
    """Every entry of every container in buf[base:end]; raises FatbinError on malformed bytes.

    Zero padding between containers is skipped; anything else that is not a container magic is
    an error (a `.nv_fatbin` section holds nothing but containers).
    """
    end = len(buf) if end is None else end
    at, container = base, 0
    while at < end:
        if end - at < CONTAINER_HEADER.size:
            if bytes(buf[at:end]).strip(b"\0"):
                raise FatbinError(f"trailing bytes at {at:#x} are not a container")
            return
        magic, _version, header_size, size = CONTAINER_HEADER.unpack_from(buf, at)
        if magic != CONTAINER_MAGIC:
            if magic == 0:  # alignment padding between containers
                at += 4
                continue
            raise FatbinError(f"no fatbin container magic at {at:#x} (found {magic:#010x})")
        if header_size < CONTAINER_HEADER.size or at + header_size + size > end:
            raise FatbinError(f"container at {at:#x} claims {size} bytes, more than there are")
        pos, container_end = at + header_size, at + header_size + size
        while pos < container_end:
            entry, pos = _entry(buf, pos, container_end, container)
            yield entry
        at, container = container_end, container + 1


def parse(buf: memoryview | bytes, base: int = 0, end: int | None = None) -> list[FatbinEntry]:
    return list(iter_entries(buf, base, end))


def looks_like_fatbin(head: bytes) -> bool:
    return len(head) >= 4 and struct.unpack_from("<I", head)[0] == CONTAINER_MAGIC
