"""Find the CUDA images inside ELF files: `.nv_fatbin` of shared objects, or a bare `.cubin`.

Files are mapped (mmap), never read whole; pyelftools reads only the ELF and section headers,
and the fatbin parser reads only entry headers, so a 500 MB library costs a few page faults.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterator
from typing import BinaryIO

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from capgap.binaries.fatbin import FatbinEntry, FatbinError, iter_entries

EM_CUDA = 190
# Sections holding fatbin containers. The runtime loads `.nv_fatbin`; `__nv_relfatbin` holds
# relocatable device code for a later device link (NCCL ships 896 such images): read, kept apart
# by section name, and not judged (cuobjdump does not list it either), see CudaBinary.loadable.
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
_NVCOMPAT_ARCH_SPECIFIC = 0x09  # .nv.compat attribute: 1 when built for sm_XYa
_OSABI_CUDA_V2 = 0x41  # CUDA 13 cubins: SM number in e_flags bits 8..15, `a` only in .nv.compat
_EF_CUDA_ARCH_SPECIFIC_V1 = 0x800  # older cubins (OSABI 0x33, CUDA <= 12.x): sm_90a is 0x5a0d5a


class BinaryReadError(ValueError):
    """A file that claims to be ELF/fatbin but cannot be parsed."""


def _open_elf(fh: BinaryIO, file_size: int) -> ELFFile:
    elf = ELFFile(fh)
    for table, off, num, entsize in (
        ("section", "e_shoff", "e_shnum", "e_shentsize"),
        ("program", "e_phoff", "e_phnum", "e_phentsize"),
    ):
        end = int(elf[off]) + int(elf[num]) * int(elf[entsize])
        if end > file_size:  # truncated: these tables sit at the file's end
            raise BinaryReadError(f"{table} header table ends at {end}, past the file's {file_size} bytes")
    return elf


def section_ranges(fh: BinaryIO, file_size: int) -> list[tuple[str, int, int]]:
    """(name, offset, size) of every fatbin-holding section, in file order."""
    elf = _open_elf(fh, file_size)
    out = []
    for section in elf.iter_sections():
        if section.name not in FATBIN_SECTIONS or section["sh_type"] == "SHT_NOBITS":
            continue
        offset, size = int(section["sh_offset"]), int(section["sh_size"])
        if offset + size > file_size:
            raise BinaryReadError(f"section {section.name} runs past the end of the file")
        out.append((section.name, offset, size))
    return out


def _e_machine(fh: BinaryIO) -> int:
    fh.seek(0)
    head = fh.read(20)
    little = head[5:6] != b"\x02"
    return int(struct.unpack_from("<H" if little else ">H", head, 18)[0])


def cubin_entry(fh: BinaryIO, size: int) -> FatbinEntry:
    """A bare cubin's arch: SM number from e_flags, `a` from its `.nv.compat` note."""
    elf = _open_elf(fh, size)
    flags = int(elf["e_flags"])
    fh.seek(7)
    new_layout = fh.read(1) == bytes([_OSABI_CUDA_V2])
    sm = (flags >> 8) & 0xFF if new_layout else flags & 0xFF  # older cubins: EF_CUDA_SM in the low byte
    if sm < 10:
        raise BinaryReadError(f"cubin e_flags {flags:#x} name no SM architecture")
    suffix = "a" if not new_layout and flags & _EF_CUDA_ARCH_SPECIFIC_V1 else ""
    compat = elf.get_section_by_name(".nv.compat")
    if compat is not None and compat["sh_type"] != "SHT_NOBITS" and compat["sh_size"] < 4096:
        suffix = "a" if _nvcompat_value(compat.data(), _NVCOMPAT_ARCH_SPECIFIC) == 1 else suffix
    return FatbinEntry("sass", sm, suffix, "", size, size, None, 0, 0)


def _nvcompat_value(data: bytes, attr: int) -> int | None:
    """`.nv.compat` is a list of (u8 format, u8 attribute, value) records like `.nv.info`."""
    pos = 0
    while pos + 2 <= len(data):
        fmt, key = data[pos], data[pos + 1]
        if fmt == 0x02:  # 1-byte value, padded to 4
            if key == attr:
                return data[pos + 2]
            pos += 4
        elif fmt == 0x03:  # 2-byte value
            if key == attr:
                return int.from_bytes(data[pos + 2 : pos + 4], "little")
            pos += 4
        elif fmt == 0x04 and pos + 4 <= len(data):  # u16 length, then that many bytes
            pos += 4 + int.from_bytes(data[pos + 2 : pos + 4], "little")
        else:
            return None
    return None


def elf_entries(fh: BinaryIO, mm: mmap.mmap | bytes) -> Iterator[tuple[str, FatbinEntry]]:
    """(section name, entry) for every fatbin entry in the ELF's fatbin sections."""
    for name, offset, size in section_ranges(fh, len(mm)):
        for entry in iter_entries(mm, offset, offset + size):
            yield name, entry


def read_elf(fh: BinaryIO, mm: mmap.mmap | bytes) -> tuple[str, list[tuple[str, FatbinEntry]]]:
    """("cubin" | "elf", entries); raises BinaryReadError when the ELF or its fatbins are malformed."""
    try:
        if _e_machine(fh) == EM_CUDA:
            return "cubin", [("", cubin_entry(fh, len(mm)))]
        return "elf", list(elf_entries(fh, mm))
    except FatbinError as exc:
        raise BinaryReadError(f"malformed fatbin: {exc}") from exc
    except BinaryReadError:
        raise
    except ELFError as exc:
        raise BinaryReadError(f"malformed ELF: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - pyelftools signals corrupted input with many types
        raise BinaryReadError(f"malformed ELF ({type(exc).__name__}: {exc})") from exc
