"""Relative paths from stores and trees are checked before any read or write: no absolute
paths, no `..`, nothing that resolves (through a symlink) outside the root."""

from __future__ import annotations

import os
import re
from pathlib import Path

from capgap.errors import StoreError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")


def check_name(name: str) -> str:
    """A patch name: one plain path component."""
    if not _NAME.match(name) or name in {".", ".."}:
        raise StoreError(f"invalid patch name {name!r} (letters, digits, '.', '_', '+', '-')")
    return name


def check_rel(rel: str) -> str:
    """A file path inside a target: relative, '/'-separated, no '..', no empty parts."""
    if not rel or "\x00" in rel or "\\" in rel or rel.startswith("/") or re.match(r"^[A-Za-z]:", rel):
        raise StoreError(f"refusing path {rel!r}: not a relative path inside the target")
    parts = rel.split("/")
    if any(p in {"..", ".", ""} for p in parts):
        raise StoreError(f"refusing path {rel!r}: '..' or empty components lead outside the target")
    if any(_is_git_dir(p) for p in parts):
        raise StoreError(
            f"refusing path {rel!r}: it is inside git's own directory (.git), which no patch touches"
        )
    return rel


# characters HFS+ ignores in names (git's is_hfs_dotgit): `.g\u200cit` is `.git` there
_HFS_IGNORED = dict.fromkeys(
    [0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]
)


def _is_git_dir(part: str) -> bool:
    """`.git` as git's verify_path refuses it: any case, trailing dots or spaces (Windows drops
    them), characters HFS+ ignores, and the 8.3 short name `git~1` (NTFS)."""
    name = part.translate(_HFS_IGNORED).rstrip(". ").lower()
    return name in {".git", "git~1"}


def safe_join(root: Path, rel: str) -> Path:
    """root/rel, refusing anything whose parent resolves outside root (symlink escapes).

    The last component may itself be a symlink only if it points inside root: writes replace
    the link (rename), reads would otherwise follow it out of the tree.
    """
    return Joiner(root)(rel)


class Joiner:
    """safe_join for the many paths of one run under one root: the root and each directory are
    resolved once per run (a run creates no symlinks; the last component is checked each time)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._real_root: Path | None = None
        self._checked_dirs: set[str] = set()

    def __call__(self, rel: str) -> Path:
        return Path(self.checked(rel))

    def checked(self, rel: str) -> str:
        """root/rel as a string (no Path to build, for the many paths of a run)."""
        path = self.parent_checked(rel)
        if os.path.islink(path):
            target = Path(os.path.realpath(path))
            if self._root() not in target.parents:
                raise StoreError(f"refusing path {rel!r}: symlink to {target} outside {self.root}")
        return path

    def _root(self) -> Path:
        if self._real_root is None:
            self._real_root = Path(os.path.realpath(self.root))
        return self._real_root

    def parent_checked(self, rel: str) -> str:
        """root/rel with its directory checked, but not its last component: for a caller that
        opens it with O_NOFOLLOW (and comes back through __call__ for a symlink)."""
        check_rel(rel)
        real_root = self._root()
        path = os.path.join(real_root, rel)
        head = rel.rpartition("/")[0]
        if head not in self._checked_dirs:
            parent = Path(os.path.realpath(os.path.dirname(path)))
            if parent != real_root and real_root not in parent.parents:
                raise StoreError(f"refusing path {rel!r}: it leads outside {self.root} through a symlink")
            self._checked_dirs.add(head)
        return path
