"""Build synthetic fatbin containers byte by byte (the layout in capgap.binaries.fatbin)."""

from __future__ import annotations

import struct


def entry(
    kind: int,
    sm: int,
    flags: int = 0x11,
    payload: bytes = b"\0" * 24,
    header_size: int = 64,
    compressed_size: int = 0,
    full_size: int = 0,
    version: tuple[int, int] = (1, 8),
) -> bytes:
    header = bytearray(header_size)
    struct.pack_into("<HHIQ", header, 0, kind, 0x0101, header_size, len(payload))
    struct.pack_into("<I", header, 0x10, compressed_size)
    struct.pack_into("<HHI", header, 0x18, version[1], version[0], sm)
    if header_size >= 0x30:
        struct.pack_into("<Q", header, 0x28, flags)
    if header_size >= 0x40:
        struct.pack_into("<Q", header, 0x38, full_size)
    return bytes(header) + payload


def container(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body
