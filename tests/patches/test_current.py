"""PatchTarget.current reads a tree file with one open (O_NOFOLLOW): plain files, absent ones,
directories, symlinks inside the root (followed) and outside it (refused), FIFOs (refused, never
opened for a blocking read)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from capgap.errors import StoreError, TargetError
from capgap.patches.detect import PatchTarget
from capgap.patches.safepath import Joiner


def test_current_reads_what_the_tree_holds_and_refuses_what_leads_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside.txt"
    (root / "pkg/sub").mkdir(parents=True)
    (root / "pkg/a.py").write_bytes(b"A = 1\n")
    (root / "pkg/big.bin").write_bytes(b"\x00\xff" * 700_000)  # more than one read
    (root / "pkg/alias.py").symlink_to("a.py")
    outside.write_text("secret\n")
    (root / "pkg/out.py").symlink_to(outside)
    os.mkfifo(root / "pkg/fifo.py")
    target = PatchTarget("git", "root", root)
    join = Joiner(root)
    assert target.current("pkg/a.py", join) == b"A = 1\n"
    assert target.current("pkg/big.bin", join) == b"\x00\xff" * 700_000
    assert target.current("pkg/alias.py", join) == b"A = 1\n"
    assert target.current("pkg/missing.py", join) is None
    assert target.current("pkg/nodir/x.py", join) is None
    assert target.current("pkg/sub", join) is None
    assert target.current("pkg/a.py") == b"A = 1\n"  # without a run's Joiner
    with pytest.raises(StoreError, match="outside"):
        target.current("pkg/out.py", join)
    with pytest.raises(TargetError, match="not a regular file \\(a FIFO\\)"):
        target.current("pkg/fifo.py", join)
    with pytest.raises(StoreError, match="refusing path"):
        target.current("../outside.txt", join)
