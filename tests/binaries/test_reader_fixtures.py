"""The reader on nvcc-built fixtures: exact archs, and agreement with cuobjdump (recorded and live)."""

from __future__ import annotations

from pathlib import Path

import pytest

from capgap.binaries.crosscheck import capgap_listing, compare, parse_listing
from capgap.binaries.reader import read_binary

from .conftest import cuobjdump_listing

# name -> (format, SASS archs, PTX archs, compressed loadable images)
EXPECTED = {
    "multi.so": ("elf", ("sm_80", "sm_90a", "sm_100", "sm_120"), ("compute_120",), 1),
    "compressed.so": ("elf", ("sm_80", "sm_90"), ("compute_90",), 5),
    "ptx_only.so": ("elf", (), ("compute_80",), 1),
    "sm120a.cubin": ("cubin", ("sm_120a",), (), 0),
    "ptx_af.fatbin": ("fatbin", ("sm_103a",), ("compute_90a", "compute_100f"), 2),
    "torch_ops.so": ("elf", ("sm_80", "sm_100"), (), 1),
}
BUILT_ONLY = {
    "no_kernels.so": ("elf", (), (), 0),
    "sass_only.so": ("elf", ("sm_80", "sm_90"), (), 0),
    "sm90a.so": ("elf", ("sm_90a",), (), 0),
    "sm100f.so": ("elf", ("sm_100",), ("compute_100f",), 1),
}
COMMITTED = sorted(EXPECTED)


def _summary(path: Path) -> tuple[str, tuple[str, ...], tuple[str, ...], int]:
    binary = read_binary(path)
    assert binary is not None
    return binary.format, binary.sass, binary.ptx, binary.compressed


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_fixture_archs(data_dir: Path, name: str) -> None:
    assert _summary(data_dir / name) == EXPECTED[name]


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_fixture_agrees_with_recorded_cuobjdump(data_dir: Path, name: str) -> None:
    recorded = parse_listing((data_dir / f"{name}.cuobjdump.txt").read_text())
    binary = read_binary(data_dir / name)
    assert binary is not None
    agreement = compare(recorded, capgap_listing(binary))
    assert agreement.agree, agreement.rows
    assert recorded  # the listing is not empty: something was compared


def test_sm100f_sass_is_flagged_family_in_the_fatbin_but_listed_plain(data_dir: Path) -> None:
    binary = read_binary(data_dir / "multi.so")
    assert binary is not None
    raw = [(e.kind, e.sm, e.suffix) for e in binary.listed if e.sm == 100]
    assert raw == [("sass", 100, "f"), ("sass", 100, "f")]
    assert [a for k, a in capgap_listing(binary) if "100" in a] == ["sm_100", "sm_100"]


def test_host_only_and_non_elf_files_have_no_kernels(tmp_path: Path, built_fixtures: Path) -> None:
    plain = read_binary(built_fixtures / "host_only.so")
    assert plain is not None and plain.format == "elf" and not plain.has_kernels
    text = tmp_path / "libnot.so"
    text.write_text("INPUT(-lfoo)\n")  # a linker script named like a library
    assert read_binary(text) is None


@pytest.mark.parametrize("name", sorted({**EXPECTED, **BUILT_ONLY}))
def test_built_fixture_archs(built_fixtures: Path, name: str) -> None:
    assert _summary(built_fixtures / name) == {**EXPECTED, **BUILT_ONLY}[name]


@pytest.mark.parametrize("name", sorted({**EXPECTED, **BUILT_ONLY}))
def test_built_fixture_agrees_with_live_cuobjdump(built_fixtures: Path, cuobjdump: str, name: str) -> None:
    path = built_fixtures / name
    theirs = parse_listing(cuobjdump_listing(cuobjdump, path))
    binary = read_binary(path)
    assert binary is not None
    agreement = compare(theirs, capgap_listing(binary))
    assert agreement.agree, agreement.rows
    assert theirs


@pytest.mark.parametrize(
    ("osabi", "e_flags", "expected"),
    [
        # CUDA 13 layout (OSABI 0x41): SM number in bits 8..15; `a` from .nv.compat
        (0x41, 0x6007802, "sm_120a"),  # the fixture's own .nv.compat says arch-specific
        # older layout (OSABI 0x33), as read from CUDA 12.8-built xformers cubins: SM in the low
        # byte, 0x800 marks `a`
        (0x33, 0x500550, "sm_80"),
        (0x33, 0x5A0D5A, "sm_90a"),
    ],
)
def test_bare_cubin_e_flags_layouts(
    data_dir: Path, tmp_path: Path, osabi: int, e_flags: int, expected: str
) -> None:
    raw = bytearray((data_dir / "sm120a.cubin").read_bytes())
    raw[7] = osabi
    raw[0x30:0x34] = e_flags.to_bytes(4, "little")
    if osabi == 0x33:  # drop the .nv.compat record's `a`, so only e_flags can say it
        at = raw.find(bytes.fromhex("02090100"))
        raw[at + 2] = 0
    path = tmp_path / "patched.cubin"
    path.write_bytes(bytes(raw))
    binary = read_binary(path)
    assert binary is not None
    assert binary.sass == (expected,)


def test_fatbin_embedded_in_rodata_counts_for_verdicts_but_not_for_cuobjdump(
    data_dir: Path, tmp_path: Path
) -> None:
    """Like cuFFT, which keeps ~24,000 containers in .ldata and loads them itself."""
    import shutil
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build a library embedding a fatbin")
    blob = (data_dir / "ptx_af.fatbin").read_bytes()
    src = tmp_path / "embed.c"
    src.write_text(
        "__attribute__((aligned(8))) const unsigned char kernels[] = {"
        + ",".join(str(b) for b in blob)
        + "};\nconst unsigned char* get_kernels(void) { return kernels; }\n"
    )
    lib = tmp_path / "libembed.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True, capture_output=True)
    binary = read_binary(lib)
    assert binary is not None
    assert binary.listed == []  # cuobjdump sees no device code here
    assert capgap_listing(binary) == []
    assert [(s, e.name) for s, e in binary.entries] == [
        (".rodata", "compute_90a"),
        (".rodata", "compute_100f"),
        (".rodata", "sm_103a"),
    ]
    assert (binary.sass, binary.ptx) == (("sm_103a",), ("compute_90a", "compute_100f"))


def test_modules_without_kernels_are_listed_but_not_judged(data_dir: Path) -> None:
    """nvcc puts a kernel-less device-link module before the real one in every shared library."""
    binary = read_binary(data_dir / "multi.so")
    assert binary is not None
    assert [(e.container, e.name, e.empty) for e in binary.listed] == [
        (0, "sm_80", True),
        (0, "sm_90a", True),
        (0, "sm_100f", True),
        (0, "sm_120", True),
        (1, "sm_80", False),
        (1, "sm_90a", False),
        (1, "sm_100f", False),
        (1, "sm_120", False),
        (1, "compute_120", None),  # compressed: not looked into
    ]
    assert [e.container for e in binary.loadable] == [1] * 5
    assert binary.empty == 4
    assert len(binary.modules()) == 1


def test_library_whose_modules_have_no_kernels_has_nothing_to_judge(built_fixtures: Path) -> None:
    binary = read_binary(built_fixtures / "no_kernels.so")
    assert binary is not None
    assert binary.listed and all(e.empty for e in binary.listed)
    assert not binary.has_kernels
