"""The fatbin container parser on synthetic containers: fields, flags, padding, malformed input."""

from __future__ import annotations

import pytest

from capgap.binaries.fatbin import FatbinError, parse

from .fatbin_bytes import container, entry


def _header_size(raw: bytes, size: int) -> bytes:
    return raw[:4] + size.to_bytes(4, "little") + raw[8:]


def test_entries_kinds_archs_and_suffix_flags() -> None:
    buf = container(
        entry(2, 80),
        entry(2, 90, flags=0x100011),
        entry(2, 100, flags=0x1200011, header_size=96),
        entry(1, 120, flags=0x8011, compressed_size=20, full_size=800, version=(9, 0), header_size=80),
        entry(8, 90),
    )
    got = [(e.kind, e.name, e.compression, e.size, e.ptx_version, e.container) for e in parse(buf)]
    assert got == [
        ("sass", "sm_80", "", 24, None, 0),
        ("sass", "sm_90a", "", 24, None, 0),
        ("sass", "sm_100f", "", 24, None, 0),
        ("ptx", "compute_120", "zstd", 800, (9, 0), 0),
        ("ir", "sm_90", "", 24, None, 0),
    ]


@pytest.mark.parametrize(
    ("flags", "compression"), [(0x2011, "lz4"), (0x8011, "zstd"), (0x1011, "compressed")]
)
def test_compression_is_read_from_the_header_only(flags: int, compression: str) -> None:
    # the payload is not valid compressed data: the parser must not try to inflate it
    buf = container(entry(2, 90, flags=flags, payload=b"\xff" * 40, compressed_size=33, full_size=4096))
    (e,) = parse(buf)
    assert (e.compression, e.payload_size, e.size) == (compression, 40, 4096)


def test_containers_follow_each_other_across_zero_padding() -> None:
    buf = container(entry(2, 75)) + b"\0" * 8 + container(entry(2, 120), entry(1, 120, version=(9, 0)))
    assert [(e.name, e.container) for e in parse(buf)] == [("sm_75", 0), ("sm_120", 1), ("compute_120", 1)]


@pytest.mark.parametrize(
    ("buf", "message"),
    [
        (b"\x00\x11\x22\x33" + b"\0" * 12, "no fatbin container magic"),
        (container(entry(2, 90))[:-1], "more than there are"),
        (container(_header_size(entry(2, 90), 8)), "implausible header size"),
        (container(entry(2, 90))[:16] + entry(2, 90)[:10], "more than there are"),
        (container(entry(2, 90)) + b"\x01\x02", "not a container"),
    ],
)
def test_malformed_containers_raise_fatbin_error(buf: bytes, message: str) -> None:
    with pytest.raises(FatbinError, match=message):
        parse(buf)


def test_entry_larger_than_its_container_is_an_error() -> None:
    good = container(entry(2, 90))
    # shrink the container's declared size so the entry overruns it
    bad = good[:8] + (len(good) - 16 - 4).to_bytes(8, "little") + good[16:]
    with pytest.raises(FatbinError):
        parse(bad)
