"""What a target is: which directories' new files belong to an installed dist (namespace packages
are shared), and a git checkout's top level and HEAD."""

from __future__ import annotations

from pathlib import Path

import pytest

from capgap.errors import TargetError
from capgap.patches.detect import _own_dirs, resolve
from tests.patches.helpers import commit_all, git


def test_namespace_dirs_shared_with_other_dists_are_not_walked_whole() -> None:
    record = {
        "nvidia/cublas/__init__.py": "x",
        "nvidia/cublas/lib/libcublas.so.13": "x",
        "nvidia/cublas/include/cublas.h": "x",
        "toy/__init__.py": "x",
        "toy/sub/tables.py": "x",
        "toy_data/blob.bin": "x",
        "single_module.py": "x",
    }
    assert _own_dirs(record) == ({"nvidia/cublas", "toy"}, {"toy_data"})


def test_a_checkout_resolves_to_its_top_level_and_head_from_any_subdirectory(tmp_path: Path) -> None:
    (tmp_path / "repo" / "pkg").mkdir(parents=True)
    (tmp_path / "repo" / "pkg" / "m.py").write_text("X = 1\n")
    git(tmp_path / "repo", "init", "-q")
    with pytest.raises(TargetError, match="has no commit yet"):
        resolve(str(tmp_path / "repo" / "pkg"))
    commit_all(tmp_path / "repo", "base")
    head = git(tmp_path / "repo", "rev-parse", "HEAD").stdout.strip()
    target = resolve(str(tmp_path / "repo" / "pkg"))
    assert (target.kind, target.root, target.commit) == ("git", (tmp_path / "repo").resolve(), head)
    (tmp_path / "plain").mkdir()
    with pytest.raises(TargetError, match="is not a git checkout"):
        resolve(str(tmp_path / "plain"))
