"""Issue 16, rows 2, 7, 8 and 10: hostile files in a scanned tree are skipped with a reason,
never read whole, never a hang, a traceback or gigabytes of memory.

The CLI runs in a child process under an address-space limit (RLIMIT_AS) and a timeout: the
OOM killer or a hang shows as a failed run, not as a stuck test suite.
"""

from __future__ import annotations

import ast
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from capgap.arch import parse_arch
from capgap.boundedread import NotRegular, TooLarge, read_prefix, read_regular
from capgap.reading.fileparse import MAX_BYTES
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import run_scan
from capgap.targets import Target

TABLE = b'ARCH_TILES = {"9.0": 1, "10.0": 2}\n'
MEMORY_LIMIT = 1 << 30  # what a child scan may map at most (a normal one needs ~100 MB)


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _capgap(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPGAP_CRASH")}
    return subprocess.run(
        [sys.executable, "-m", "capgap", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_limited,
        check=False,
    )


def _skipped(root: Path, cache: bool = False) -> dict[str, str]:
    report = run_scan([str(root)], ScanOptions(archs=(parse_arch("12.0"),), use_cache=cache))
    return {s.path: s.reason for s in report.skipped}


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_link_to_a_device_is_skipped_not_read(tmp_path: Path, device: str) -> None:
    """Row 2: `ln -s /dev/zero d/z.py` was read whole (17 GB, OOM killer); /dev/urandom ran > 60 s."""
    tree = tmp_path / "d"
    tree.mkdir()
    (tree / "good.py").write_bytes(TABLE)
    (tree / "z.py").symlink_to(device)
    (tree / "CMakeLists.txt").symlink_to(device)  # a build file: read by capgap, never by grep
    proc = _capgap("scan", str(tree), "--arch", "12.0", "--format", "json", "--no-cache", cwd=tmp_path)
    assert "Traceback" not in proc.stderr
    assert proc.returncode in (0, 1), proc.stderr  # 1 only when a finding is at --fail-on
    import json

    report = json.loads(proc.stdout)
    skipped = {s["path"]: s["reason"] for s in report["skipped"]}
    assert skipped == {
        "z.py": "unreadable: not a regular file (a device)",
        "CMakeLists.txt": "unreadable: not a regular file (a device)",
    }
    assert [f["symbol"] for f in report["findings"]] == ["ARCH_TILES"]


@pytest.mark.usefixtures("no_hang")
def test_a_fifo_is_skipped_not_waited_on(tmp_path: Path) -> None:
    """Row 10 (and a hang before): a FIFO named *.py is reported, with or without the cache."""
    (tmp_path / "good.py").write_bytes(TABLE)
    os.mkfifo(tmp_path / "pipe.py")
    os.mkfifo(tmp_path / "setup.py")
    expected = {
        "pipe.py": "unreadable: not a regular file (a FIFO)",
        "setup.py": "unreadable: not a regular file (a FIFO)",
    }
    assert _skipped(tmp_path) == expected
    assert _skipped(tmp_path, cache=True) == expected


def test_wide_encodings_and_unknown_cookies_are_skipped_with_reasons(tmp_path: Path) -> None:
    """Row 10: UTF-16/32 files and unknown `coding:` cookies were passed over silently."""
    text = TABLE.decode()
    (tmp_path / "u16.py").write_bytes(text.encode("utf-16"))
    (tmp_path / "u16be.py").write_bytes(b"\xfe\xff" + text.encode("utf-16-be"))
    (tmp_path / "u32.py").write_bytes(text.encode("utf-32"))
    (tmp_path / "u32be.py").write_bytes(b"\x00\x00\xfe\xff" + text.encode("utf-32-be"))
    (tmp_path / "cookie.py").write_bytes(b"# -*- coding: no-such-codec -*-\n" + TABLE)
    (tmp_path / "bytes_codec.py").write_bytes(b"# coding: base64\n" + TABLE + b"\xff\n")
    (tmp_path / "good.py").write_bytes(TABLE)
    for cache in (False, True):
        skipped = _skipped(tmp_path, cache)
        assert skipped == {
            "u16.py": "UTF-16 text, not Python source (Python reads no UTF-16 files)",
            "u16be.py": "UTF-16 text, not Python source (Python reads no UTF-16 files)",
            "u32.py": "UTF-32 text, not Python source (Python reads no UTF-32 files)",
            "u32be.py": "UTF-32 text, not Python source (Python reads no UTF-32 files)",
            "cookie.py": (
                "unknown encoding 'no-such-codec' in its coding declaration (Python refuses the file)"
            ),
            "bytes_codec.py": "not valid UTF-8 (and no coding declaration that decodes it)",
        }


@pytest.mark.usefixtures("no_hang")
def test_a_dist_target_reports_its_fifo_and_device_links(tmp_path: Path) -> None:
    """A dist's RECORD may name a FIFO or a link to a device: reported, not silently dropped."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "good.py").write_bytes(TABLE)
    os.mkfifo(tmp_path / "pkg" / "pipe.py")
    (tmp_path / "pkg" / "zero.py").symlink_to("/dev/zero")
    files = tuple(tmp_path / "pkg" / n for n in ("good.py", "pipe.py", "zero.py"))
    from capgap.scan import source

    target = Target("pkg", "dist", tmp_path, files, "pkg", "1.0")
    result = source.analyze(target, ScanOptions(archs=(parse_arch("12.0"),), use_cache=False))
    assert {s.path: s.reason for s in result.skipped} == {
        "pkg/pipe.py": "unreadable: not a regular file (a FIFO)",
        "pkg/zero.py": "unreadable: not a regular file (a device)",
    }
    assert [f.symbol for f in result.findings] == ["ARCH_TILES"]


def test_a_huge_file_is_read_only_up_to_the_limit(tmp_path: Path) -> None:
    """A sparse 8 GiB file costs MAX_BYTES + 1 bytes of reading, and is reported with its size."""
    huge = tmp_path / "huge.py"
    with huge.open("wb") as fh:
        fh.write(b"# capability\n")
        fh.truncate(8 << 30)
    data, size = read_prefix(huge, MAX_BYTES)
    assert (len(data), size) == (MAX_BYTES + 1, 8 << 30)
    with pytest.raises(TooLarge):
        read_regular(huge, MAX_BYTES)
    assert _skipped(tmp_path) == {"huge.py": "binary data, not Python source"}  # its NULs, read in part
    from capgap.reading.fileparse import facts_for_bytes

    text = (b"# capability\n" + b"x = 1\n" * MAX_BYTES)[: MAX_BYTES + 1]  # what the reader hands over
    facts = facts_for_bytes("huge.py", text, True, size=8 << 30)
    assert facts is not None and facts.skipped == "too large to be hand-written source (8192 MB); not parsed"


@pytest.mark.usefixtures("no_hang")
def test_the_reader_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    (tmp_path / "file").write_bytes(b"x")
    for path, kind in (
        (tmp_path / "fifo", "a FIFO"),
        (Path("/dev/zero"), "a device"),
        (tmp_path, "a directory"),
    ):
        with pytest.raises(NotRegular, match=kind):
            read_regular(path, 10)
    assert read_regular(tmp_path / "link", 10) == b"x"
    with pytest.raises(NotRegular, match="symlink"):
        read_regular(tmp_path / "link", 10, follow=False)


def test_constant_folding_is_bounded(tmp_path: Path) -> None:
    """Row 7: `"x" * (1 << 32)` in a 60-byte file cost 4.2 GB; `1 << 40` gave a MemoryError."""
    from capgap.judging.keys import resolve_value
    from capgap.judging.records import Scope

    scope = Scope({}, None)  # type: ignore[call-arg]
    for source in (
        '"x" * (1 << 32)',
        '(1 << 40) * "x"',
        "[0] * (1 << 40)",
        "2 ** 63 ** 2",
        "(2 ** 100) ** 60",
    ):
        assert resolve_value(ast.parse(source, mode="eval").body, scope) is None, source
    assert resolve_value(ast.parse("64 * 1024 * 1024", mode="eval").body, scope) == 64 << 20
    assert resolve_value(ast.parse('"ab" * 3', mode="eval").body, scope) == "ababab"
    from capgap.semantic.hardware import module_constants  # `capgap fix` folds a module's constants

    chain = "A = 2 ** 63\nB = A ** 63\nC = B ** 63\nD = C ** 63\nE = D ** 63\nMiB = 1024 * 1024\n"
    assert sorted(module_constants(chain)) == ["A", "B", "MiB"]  # C would be 250,000 bits, E 60 GB
    (tmp_path / "a.py").write_bytes(
        b'ARCH_TILES = {"9.0": "x" * (1 << 32), "10.0": "y" * (1 << 40)}\n'
        b"A = 2 ** 63\nB = A ** 63\nC = B ** 63\nD = C ** 63\nE = D ** 63\n"
        b'ARCH_SIZES = {"9.0": E, "10.0": [0] * (1 << 36)}\n'
        b"def f(cap):\n    if cap == 'x' * (1 << 34):\n        return get_device_capability()\n"
    )
    proc = _capgap("scan", str(tmp_path), "--arch", "12.0", "--no-cache", cwd=tmp_path, timeout=60)
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    assert proc.returncode in (0, 1), proc.stderr
    assert "ARCH_TILES" in proc.stdout and "ARCH_SIZES" in proc.stdout


def test_a_symlink_loop_as_the_target_is_one_line(tmp_path: Path) -> None:
    """Row 8: a loop of links named as the scan (or binaries) target gave a traceback."""
    (tmp_path / "loop").symlink_to("loop")
    for verb in ("scan", "binaries"):
        proc = _capgap(verb, "loop", "--arch", "12.0", cwd=tmp_path)
        assert proc.returncode == 2
        assert (
            proc.stderr.strip()
            == "error: loop: a symbolic link that leads nowhere (dangling, or a loop of links)"
        )
