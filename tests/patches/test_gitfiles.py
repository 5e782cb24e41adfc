"""The scratch repository's files written by capgap itself (a pack with its .idx, the index)
are what git reads and writes: checked with git's own verify-pack, cat-file and ls-files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from capgap.patches import gitfiles

BLOBS = [b"", b"one line\n", b"no final newline", b"\x00binary\xff" * 10, b"x" * 70_000 + b"\n"]


def _git(gitdir: Path, *args: str) -> bytes:
    env = {"GIT_DIR": str(gitdir), "GIT_INDEX_FILE": str(gitdir / "index"), "PATH": os.environ["PATH"]}
    env |= {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], env=env, check=True, capture_output=True).stdout


def _repo(tmp_path: Path) -> Path:
    gitdir = tmp_path / "git"
    (gitdir / "objects").mkdir(parents=True)
    (gitdir / "refs").mkdir()
    (gitdir / "HEAD").write_text("ref: refs/heads/main\n")
    return gitdir


def test_git_reads_the_pack_and_the_index_written_here(tmp_path: Path) -> None:
    gitdir = _repo(tmp_path)
    ids = {gitfiles.oid(b): b for b in BLOBS}
    gitfiles.write_pack(str(gitdir), ids)
    (idx,) = (gitdir / "objects/pack").glob("*.idx")
    _git(gitdir, "verify-pack", str(idx))  # checksums, CRCs, offsets and every object's id
    for oid, data in ids.items():
        assert _git(gitdir, "cat-file", "blob", oid) == data
    names = {str(n): oid for n, oid in enumerate(ids)} | {"10": gitfiles.EMPTY, "9": gitfiles.EMPTY}
    gitfiles.write_index(str(gitdir / "index"), names)
    listed = _git(gitdir, "ls-files", "-s").decode().splitlines()
    assert listed == [f"100644 {names[n]} 0\t{n}" for n in sorted(names)]
    assert gitfiles.read_index(str(gitdir / "index")) == names


def test_ids_and_loose_objects_are_gits(tmp_path: Path) -> None:
    gitdir = _repo(tmp_path)
    for data in BLOBS:
        oid = (
            subprocess.run(
                ["git", "hash-object", "-w", "--stdin"],
                input=data,
                env={**os.environ, "GIT_DIR": str(gitdir)},
                check=True,
                capture_output=True,
            )
            .stdout.decode()
            .strip()
        )
        assert gitfiles.oid(data) == oid
        assert gitfiles.read_loose(str(gitdir), oid) == data
    assert gitfiles.EMPTY == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert gitfiles.read_loose(str(gitdir), "0" * 40) is None


def test_read_index_keeps_only_merged_entries_of_an_index_git_wrote(tmp_path: Path) -> None:
    gitdir = _repo(tmp_path)
    a, b = gitfiles.oid(b"a\n"), gitfiles.oid(b"b\n")
    gitfiles.write_pack(str(gitdir), {a: b"a\n", b: b"b\n"})
    info = f"100644 {a} 0\tclean\n100644 {a} 1\tclash\n100644 {b} 2\tclash\n100644 {b} 0\tz/deep/name\n"
    env = {**os.environ, "GIT_DIR": str(gitdir), "GIT_INDEX_FILE": str(gitdir / "index")}
    subprocess.run(["git", "update-index", "--index-info"], input=info.encode(), env=env, check=True)
    assert gitfiles.read_index(str(gitdir / "index")) == {"clean": a, "z/deep/name": b}
