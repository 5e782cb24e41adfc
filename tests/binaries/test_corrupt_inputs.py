"""Truncated, corrupted and fuzzed binaries: reported as unreadable (or read), never a crash."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capgap.binaries.audit import audit_files
from capgap.binaries.elf import section_ranges
from capgap.binaries.fatbin import FatbinError, parse
from capgap.binaries.reader import CudaBinary, UnreadableBinary, read_binary
from capgap.findings import Skipped

FIXTURES = ("multi.so", "compressed.so", "ptx_only.so", "sm120a.cubin", "ptx_af.fatbin")


def _outcome(path: Path) -> str:
    """'read', 'none' or 'unreadable'; any other exception fails the test."""
    try:
        result = read_binary(path)
    except UnreadableBinary:
        return "unreadable"
    assert result is None or isinstance(result, CudaBinary)
    return "none" if result is None else "read"


@pytest.mark.parametrize("name", FIXTURES)
def test_every_truncation_is_unreadable(data_dir: Path, tmp_path: Path, name: str) -> None:
    data = (data_dir / name).read_bytes()
    cut = tmp_path / name
    # section headers sit at the end of an ELF, a fatbin's sizes are in its header: any cut shows
    lengths = sorted({*range(5, len(data), max(1, len(data) // 97)), len(data) - 1, len(data) - 64})
    for n in lengths:
        cut.write_bytes(data[:n])
        assert _outcome(cut) == "unreadable", f"{name} cut at {n} of {len(data)} bytes"


@pytest.mark.parametrize("name", ["multi.so", "ptx_af.fatbin"])
def test_corrupted_fatbin_headers_are_unreadable(data_dir: Path, tmp_path: Path, name: str) -> None:
    data = bytearray((data_dir / name).read_bytes())
    at = data.find(b"\x50\xed\x55\xba")
    bad = tmp_path / name
    for offset, value in [(8, 0xFF), (16 + 4, 0x07), (16 + 8, 0xFF), (16 + 15, 0x7F)]:
        mutated = bytearray(data)
        mutated[at + offset] = value  # container size, entry header size, entry payload size
        bad.write_bytes(bytes(mutated))
        assert _outcome(bad) == "unreadable", f"byte {at + offset:#x} set to {value:#x}"


def test_unreadable_binary_becomes_a_skipped_in_an_audit(data_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "libcut.so").write_bytes((data_dir / "multi.so").read_bytes()[:5000])
    audit = audit_files(sorted(tmp_path.iterdir()), tmp_path, [(12, 0)])
    assert audit.libraries == []
    assert len(audit.skipped) == 1
    assert isinstance(audit.skipped[0], Skipped)
    assert audit.skipped[0].path == "libcut.so"
    assert audit.skipped[0].reason.startswith("unreadable binary: ")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_fixture_files_never_crash(data_dir: Path, tmp_path: Path, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(FIXTURES))
    raw = bytearray((data_dir / name).read_bytes())
    for _ in range(data.draw(st.integers(1, 8))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] = data.draw(st.integers(0, 255))
    path = tmp_path / f"fuzz-{name}"
    path.write_bytes(bytes(raw))
    _outcome(path)


def test_seeded_mutations_of_the_fatbin_section_raise_only_fatbin_error(data_dir: Path) -> None:
    path = data_dir / "multi.so"
    with path.open("rb") as fh:
        ((_, start, size),) = [r for r in section_ranges(fh, path.stat().st_size) if r[0] == ".nv_fatbin"]
    section = path.read_bytes()[start : start + size]
    assert len(parse(section)) == 9
    rng = random.Random(1234)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(3000):
        buf = bytearray(section)
        for _ in range(rng.randint(1, 4)):
            # mostly hit headers (first bytes of entries), where the parser looks
            pos = rng.randrange(0, 0x200) if rng.random() < 0.7 else rng.randrange(len(buf))
            buf[pos] = rng.randrange(256)
        try:
            parse(bytes(buf))
            outcomes["ok"] += 1
        except FatbinError:
            outcomes["error"] += 1
    assert outcomes["ok"] and outcomes["error"]  # both paths were exercised
