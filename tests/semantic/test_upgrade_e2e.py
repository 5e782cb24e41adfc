"""The real case end to end: a local entry `12: [6, 8],` right after `10: [6, 8],` in a class
attribute dict; upstream changes that line to `10: [4, 6, 8],`. The line-based merge conflicts;
`capgap upgrade` must end with both upstream's line and the user's entry, on a git checkout and
on a pip-installed package (wheels and venv built here)."""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.patches.helpers import commit_all, git, write
from tests.wheel_build import build_wheel, make_venv

COMM_V1 = '''\
"""Symmetric-memory all-reduce settings."""


class SymmMemCommunicator:
    # world sizes that may use multimem all-reduce, per arch major
    _WORLD_SIZES_MULTIMEM = {
        9: [4, 6, 8],
        10: [6, 8],
    }

    def use_multimem(self, major, world_size):
        return world_size in self._WORLD_SIZES_MULTIMEM.get(major, [])
'''
COMM_V2 = COMM_V1.replace("        10: [6, 8],\n", "        10: [4, 6, 8],\n")
OURS_V1 = COMM_V1.replace("        10: [6, 8],\n", "        10: [6, 8],\n        12: [6, 8],\n")
EXPECTED = COMM_V2.replace("        10: [4, 6, 8],\n", "        10: [4, 6, 8],\n        12: [6, 8],\n")
REL = "engine/comm.py"


def _upgrade(*args: str) -> dict:
    res = run_cli("upgrade", *args)
    assert res.code == 0, res.err + res.out
    return json.loads(res.out)


def _outcomes(report: dict) -> list[str]:
    return [f["outcome"] for p in report["patches"] for f in p["files"]]


@pytest.fixture
def checkout(tmp_path: Path) -> tuple[Path, Path]:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    write(upstream, {REL: COMM_V1, "engine/__init__.py": ""})
    commit_all(upstream, "v1")
    git(tmp_path, "clone", "-q", str(upstream), "work")
    work = tmp_path / "work"
    (work / REL).write_text(OURS_V1)
    write(upstream, {REL: COMM_V2})
    commit_all(upstream, "upstream: multimem for 4 GPUs on 10.x")
    return upstream, work


def test_git_checkout_upgrade_keeps_entry_by_meaning(checkout: tuple[Path, Path], tmp_path: Path) -> None:
    _, work = checkout
    store = tmp_path / "store"
    report = _upgrade(
        str(work), "--store", str(store), "--name", "sm120", "--format", "json", "--", "git", "pull", "-q"
    )
    assert _outcomes(report) == ["semantic"]
    assert (work / REL).read_text() == EXPECTED
    [warning] = report["patches"][0]["warnings"]  # hardware sense: 12.x boards have no multicast
    assert warning.startswith("SymmMemCommunicator._WORLD_SIZES_MULTIMEM[12.0] = [6, 8]: cc 12.0")
    assert json.loads((store / "sm120" / "semantic.json").read_text()) == [
        {
            "module": "engine.comm",
            "path": REL,
            "symbol": "SymmMemCommunicator._WORLD_SIZES_MULTIMEM",
            "key": "12",
            "value": "[6, 8]",
            "key_style": "major-int",
            "note": "",
        }
    ]
    diff = git(work, "diff", "-U0").stdout
    assert [ln for ln in diff.splitlines() if ln.startswith(("+", "-")) and ln[:3] not in ("+++", "---")] == [
        "+        12: [6, 8],"
    ]


def test_git_checkout_without_semantic_step_conflicts(
    checkout: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the same upgrade with the semantic step taken out is a conflict."""
    monkeypatch.setitem(sys.modules, "capgap.semantic", None)
    _, work = checkout
    res = run_cli(
        "upgrade",
        str(work),
        "--store",
        str(tmp_path / "store"),
        "--format",
        "json",
        "--",
        "git",
        "pull",
        "-q",
    )
    assert res.code == 1
    assert _outcomes(json.loads(res.out)) == ["conflict"]


@pytest.fixture(scope="module")
def toy_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    base = tmp_path_factory.mktemp("semantic-toyenv")
    wheels = base / "wheels"
    for version, text in (("1.0", COMM_V1), ("2.0", COMM_V2)):
        build_wheel(wheels, "toyengine", version, {"engine/__init__.py": "", REL: text})
    python, site = make_venv(base / "venv")
    return python, site, wheels


def _pip(python: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "pip", "--python", python, *args]


def test_pip_installed_upgrade_keeps_entry_by_meaning(
    toy_env: tuple[str, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python, site, wheels = toy_env
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))  # pristine 1.0 comes from these wheels, offline
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    subprocess.run(
        _pip(python, "install", "-q", "--no-deps", str(wheels / "toyengine-1.0-py3-none-any.whl")), check=True
    )
    (site / REL).write_text(OURS_V1)
    store = tmp_path / "store"
    upgrade_cmd = _pip(python, "install", "-q", "--no-deps", str(wheels / "toyengine-2.0-py3-none-any.whl"))
    report = _upgrade(
        "toyengine",
        "--python",
        python,
        "--store",
        str(store),
        "--name",
        "sm120",
        "--format",
        "json",
        "--",
        *upgrade_cmd,
    )
    assert _outcomes(report) == ["semantic"]
    assert (site / REL).read_text() == EXPECTED
    version = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('toyengine'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version == "2.0"


def test_fix_on_a_pip_installed_package_then_upgrade(
    toy_env: tuple[str, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`capgap fix` on site-packages (real scan), then `capgap upgrade` to a version that edits
    the neighbouring lines: the fix's entries come back by meaning, nothing else changes."""
    from tests.semantic.test_fix_cli import USE
    from tests.semantic.test_fix_upgrade import COMM, ENTRY_LINES, FIXED, UPSTREAM_CHANGES

    python, site, _ = toy_env
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "toyfix", "1.0", {"toyfix/__init__.py": "", "toyfix/comm.py": COMM + USE})
    v2 = UPSTREAM_CHANGES["adjacent-edit"] + USE
    build_wheel(wheels, "toyfix", "2.0", {"toyfix/__init__.py": "", "toyfix/comm.py": v2})
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    subprocess.run(_pip(python, "install", "-q", "--no-deps", str(wheels / "toyfix-1.0-py3-none-any.whl")),
                   check=True)
    store = tmp_path / "store"
    res = run_cli("fix", "toyfix", "--python", python, "--arch", "12.0", "--store", str(store),
                  "--device", "RTX PRO 6000")
    assert res.code == 0, res.err + res.out
    assert (site / "toyfix/comm.py").read_text() == FIXED + USE
    upgrade_cmd = _pip(python, "install", "-q", "--no-deps", str(wheels / "toyfix-2.0-py3-none-any.whl"))
    report = _upgrade("toyfix", "--python", python, "--store", str(store), "--format", "json",
                      "--", *upgrade_cmd)
    assert _outcomes(report) == ["semantic"]
    diff = difflib.unified_diff(v2.splitlines(), (site / "toyfix/comm.py").read_text().splitlines(), n=0)
    assert [ln for ln in diff if ln.startswith(("+", "-")) and ln[:3] not in ("+++", "---")] == ENTRY_LINES
