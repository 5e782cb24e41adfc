"""Issue 16, row 6: hand-made hostile wheels give one line and exit 2, never a traceback, and
leave no temp directory in the cache; a zip bomb is refused before it is unpacked."""

from __future__ import annotations

import os
import struct
import zipfile
from pathlib import Path

import pytest

from capgap.errors import TargetError
from capgap.targets import WHEEL_MAX_RATIO, unpack_wheel
from tests.cli_runner import run_cli

SOURCE = b'ARCH_TILES = {"9.0": 1, "10.0": 2}\n' * 50


def _wheel(path: Path, members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _patch_headers(path: Path, local_at: int, central_at: int, value: int, size: str = "<H") -> None:
    """Set one field of every local and central header (flags, compression method)."""
    data = bytearray(path.read_bytes())
    for magic, offset in ((b"PK\x03\x04", local_at), (b"PK\x01\x02", central_at)):
        pos = data.find(magic)
        while pos != -1:
            struct.pack_into(size, data, pos + offset, value)
            pos = data.find(magic, pos + 4)
    path.write_bytes(bytes(data))


def corrupt_deflate(tmp: Path) -> Path:
    path = _wheel(tmp / "corrupt-1.0-py3-none-any.whl", {"corrupt/a.py": SOURCE})
    data = bytearray(path.read_bytes())
    start = 30 + len("corrupt/a.py")  # the first member's compressed data
    data[start : start + 40] = b"\xff" * 40
    path.write_bytes(bytes(data))
    return path


def encrypted(tmp: Path) -> Path:
    path = _wheel(tmp / "enc-1.0-py3-none-any.whl", {"enc/a.py": SOURCE})
    _patch_headers(path, 6, 8, 0x1)
    return path


def unknown_method(tmp: Path) -> Path:
    path = _wheel(tmp / "meth-1.0-py3-none-any.whl", {"meth/a.py": SOURCE})
    _patch_headers(path, 8, 10, 99)
    return path


def long_name(tmp: Path) -> Path:
    return _wheel(tmp / "long-1.0-py3-none-any.whl", {"long/" + "n" * 300 + ".py": SOURCE})


def escaping(tmp: Path) -> Path:
    return _wheel(tmp / "esc-1.0-py3-none-any.whl", {"../../outside.py": SOURCE})


def not_a_zip(tmp: Path) -> Path:
    path = tmp / "junk-1.0-py3-none-any.whl"
    path.write_bytes(os.urandom(4096))
    return path


def truncated(tmp: Path) -> Path:
    path = _wheel(tmp / "trunc-1.0-py3-none-any.whl", {"trunc/a.py": SOURCE * 100})
    path.write_bytes(path.read_bytes()[:-300])
    return path


HOSTILE = [corrupt_deflate, encrypted, unknown_method, long_name, escaping, not_a_zip, truncated]


def _leftovers(cache: Path) -> list[str]:
    unpacked = cache / "unpacked"
    return sorted(p.name for p in unpacked.iterdir()) if unpacked.is_dir() else []


@pytest.mark.parametrize("make", HOSTILE, ids=[m.__name__ for m in HOSTILE])
def test_a_hostile_wheel_is_one_line_and_leaves_nothing(tmp_path: Path, make: object) -> None:
    wheel = make(tmp_path)  # type: ignore[operator]
    result = run_cli("scan", str(wheel), "--arch", "12.0")
    assert result.code == 2, (result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {wheel}: "), result.err
    assert "Traceback" not in result.err
    assert _leftovers(Path(os.environ["CAPGAP_CACHE_DIR"])) == []
    assert not (tmp_path.parent / "outside.py").exists()


def test_a_zip_bomb_is_refused_before_it_is_unpacked(tmp_path: Path) -> None:
    """A ~1 MB wheel holding 1 GiB of zeros was unpacked in full and kept (level 1 here: ~5 MB,
    built in a third of the time)."""
    wheel = tmp_path / "bomb-1.0-py3-none-any.whl"
    with (
        zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
        zf.open("bomb/zeros.bin", "w") as fh,
    ):
        block = b"\0" * (16 << 20)
        for _ in range(64):
            fh.write(block)
    assert wheel.stat().st_size < 8 << 20
    with pytest.raises(TargetError, match=f"more than {WHEEL_MAX_RATIO}x its compressed size"):
        unpack_wheel(wheel)
    assert _leftovers(Path(os.environ["CAPGAP_CACHE_DIR"])) == []


def test_a_stale_temp_dir_of_a_dead_run_is_removed(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "ok-1.0-py3-none-any.whl", {"ok/a.py": SOURCE})
    first = unpack_wheel(wheel)
    import shutil

    shutil.rmtree(first)
    stale = first.with_name(first.name + ".tmp999999999")  # no such process
    stale.mkdir()
    again = unpack_wheel(wheel)
    assert (again / "ok" / "a.py").read_bytes() == SOURCE
    assert _leftovers(Path(os.environ["CAPGAP_CACHE_DIR"])) == [again.name]


def test_a_good_wheel_still_scans(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "good-1.0-py3-none-any.whl", {"good/a.py": SOURCE, "good/": b""})
    result = run_cli("scan", str(wheel), "--arch", "12.0")
    assert result.code in (0, 1), result.err
    assert "ARCH_TILES" in result.out
