"""The ELF header and section header table read with struct: ELF32/ELF64, both byte orders,
extended section numbering; checked against pyelftools' reading of the same bytes."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from capgap.binaries.elf import BinaryReadError, _elf_header, section_ranges
from capgap.binaries.reader import read_binary
from tests.binaries.fatbin_bytes import container, entry

SHN_XINDEX = 0xFFFF


def build_elf(
    elfclass: int, little: bool, sections: list[tuple[str, bytes]], extended: bool = False
) -> bytes:
    """An ELF file: header, section contents, .shstrtab, then the section header table at the end.

    `extended`: e_shnum 0 and e_shstrndx SHN_XINDEX, the real values in section 0 (as for files
    with 0xff00 sections or more).
    """
    end = "<" if little else ">"
    ehdr_size, shdr_size = (64, 64) if elfclass == 64 else (52, 40)
    names = [name for name, _ in sections] + [".shstrtab"]
    strtab = b"\0"
    name_at = []
    for name in names:
        name_at.append(len(strtab))
        strtab += name.encode() + b"\0"
    body = bytearray(ehdr_size)
    placed = []  # (name offset, type, offset, size)
    for (_, data), at in zip([*sections, (".shstrtab", strtab)], name_at, strict=True):
        body += b"\0" * (-len(body) % 8)
        placed.append((at, 1, len(body), len(data)))  # SHT_PROGBITS
        body += data
    body += b"\0" * (-len(body) % 8)
    shoff, count, strndx = len(body), len(placed) + 1, len(placed)
    shdr = f"{end}IIQQQQIIQQ" if elfclass == 64 else f"{end}IIIIIIIIII"
    body += struct.pack(shdr, 0, 0, 0, 0, 0, count if extended else 0, strndx if extended else 0, 0, 0, 0)
    for at, sh_type, offset, size in placed:
        body += struct.pack(shdr, at, sh_type, 0, 0, offset, size, 0, 0, 1, 0)
    ident = b"\x7fELF" + bytes([2 if elfclass == 64 else 1, 1 if little else 2, 1, 0]) + b"\0" * 8
    ehdr = f"{end}16sHHIQQQIHHHHHH" if elfclass == 64 else f"{end}16sHHIIIIIHHHHHH"
    e_shnum, e_shstrndx = (0, SHN_XINDEX) if extended else (count, strndx)
    struct.pack_into(
        ehdr, body, 0, ident, 3, 62, 1, 0, 0, shoff, 0, ehdr_size, 0, 0, shdr_size, e_shnum, e_shstrndx
    )
    return bytes(body)


PTX = b".visible .entry k()\n{\n ret;\n}\n\0\0\0"
FATBIN = container(entry(2, 120, payload=b"\1" * 32), entry(1, 90, payload=PTX))
LAYOUTS = [(c, little, ext) for c in (32, 64) for little in (True, False) for ext in (False, True)]


def _sections(data: bytes) -> list[tuple[str, bytes]]:
    return [(".text", b"\x90" * 24), (".nv_fatbin", data), (".rodata.cst8", b"\0" * 16), (".comment", b"x\0")]


def _ranges(blob: bytes) -> list[tuple[str, int, int]]:
    return section_ranges(io.BytesIO(blob), len(blob))


@pytest.mark.parametrize(("elfclass", "little", "extended"), LAYOUTS)
def test_sections_found_in_every_layout_as_pyelftools_sees_them(
    elfclass: int, little: bool, extended: bool
) -> None:
    blob = build_elf(elfclass, little, _sections(FATBIN), extended)
    ranges = _ranges(blob)
    assert [name for name, _, _ in ranges] == [".nv_fatbin", ".rodata.cst8"]
    fat_name, fat_off, fat_size = ranges[0]
    assert blob[fat_off : fat_off + fat_size] == FATBIN
    elf = ELFFile(io.BytesIO(blob))
    assert elf.num_sections() == 6
    assert elf.get_shstrndx() == 5
    reference = [
        (s.name, s["sh_offset"], s["sh_size"])
        for s in elf.iter_sections()
        if s.name in (".nv_fatbin", ".rodata.cst8")
    ]
    assert ranges == reference


@pytest.mark.parametrize(("elfclass", "little", "extended"), LAYOUTS)
def test_header_fields_match_pyelftools(elfclass: int, little: bool, extended: bool) -> None:
    blob = build_elf(elfclass, little, _sections(FATBIN), extended)
    _assert_header_matches(blob)


@pytest.mark.parametrize("name", ["multi.so", "compressed.so", "ptx_only.so", "sm120a.cubin"])
def test_header_fields_of_real_fixtures_match_pyelftools(data_dir: Path, name: str) -> None:
    _assert_header_matches((data_dir / name).read_bytes())


def _assert_header_matches(blob: bytes) -> None:
    ours = _elf_header(blob[:64])
    elf = ELFFile(io.BytesIO(blob))
    assert (ours.elfclass, ours.little_endian) == (elf.elfclass, elf.little_endian)
    for field in (
        "e_flags",
        "e_phoff",
        "e_phentsize",
        "e_phnum",
        "e_shoff",
        "e_shentsize",
        "e_shnum",
        "e_shstrndx",
    ):
        assert getattr(ours, field) == elf[field], field


@pytest.mark.parametrize(("elfclass", "little", "extended"), LAYOUTS)
def test_read_binary_reads_the_fatbin_in_every_layout(
    tmp_path: Path, elfclass: int, little: bool, extended: bool
) -> None:
    path = tmp_path / "libk.so"
    path.write_bytes(build_elf(elfclass, little, _sections(FATBIN), extended))
    binary = read_binary(path)
    assert binary is not None
    assert binary.format == "elf"
    assert binary.sass == ("sm_120",)
    assert binary.ptx == ("compute_90",)


@pytest.mark.parametrize(("elfclass", "little", "extended"), LAYOUTS)
def test_every_truncation_of_a_synthetic_elf_is_an_error(elfclass: int, little: bool, extended: bool) -> None:
    blob = build_elf(elfclass, little, _sections(FATBIN), extended)
    for n in range(4, len(blob)):
        with pytest.raises(BinaryReadError):
            _ranges(blob[:n])


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ((4, 3), "Invalid EI_CLASS"),
        ((5, 0), "Invalid EI_DATA"),
        ((0x3A, 8), "too small"),  # e_shentsize 8
        ((0x3E, 9), "out of range"),  # e_shstrndx 9 of 6 sections
    ],
)
def test_corrupt_header_fields_are_named(patch: tuple[int, int], message: str) -> None:
    blob = bytearray(build_elf(64, True, _sections(FATBIN)))
    at, value = patch
    blob[at] = value
    with pytest.raises(BinaryReadError, match=message):
        _ranges(bytes(blob))


def test_extended_count_in_section_zero_past_the_file_is_an_error() -> None:
    blob = bytearray(build_elf(64, True, _sections(FATBIN), extended=True))
    shoff = struct.unpack_from("<Q", blob, 0x28)[0]
    struct.pack_into("<Q", blob, shoff + 32, 1000)  # section 0's sh_size: 1000 sections
    with pytest.raises(BinaryReadError, match="section header table runs past the end"):
        _ranges(bytes(blob))
