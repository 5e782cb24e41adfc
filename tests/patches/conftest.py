"""Fixtures for the patch tests: a real upstream git repo and a clone with local edits."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.patches.helpers import commit_all, git, write

TABLES_V1 = """\
MiB = 1024 * 1024

# per arch major: world size -> max bytes for the symmetric-memory all-reduce
TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES = {
    9: {2: 64 * MiB, 4: 32 * MiB, 8: 64 * MiB},
    10: {2: 64 * MiB, 4: 32 * MiB, 8: 64 * MiB},
}

WORLD_SIZES_MULTIMEM = {
    9: [4, 6, 8],
    10: [6, 8],
}


def max_size(major, world):
    return TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES[major][world]
"""

GATE_V1 = """\
def supported(major):
    return major in (9, 10)
"""

LOCAL_ENTRY = "    12: {2: 64 * MiB, 4: 32 * MiB, 8: 64 * MiB},\n"


def with_local_edit(text: str) -> str:
    """The user's fix: key 12 after key 10 in the all-reduce table."""
    anchor = "    10: {2: 64 * MiB, 4: 32 * MiB, 8: 64 * MiB},\n"
    assert anchor in text
    return text.replace(anchor, anchor + LOCAL_ENTRY, 1)


@pytest.fixture(autouse=True)
def _without_semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests pin the line-based pipeline; the semantic step (another package) is off."""
    monkeypatch.setitem(sys.modules, "capgap.semantic", None)


@dataclass
class Repos:
    upstream: Path
    work: Path
    store: Path

    def upstream_commit(self, files: dict[str, str], message: str = "upstream change") -> None:
        write(self.upstream, files)
        commit_all(self.upstream, message)


@pytest.fixture
def repos(tmp_path: Path) -> Repos:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    write(upstream, {"pkg/tables.py": TABLES_V1, "pkg/gate.py": GATE_V1, "README": "engine\n"})
    commit_all(upstream, "v1")
    git(tmp_path, "clone", "-q", str(upstream), "work")
    return Repos(upstream, tmp_path / "work", tmp_path / "store")
