"""The patch lifecycle after the first upgrade (issue 15, items 1, 2 and 6), played for real:
`capgap fix` on a pip-installed package (wheels and a venv built here) and on a git checkout,
`capgap upgrade` to a version whose neighbouring lines changed (re-applied by meaning), then
what users do next: reverse the patch, upgrade again, call capgap without `--python`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.patches.helpers import commit_all, git, write
from tests.semantic.test_fix_cli import USE
from tests.semantic.test_fix_upgrade import COMM, FIXED, UPSTREAM_CHANGES
from tests.wheel_build import build_wheel, make_venv

REL = "toyfix/comm.py"
V1 = COMM + USE
V2 = UPSTREAM_CHANGES["adjacent-edit"] + USE


def _pip(python: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "pip", "--python", python, *args]


class Env:
    def __init__(self, base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.wheels = base / "wheels"
        for version, text in (("1.0", V1), ("2.0", V2)):
            build_wheel(self.wheels, "toyfix", version, {"toyfix/__init__.py": "", REL: text})
        self.python, self.site = make_venv(base / "venv")
        self.store = base / "store"
        monkeypatch.setenv("PIP_FIND_LINKS", str(self.wheels))  # pristine copies from these wheels, offline
        monkeypatch.setenv("PIP_NO_INDEX", "1")
        self.install("1.0")

    def install_cmd(self, version: str) -> list[str]:
        return _pip(
            self.python, "install", "-q", "--no-deps", str(self.wheels / f"toyfix-{version}-py3-none-any.whl")
        )

    def install(self, version: str) -> None:
        subprocess.run(self.install_cmd(version), check=True)

    def text(self) -> str:
        return (self.site / REL).read_text()

    def cli(self, *args: str, python: bool = False):  # noqa: ANN201
        extra = ["--store", str(self.store), *(("--python", self.python) if python else ())]
        cut = args.index("--") if "--" in args else len(args)  # options before the upgrade command
        return run_cli(*args[:cut], *extra, *args[cut:])

    def fixed_and_upgraded(self) -> dict:
        fix = self.cli("fix", "toyfix", "--arch", "12.0", "--device", "RTX PRO 6000", python=True)
        assert fix.code == 0, fix.err + fix.out
        assert self.text() == FIXED + USE
        res = self.cli("upgrade", "toyfix", "--format", "json", "--", *self.install_cmd("2.0"), python=True)
        assert res.code == 0, res.err + res.out
        report = json.loads(res.out)
        assert [f["outcome"] for p in report["patches"] for f in p["files"]] == ["semantic"]
        return report


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    return Env(tmp_path, monkeypatch)


def test_pip_reverse_after_a_semantic_reapply_gives_back_upstream(env: Env) -> None:
    env.fixed_and_upgraded()
    res = env.cli("patch", "apply", "toyfix", "--reverse", "--format", "json")
    assert res.code == 0, res.err + res.out
    [patch] = json.loads(res.out)["targets"][0]["patches"]
    assert [f["outcome"] for f in patch["files"]] == ["applied"]
    assert (env.site / REL).read_bytes() == V2.encode()  # upstream 2.0, byte for byte
    again = env.cli("patch", "apply", "toyfix", "--format", "json")  # and forward again
    assert again.code == 0, again.err
    assert "12: [6, 8]" in env.text() and "10: [4, 6, 8]" in env.text()


def test_pip_the_store_holds_the_patch_against_the_new_version(env: Env) -> None:
    report = env.fixed_and_upgraded()
    assert any("now recorded against toyfix 2.0 (was made for 1.0)" in n for n in report["notes"])
    meta = json.loads((env.store / "fix-sm_120" / "meta.json").read_text())
    assert meta["target"]["version"] == "2.0" and meta["rebased_from"] == "1.0"
    [entry] = meta["files"]
    blobs = env.store / "fix-sm_120" / "blobs"
    assert (blobs / entry["pristine_sha256"]).read_bytes() == V2.encode()
    assert (blobs / entry["patched_sha256"]).read_bytes() == (env.site / REL).read_bytes()
    records = json.loads((env.store / "fix-sm_120" / "semantic.json").read_text())
    assert [(r["symbol"], r["key"]) for r in records] == [
        ("TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", "12"),
        ("SymmConfig._WORLD_SIZES_MULTIMEM", "12"),
    ]


def test_pip_later_upgrades_save_no_duplicate_and_stop_warning(env: Env) -> None:
    env.fixed_and_upgraded()
    fixed = env.text()
    for _ in range(2):
        res = env.cli("upgrade", "toyfix", "--format", "json", "--", "true")
        assert res.code == 0, res.err + res.out
        report = json.loads(res.out)
        assert report["saved_patch"] is None
        assert [f["outcome"] for p in report["patches"] for f in p["files"]] == ["applied"]
        assert not any("made for" in w for p in report["patches"] for w in p["warnings"])
        assert env.text() == fixed
    assert sorted(p.name for p in env.store.iterdir() if not p.name.startswith(".")) == ["fix-sm_120"]
    listed = env.cli("patch", "list", "--format", "json")
    assert [r["status"] for r in json.loads(listed.out)["patches"]] == ["applied"]


def test_the_store_remembers_the_interpreter(env: Env) -> None:
    env.fixed_and_upgraded()  # --python given once, to fix and to upgrade
    meta = json.loads((env.store / "fix-sm_120" / "meta.json").read_text())
    assert meta["target"]["python"] == env.python
    env.install("1.0")  # a downgrade behind capgap's back; then, without --python:
    res = env.cli("upgrade", "toyfix", "--format", "json", "--", *env.install_cmd("2.0"))
    assert res.code == 0, res.err + res.out
    assert f"using the environment of {env.python}" in res.err
    assert "12: [6, 8]" in env.text() and "10: [4, 6, 8]" in env.text()
    for args in (("patch", "apply", "toyfix"), ("patch", "list")):
        assert env.cli(*args).code == 0


def test_not_installed_names_the_environment_and_suggests_python(tmp_path: Path) -> None:
    res = run_cli("patch", "apply", "toyfix-nowhere", "--store", str(tmp_path / "store"))
    assert res.code == 2
    assert f"not installed in the environment of {sys.executable} (the Python running capgap)" in res.err
    assert "--python PATH" in res.err and "Traceback" not in res.err
    other = run_cli(
        "upgrade", "toyfix-nowhere", "--python", sys.executable, "--store", str(tmp_path), "--", "true"
    )
    assert other.code == 2 and f"environment of {sys.executable}; pass --python" in other.err


@pytest.fixture
def checkout(tmp_path: Path) -> tuple[Path, Path]:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    write(upstream, {REL: V1, "toyfix/__init__.py": ""})
    commit_all(upstream, "v1")
    git(tmp_path, "clone", "-q", str(upstream), "work")
    return upstream, tmp_path / "work"


def test_git_reverse_and_later_upgrades_after_a_semantic_reapply(
    checkout: tuple[Path, Path], tmp_path: Path
) -> None:
    upstream, work = checkout
    store = str(tmp_path / "store")
    fix = run_cli("fix", str(work), "--arch", "12.0", "--device", "RTX PRO 6000", "--store", store)
    assert fix.code == 0, fix.err
    write(upstream, {REL: V2})
    commit_all(upstream, "adjacent edit")
    res = run_cli("upgrade", str(work), "--store", store, "--format", "json", "--", "git", "pull", "-q")
    assert res.code == 0, res.err + res.out
    assert [f["outcome"] for p in json.loads(res.out)["patches"] for f in p["files"]] == ["semantic"]
    again = run_cli("upgrade", str(work), "--store", store, "--format", "json", "--", "true")
    assert again.code == 0 and json.loads(again.out)["saved_patch"] is None, again.err
    rev = run_cli("patch", "apply", str(work), "--reverse", "--store", store)
    assert rev.code == 0, rev.err + rev.out
    assert (work / REL).read_bytes() == git(work, "show", f"HEAD:{REL}").stdout.encode()
    assert git(work, "status", "--porcelain").stdout == ""


def test_git_two_patches_on_one_file_reverse_one_alone(checkout: tuple[Path, Path], tmp_path: Path) -> None:
    """A local edit saved as its own patch, then a fix of the same file; after the upgrade each
    is recorded against what it was applied on, so taking out the fix leaves the edit."""
    upstream, work = checkout
    store = str(tmp_path / "store")
    mine = V1.replace('        return "multimem"\n', '        return "multimem"  # mine\n')
    (work / REL).write_text(mine)
    assert run_cli("patch", "save", "mine", str(work), "--store", store).code == 0
    fix = run_cli("fix", str(work), "-a", "12.0", "--device", "RTX PRO 6000", "--store", store)
    assert fix.code == 0, fix.err
    write(upstream, {REL: V2})
    commit_all(upstream, "adjacent edit")
    res = run_cli("upgrade", str(work), "--store", store, "--format", "json", "--", "git", "pull", "-q")
    assert res.code == 0, res.err + res.out
    both = (work / REL).read_text()
    assert "# mine" in both and "12: [6, 8]" in both and "10: [4, 6, 8]" in both
    rev = run_cli("patch", "apply", str(work), "--patch", "fix-sm_120", "--reverse", "--store", store)
    assert rev.code == 0, rev.err + rev.out
    assert (work / REL).read_text() == V2.replace(
        '        return "multimem"\n', '        return "multimem"  # mine\n'
    )
    assert run_cli("patch", "apply", str(work), "--store", store).code == 0
    assert (work / REL).read_text() == both
    again = run_cli("upgrade", str(work), "--store", store, "--format", "json", "--", "true")
    assert again.code == 0 and json.loads(again.out)["saved_patch"] is None, again.err


def test_pip_upgrade_by_hand_then_patch_apply_records_the_new_version(env: Env) -> None:
    fix = env.cli("fix", "toyfix", "--arch", "12.0", "--device", "RTX PRO 6000", python=True)
    assert fix.code == 0, fix.err
    env.install("2.0")  # `pip install -U` without capgap: the fix is gone
    assert env.text() == V2
    res = env.cli("patch", "apply", "toyfix", "--format", "json")  # the stored interpreter
    assert res.code == 0, res.err
    [target] = json.loads(res.out)["targets"]
    assert [f["outcome"] for p in target["patches"] for f in p["files"]] == ["semantic"]
    assert "patch fix-sm_120 is now recorded against toyfix 2.0 (was made for 1.0)" in target["notes"]
    again = env.cli("upgrade", "toyfix", "--format", "json", "--", "true")
    assert again.code == 0 and json.loads(again.out)["saved_patch"] is None, again.err
    rev = env.cli("patch", "apply", "toyfix", "--reverse")
    assert rev.code == 0 and (env.site / REL).read_bytes() == V2.encode()


def test_a_store_from_before_learns_the_interpreter_on_the_next_apply(env: Env) -> None:
    fix = env.cli("fix", "toyfix", "--arch", "12.0", "--device", "RTX PRO 6000", python=True)
    assert fix.code == 0, fix.err
    meta_path = env.store / "fix-sm_120" / "meta.json"
    meta = json.loads(meta_path.read_text())
    del meta["target"]["python"]  # as capgap wrote it before it recorded the interpreter
    meta_path.write_text(json.dumps(meta))
    res = env.cli("patch", "apply", "toyfix", "--format", "json", python=True)
    assert res.code == 0, res.err
    assert json.loads(res.out)["targets"][0]["patches"][0]["outcome"] == "applied-already"
    meta = json.loads(meta_path.read_text())
    assert meta["target"]["python"] == env.python and meta["target"]["version"] == "1.0"
    assert env.cli("patch", "apply", "toyfix").code == 0  # and from now on without --python
