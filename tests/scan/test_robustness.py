"""Bad files never crash a scan: each goes to `skipped` with its reason."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from capgap.arch import parse_arch
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import run_scan

TABLE = b'ARCH_TILES = {"9.0": 1, "10.0": 2}\n'


def _skipped(root: Path) -> dict[str, str]:
    report = run_scan([str(root)], ScanOptions(archs=(parse_arch("12.0"),), use_cache=False))
    return {s.path: s.reason for s in report.skipped}


def test_bad_files_are_skipped_with_reasons_and_good_ones_still_scanned(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_bytes(TABLE)
    (tmp_path / "syntax.py").write_bytes(b"def f(:\n    return get_device_capability()\n")
    (tmp_path / "py2.py").write_bytes(b'print "capability", 1\nexcept_me = 0\n')
    (tmp_path / "latin1.py").write_bytes(b"# capability\nname = '\xe9t\xe9'\n")
    (tmp_path / "binary.py").write_bytes(b"\x7fELF\x00\x01capability\x00")
    (tmp_path / "huge.py").write_bytes(b"# capability\n" + b"x = 1\n" * 800_000)
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "back").symlink_to(tmp_path, target_is_directory=True)  # a directory loop
    report = run_scan([str(tmp_path)], ScanOptions(archs=(parse_arch("12.0"),), use_cache=False))
    assert [(f.path, f.symbol) for f in report.findings] == [("good.py", "ARCH_TILES")]
    skipped = {s.path: s.reason for s in report.skipped}
    assert skipped == {
        "binary.py": "binary data, not Python source",
        "huge.py": "too large to be hand-written source (4 MB); not parsed",
        "latin1.py": "not valid UTF-8 (and no coding declaration that decodes it)",
        "loop.py": "unreadable: Too many levels of symbolic links",
        "py2.py": "Python 2 source, not parsed (line 1)",
        "syntax.py": "syntax error: invalid syntax (line 1)",
    }


def test_a_coding_declaration_is_honoured(tmp_path: Path) -> None:
    (tmp_path / "latin1.py").write_bytes(
        b"# -*- coding: latin-1 -*-\nARCH_NAMES = {'9.0': '\xe9', '10.0': 'b'}\n"
    )
    report = run_scan([str(tmp_path)], ScanOptions(archs=(parse_arch("12.0"),), use_cache=False))
    assert [(f.symbol, f.missing) for f in report.findings] == [("ARCH_NAMES", "'12.0'")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_skipped(tmp_path: Path) -> None:
    locked = tmp_path / "locked.py"
    locked.write_bytes(TABLE)
    locked.chmod(0)
    assert _skipped(tmp_path) == {"locked.py": "unreadable: Permission denied"}


def test_unreadable_file_is_skipped_even_as_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real permission failure can't be produced as root; fake `os.open` at that one boundary."""
    (tmp_path / "locked.py").write_bytes(TABLE)
    real_open = os.open

    def deny(file: object, *args: object, **kwargs: object) -> int:
        if str(file).endswith("locked.py"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", deny)
    assert _skipped(tmp_path) == {"locked.py": "unreadable: Permission denied"}


def test_a_file_the_cut_cannot_handle_is_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cut is a guess about statement boundaries; when it fails on a strange file, the file is
    parsed whole (same facts), never a crash."""
    from capgap.reading import chunks, fileparse

    source = (
        b"import torch\nT = {9: 1, 10: 2}\n\n\ndef f():\n"
        b"    return T[torch.cuda.get_device_capability()[0]]\n"
    )
    expected = fileparse.facts_for_bytes("m.py", source, True)

    def fails(data: bytes, also: frozenset[bytes] = frozenset(), gates: tuple[int, ...] = ()) -> chunks.Cut:
        raise AttributeError("no def or class line after the decorators")

    monkeypatch.setattr(chunks, "select", fails)
    got = fileparse.facts_for_bytes("m.py", source, True)
    assert got is not None and expected is not None and not got.skipped
    assert [(t.symbol, [k.text for k in t.keys]) for t in got.tables] == [("T", ["9", "10"])]
    uses = [(u.name, u.line, u.access) for u in got.uses]
    assert uses == [(u.name, u.line, u.access) for u in expected.uses] == [("T", 6, "subscript")]
