"""Find the CUDA images inside ELF files: `.nv_fatbin` of shared objects, or a bare `.cubin`.

Files are mapped (mmap), never read whole: the ELF header and the section header table are read
with struct, and the fatbin parser reads only entry headers, so a 500 MB library costs a few page
faults. pyelftools (~60 ms to import) is used only for bare cubins' `.nv.compat` note.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from capgap.binaries.fatbin import FatbinEntry, FatbinError, find_containers, iter_entries

EM_CUDA = 190
# Sections holding fatbin containers. The runtime loads `.nv_fatbin`; `__nv_relfatbin` holds
# relocatable device code for a later device link (NCCL ships 896 such images): read, kept apart
# by section name, and not judged (cuobjdump does not list it either), see CudaBinary.loadable.
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
# Data sections where some libraries embed fatbin containers they load themselves (cuFFT: .ldata).
EMBEDDING_SECTIONS = (".rodata", ".lrodata", ".ldata", ".data")  # prefixes: .data.rel.ro too
_NVCOMPAT_ARCH_SPECIFIC = 0x09  # .nv.compat attribute: 1 when built for sm_XYa
_OSABI_CUDA_V2 = 0x41  # CUDA 13 cubins: SM number in e_flags bits 8..15, `a` only in .nv.compat
_EF_CUDA_ARCH_SPECIFIC_V1 = 0x800  # older cubins (OSABI 0x33, CUDA <= 12.x): sm_90a is 0x5a0d5a
_SHN_XINDEX = 0xFFFF  # e_shstrndx: the real index is section 0's sh_link


class BinaryReadError(ValueError):
    """A file that claims to be ELF/fatbin but cannot be parsed."""


# Elf64_Ehdr / Elf32_Ehdr after e_ident: (e_type, e_machine, e_version, e_entry, e_phoff, e_shoff,
# e_flags, e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx)
_EHDR = {64: "16xHHIQQQIHHHHHH", 32: "16xHHIIIIIHHHHHH"}
_SHT_NOBITS = 8
# (name, type, offset, size) out of Elf64_Shdr / Elf32_Shdr
_SHDR = {64: struct.Struct("IIxxxxxxxxxxxxxxxxQQ"), 32: struct.Struct("IIxxxxxxxxII")}
_SHDR_SIZE = {64: 64, 32: 40}
# (sh_size, sh_link) of section 0: extended section numbering
_SHDR0 = {64: "32xQI", 32: "20xII"}


@dataclass(frozen=True)
class ElfHeader:
    elfclass: int  # 32 | 64
    little_endian: bool
    e_flags: int
    e_phoff: int
    e_phentsize: int
    e_phnum: int
    e_shoff: int
    e_shentsize: int
    e_shnum: int
    e_shstrndx: int

    @property
    def endian(self) -> str:
        return "<" if self.little_endian else ">"


def _elf_header(head: bytes) -> ElfHeader:
    """The ELF header out of the file's first 64 bytes (fewer when the file is shorter)."""
    if head[:4] != b"\x7fELF":
        raise BinaryReadError("malformed ELF: Magic number does not match")
    ei_class, ei_data = head[4:5], head[5:6]
    if ei_class not in (b"\x01", b"\x02"):
        raise BinaryReadError(f"malformed ELF: Invalid EI_CLASS {ei_class!r}")
    if ei_data not in (b"\x01", b"\x02"):
        raise BinaryReadError(f"malformed ELF: Invalid EI_DATA {ei_data!r}")
    elfclass = 64 if ei_class == b"\x02" else 32
    layout = struct.Struct(("<" if ei_data == b"\x01" else ">") + _EHDR[elfclass])
    if len(head) < layout.size:
        raise BinaryReadError(f"malformed ELF: header cut at {len(head)} of {layout.size} bytes")
    _, _, _, _, phoff, shoff, flags, _, phentsize, phnum, shentsize, shnum, strndx = layout.unpack_from(head)
    little = ei_data == b"\x01"
    return ElfHeader(elfclass, little, flags, phoff, phentsize, phnum, shoff, shentsize, shnum, strndx)


def _open_elf(head: bytes, file_size: int) -> ElfHeader:
    """The header, once the section and program header tables are known to fit in the file."""
    elf = _elf_header(head)
    for table, off, num, entsize in (
        ("section", elf.e_shoff, elf.e_shnum, elf.e_shentsize),
        ("program", elf.e_phoff, elf.e_phnum, elf.e_phentsize),
    ):
        end = off + num * entsize
        if end > file_size:  # truncated: these tables sit at the file's end
            raise BinaryReadError(f"{table} header table ends at {end}, past the file's {file_size} bytes")
    return elf


def _section0(elf: ElfHeader, mm: mmap.mmap | bytes, file_size: int) -> tuple[int, int]:
    """(sh_size, sh_link) of section 0, where extended numbering keeps the real counts."""
    if elf.e_shentsize < _SHDR_SIZE[elf.elfclass]:
        raise BinaryReadError(f"section header entries of {elf.e_shentsize} bytes are too small")
    if elf.e_shoff + _SHDR_SIZE[elf.elfclass] > file_size:
        raise BinaryReadError("section header table runs past the end of the file")
    size, link = struct.unpack_from(elf.endian + _SHDR0[elf.elfclass], mm, elf.e_shoff)
    return int(size), int(link)


