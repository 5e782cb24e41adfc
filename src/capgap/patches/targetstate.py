"""Where a target's lock and its unfinished run live: with the target, not with a user or a store.

Two runs on one target with different stores (or different `$HOME`s) must meet the same lock,
and a run killed under one store must be found by the next run whatever store it names. So:

- a git checkout: `<git dir>/capgap/` (git never lists it, `git clean` never removes it; a
  worktree has a git dir of its own);
- an installed distribution: `<site directory>/.capgap/` beside the dist-info directories. Not
  inside `NAME-VERSION.dist-info/`: an upgrade renames that directory mid-run (the next run would
  find another lock), and pip's uninstall would leave it behind holding only capgap's files.

Inside: `lock`, `run/` (journal, backups, staged contents), `.done/` (finished runs being deleted).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from capgap.errors import StoreError

_GIT_DIRS: dict[str, str] = {}  # real root -> its git dir (told by the target's own rev-parse)


def remember_git_dir(root: Path | str, git_dir: str) -> None:
    _GIT_DIRS[os.path.realpath(root)] = git_dir


def _git_dir(real_root: str) -> str | None:
    if real_root in _GIT_DIRS:
        return _GIT_DIRS[real_root]
    if not os.path.lexists(os.path.join(real_root, ".git")):
        return None
    try:
        proc = subprocess.run(
            ["git", "-C", real_root, "rev-parse", "--absolute-git-dir"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError as exc:
        raise StoreError(f"cannot run git to find {real_root}'s git directory: {exc}") from exc
    if proc.returncode != 0 or not proc.stdout.strip():
        # never fall back to a directory in the work tree: git would list it as a local change
        raise StoreError(f"{real_root} has a .git, but git cannot tell its git directory")
    _GIT_DIRS[real_root] = proc.stdout.strip()
    return _GIT_DIRS[real_root]


def state_dir(root: Path | str) -> Path:
    """capgap's directory of this target (see the module docstring); not created here."""
    real = os.path.realpath(root)
    git_dir = _git_dir(real)
    return Path(git_dir) / "capgap" if git_dir is not None else Path(real) / ".capgap"


def lock_path(root: Path | str) -> Path:
    return state_dir(root) / "lock"


def run_dir(root: Path | str) -> Path:
    return state_dir(root) / "run"
