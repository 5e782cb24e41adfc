"""Patches on a real pip-installed distribution in a venv the tests make (two versions of a
toy package built here as wheels; 2.0 changes lines next to the patched ones and moves a file)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from capgap.patches.store import Store
from tests.cli_runner import run_cli
from tests.patches.conftest import GATE_V1, TABLES_V1, with_local_edit
from tests.wheel_build import build_wheel, make_venv

TABLES_V2 = TABLES_V1.replace("9: [4, 6, 8]", "9: [2, 4, 6, 8]")
GATE_V2 = '"""Which archs the fast path supports."""\n\n\n' + GATE_V1
GATE_FIXED = GATE_V1.replace("(9, 10)", "(9, 10, 12)")


@dataclass
class Toy:
    python: str
    site: Path
    wheels: Path
    store: Path

    def pip(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "pip", "--python", self.python, *args]

    def install(self, version: str, *extra: str) -> None:
        wheel = self.wheels / f"toypkg-{version}-py3-none-any.whl"
        subprocess.run(self.pip("install", "-q", "--no-index", "--no-deps", *extra, str(wheel)), check=True)

    def cli(self, *args: str):  # noqa: ANN201
        cut = args.index("--") if "--" in args else len(args)  # options go before `-- CMD`
        return run_cli(*args[:cut], "--store", str(self.store), "--python", self.python, *args[cut:])


@pytest.fixture(scope="session")
def toy_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    base = tmp_path_factory.mktemp("toyenv")
    wheels = base / "wheels"
    build_wheel(
        wheels,
        "toypkg",
        "1.0",
        {"toypkg/__init__.py": "", "toypkg/tables.py": TABLES_V1, "toypkg/gate.py": GATE_V1},
    )
    build_wheel(
        wheels,
        "toypkg",
        "2.0",
        {"toypkg/__init__.py": "", "toypkg/tables.py": TABLES_V2, "toypkg/backends/gate.py": GATE_V2},
    )
    python, site = make_venv(base / "venv")
    return python, site, wheels


@pytest.fixture
def toy(toy_env: tuple[str, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Toy:
    python, site, wheels = toy_env
    # `pip download` of the exact version (pristine source) finds the wheels here, offline
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    env = Toy(python, site, wheels, tmp_path / "store")
    shutil.rmtree(site / "toypkg", ignore_errors=True)  # files an earlier test added
    env.install("1.0", "--force-reinstall")  # one pip call: whatever was installed goes
    return env


def _edit_site(toy: Toy) -> None:
    (toy.site / "toypkg/tables.py").write_text(with_local_edit(TABLES_V1))
    (toy.site / "toypkg/gate.py").write_text(GATE_FIXED)
    (toy.site / "toypkg/sm120.py").write_text("SMEM_KB = 99\n")
    (toy.site / "toypkg/__pycache__").mkdir(exist_ok=True)
    (toy.site / "toypkg/__pycache__/tables.cpython-311.pyc").write_bytes(b"\x00junk")


def test_upgrade_pip_install_carries_edits_over_changed_and_moved_files(toy: Toy) -> None:
    _edit_site(toy)
    res = toy.cli("patch", "save", "bw", "toypkg", "--format", "json")
    assert res.code == 0, res.err
    meta = json.loads(res.out)
    assert meta["target"] == {
        "kind": "dist",
        "name": "toypkg",
        "version": "1.0",
        "commit": None,
        "root": None,
        "python": toy.python,
    }
    assert [f["path"] for f in meta["files"]] == ["toypkg/gate.py", "toypkg/sm120.py", "toypkg/tables.py"]

    cmd = toy.pip("install", "-q", "--no-index", "--no-deps", str(toy.wheels / "toypkg-2.0-py3-none-any.whl"))
    res = toy.cli("upgrade", "toypkg", "--format", "json", "--", *cmd)
    assert res.code == 0, res.err + res.out
    report = json.loads(res.out)
    assert (report["versions_before"]["toypkg"], report["versions_after"]["toypkg"]) == ("1.0", "2.0")
    outcomes = {f["path"]: (f["outcome"], f["detail"]) for f in report["patches"][0]["files"]}
    assert outcomes["toypkg/tables.py"][0] == "merged"
    assert outcomes["toypkg/gate.py"] == (
        "merged",
        "file moved upstream: toypkg/gate.py -> toypkg/backends/gate.py; 3-way merge over upstream changes",
    )
    assert outcomes["toypkg/sm120.py"][0] == "applied"
    assert (toy.site / "toypkg/tables.py").read_text() == with_local_edit(TABLES_V2)
    assert (toy.site / "toypkg/backends/gate.py").read_text() == GATE_V2.replace("(9, 10)", "(9, 10, 12)")
    assert not (toy.site / "toypkg/gate.py").exists()

    # the patch was made for 1.0: applying it to 2.0 warned (once: --strict makes that exit 1) ...
    assert report["patches"][0]["warnings"] == ["patch bw was made for toypkg 1.0; applying it to 2.0"]
    # ... and the store now holds it against 2.0 (the moved file under its new path), so the
    # tree is 2.0 + the store: no warning any more, nothing to save again
    assert "patch bw is now recorded against toypkg 2.0 (was made for 1.0)" in report["notes"]
    meta = json.loads((toy.store / "bw" / "meta.json").read_text())
    assert meta["target"]["version"] == "2.0"
    assert [f["path"] for f in meta["files"]] == [
        "toypkg/backends/gate.py",
        "toypkg/sm120.py",
        "toypkg/tables.py",
    ]
    res = toy.cli("patch", "apply", "toypkg", "--strict")
    assert res.code == 0 and "made for" not in res.err, res.err
    again = json.loads(toy.cli("upgrade", "toypkg", "--strict", "--format", "json", "--", "true").out)
    assert again["saved_patch"] is None and again["patches"][0]["warnings"] == []


def test_for_range_reverse_and_not_installed(toy: Toy, tmp_path: Path) -> None:
    _edit_site(toy)
    assert toy.cli("patch", "save", "bw", "toypkg", "--for", "toypkg<2").code == 0
    bad = toy.cli("patch", "save", "other", "toypkg", "--for", "sglang<2")
    assert bad.code == 2 and "--for must name toypkg" in bad.err
    res = toy.cli("patch", "apply", "toypkg", "--reverse")
    assert res.code == 0, res.err
    assert (toy.site / "toypkg/tables.py").read_text() == TABLES_V1
    assert (toy.site / "toypkg/gate.py").read_text() == GATE_V1
    assert not (toy.site / "toypkg/sm120.py").exists()

    toy.install("2.0")
    res = toy.cli("patch", "apply", "toypkg", "--format", "json")
    assert json.loads(res.out)["targets"][0]["patches"][0]["outcome"] == "skipped"
    assert (toy.site / "toypkg/tables.py").read_text() == TABLES_V2
    listed = json.loads(toy.cli("patch", "list", "--format", "json").out)["patches"][0]
    assert listed["status"] == "outside its --for range" and listed["for"] == "toypkg<2"

    # an environment without toypkg: a patch for it is an error, not a silent skip
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    other = ("--store", str(toy.store), "--python", str(bare / "bin/python"))
    res = run_cli("patch", "apply", *other)
    assert res.code == 2 and "'toypkg' is not installed" in res.err
    assert run_cli("patch", "apply", "toypkg", *other).code == 2
    listed = json.loads(run_cli("patch", "list", "--format", "json", *other).out)["patches"][0]
    assert listed["status"] == "not installed"


def test_edit_then_commit_stores_and_applies_without_touching_site_packages_by_hand(
    toy: Toy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an edit in site-packages whose pristine copy can't be found anywhere: upgrade refuses, touching nothing
    monkeypatch.delenv("PIP_FIND_LINKS")
    (toy.site / "toypkg/gate.py").write_text(GATE_FIXED)
    res = toy.cli("upgrade", "toypkg", "--", sys.executable, "-c", "raise SystemExit(0)")
    assert res.code == 2 and "cannot find the pristine toypkg/gate.py of toypkg 1.0" in res.err
    assert (toy.site / "toypkg/gate.py").read_text() == GATE_FIXED
    assert Store(toy.store).names() == []
    (toy.site / "toypkg/gate.py").write_text(GATE_V1)

    edit_dir = tmp_path / "edit"
    res = toy.cli("patch", "edit", "toypkg", "--dir", str(edit_dir))
    assert res.code == 0, res.err
    assert (edit_dir / "toypkg/tables.py").read_text() == TABLES_V1
    (edit_dir / "toypkg/tables.py").write_text(with_local_edit(TABLES_V1))
    res = run_cli("patch", "commit", str(edit_dir), "--store", str(toy.store), "--format", "json")
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert out["patch"]["name"] == "toypkg" and [f["path"] for f in out["patch"]["files"]] == [
        "toypkg/tables.py"
    ]
    assert out["results"][0]["files"][0]["outcome"] == "applied"
    assert (toy.site / "toypkg/tables.py").read_text() == with_local_edit(TABLES_V1)
    listed = json.loads(toy.cli("patch", "list", "--format", "json").out)["patches"][0]
    assert listed["status"] == "applied"


def test_a_dists_lock_and_run_live_in_its_site_dir_for_every_store(toy: Toy, tmp_path: Path) -> None:
    """Issue 16, row 4 for an installed dist: two stores meet one lock, beside the dist-info
    directories (not inside one: an upgrade renames it), and a run leaves only the lock there."""
    from capgap.errors import StoreError
    from capgap.patches.detect import resolve
    from capgap.patches.run import session
    from capgap.patches.store import Store

    target = resolve("toypkg", toy.python)
    assert target.kind == "dist" and target.root == toy.site
    with session(Store(tmp_path / "A"), target):
        assert (toy.site / ".capgap" / "lock").is_file()
        with (
            pytest.raises(StoreError, match="another capgap run is working on"),
            session(Store(tmp_path / "B"), target),
        ):
            pass
    _edit_site(toy)
    assert toy.cli("patch", "save", "bw", "toypkg").code == 0
    toy.install("1.0", "--force-reinstall")
    assert toy.cli("patch", "apply", "toypkg").code == 0
    assert sorted(p.name for p in (toy.site / ".capgap").iterdir() if p.name != ".done") == ["lock"]
    assert not list(toy.site.glob("toypkg-*.dist-info/*capgap*"))