def _section_table(mm: mmap.mmap | bytes, file_size: int) -> tuple[ElfHeader, struct.Struct, int, int, int]:
    """The header, the section header layout, how many sections there are, and where the section
    name table lies (offset, size), each checked to fit in the file."""
    elf = _open_elf(bytes(mm[:64]), file_size)
    shdr = struct.Struct(elf.endian + _SHDR[elf.elfclass].format)
    shoff, entsize = elf.e_shoff, elf.e_shentsize
    if shoff and entsize < shdr.size:
        raise BinaryReadError(f"section header entries of {entsize} bytes are too small")
    count = elf.e_shnum
    if not shoff:
        count = 0
    elif not count:  # SHN_LORESERVE or more sections: the count is section 0's sh_size
        count = _section0(elf, mm, file_size)[0]
    if shoff + count * entsize > file_size:
        raise BinaryReadError("section header table runs past the end of the file")
    strndx = elf.e_shstrndx
    if strndx == _SHN_XINDEX and count:  # the real index sits in section 0's sh_link
        strndx = _section0(elf, mm, file_size)[1]
    if not 0 <= strndx < count:
        raise BinaryReadError(f"section name table index {strndx} out of range")
    _, _, str_off, str_size = shdr.unpack_from(mm, shoff + strndx * entsize)
    if str_off + str_size > file_size:
        raise BinaryReadError("section name table runs past the end of the file")
    return elf, shdr, count, str_off, str_size


def section_names(data: bytes) -> bytes:
    """The section name table of an ELF image held in memory (a cubin inflated from a fatbin):
    every section's name, NUL-separated. Raises BinaryReadError when it is no readable ELF."""
    _, _, _, str_off, str_size = _section_table(data, len(data))
    return data[str_off : str_off + str_size]


def section_ranges(
    fh: BinaryIO, file_size: int, mm: mmap.mmap | bytes | None = None
) -> list[tuple[str, int, int]]:
    """(name, offset, size) of every section that holds or may embed fatbin containers, in file order.

    Read with struct: the ELF header (class, byte order, extended section numbering) and the
    section header table (pyelftools would build a section object per header, symbol and hash
    tables included: ~10 ms per big library, and ~60 ms to import).
    """
    if mm is None:
        fh.seek(0)
        mm = fh.read()
    elf, shdr, count, str_off, str_size = _section_table(mm, file_size)
    shoff, entsize = elf.e_shoff, elf.e_shentsize
    out = []
    for i in range(count):
        name_at, sh_type, offset, size = shdr.unpack_from(mm, shoff + i * entsize)
        if sh_type == _SHT_NOBITS or name_at >= str_size:
            continue
        start = str_off + name_at
        name = bytes(mm[start : start + 16]).split(b"\0", 1)[0].decode("latin-1")
        if name not in FATBIN_SECTIONS and not name.startswith(EMBEDDING_SECTIONS):
            continue
        if offset + size > file_size:
            raise BinaryReadError(f"section {name} runs past the end of the file")
        out.append((name, offset, size))
    return out


def _e_machine(fh: BinaryIO) -> int:
    fh.seek(0)
    head = fh.read(20)
    little = head[5:6] != b"\x02"
    return int(struct.unpack_from("<H" if little else ">H", head, 18)[0])


def cubin_entry(fh: BinaryIO, size: int) -> FatbinEntry:
    """A bare cubin's arch: SM number from e_flags, `a` from its `.nv.compat` note."""
    fh.seek(0)
    head = fh.read(64)
    flags = _open_elf(head, size).e_flags
    new_layout = head[7:8] == bytes([_OSABI_CUDA_V2])
    sm = (flags >> 8) & 0xFF if new_layout else flags & 0xFF  # older cubins: EF_CUDA_SM in the low byte
    if sm < 10:
        raise BinaryReadError(f"cubin e_flags {flags:#x} name no SM architecture")
    suffix = "a" if not new_layout and flags & _EF_CUDA_ARCH_SPECIFIC_V1 else ""
    compat = _nvcompat_section(fh)
    if compat is not None:
        suffix = "a" if _nvcompat_value(compat, _NVCOMPAT_ARCH_SPECIFIC) == 1 else suffix
    return FatbinEntry("sass", sm, suffix, "", size, size, None, 0, 0)


def _nvcompat_section(fh: BinaryIO) -> bytes | None:
    """The bytes of a cubin's `.nv.compat` section (None: none, empty, or implausibly large)."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        compat = ELFFile(fh).get_section_by_name(".nv.compat")
        if compat is None or compat["sh_type"] == "SHT_NOBITS" or compat["sh_size"] >= 4096:
            return None
        return bytes(compat.data())
    except ELFError as exc:
        raise BinaryReadError(f"malformed ELF: {exc}") from exc


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


def _read_ahead(mm: mmap.mmap | bytes, offset: int, size: int) -> None:
    if not isinstance(mm, mmap.mmap) or not hasattr(mmap, "MADV_SEQUENTIAL") or size < (1 << 20):
        return
    start = offset - offset % mmap.PAGESIZE
    mm.madvise(mmap.MADV_SEQUENTIAL, start, size + offset - start)
    mm.madvise(mmap.MADV_WILLNEED, start, size + offset - start)


def elf_entries(fh: BinaryIO, mm: mmap.mmap | bytes) -> Iterator[tuple[str, FatbinEntry]]:
    """(section name, entry) for every fatbin entry in the ELF's fatbin sections."""
    for name, offset, size in section_ranges(fh, len(mm), mm):
        if name in FATBIN_SECTIONS:
            entries = iter_entries(mm, offset, offset + size)
        else:
            _read_ahead(mm, offset, size)  # this one is scanned whole: let the kernel stream it
            entries = find_containers(mm, offset, offset + size)
        for entry in entries:
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
    except Exception as exc:  # noqa: BLE001 - pyelftools signals corrupted input with many types
        raise BinaryReadError(f"malformed ELF ({type(exc).__name__}: {exc})") from exc
