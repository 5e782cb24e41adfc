"""Issue 16, row 3: no code of a scanned environment, nor of the current directory, ever runs.

A real venv gets a dist installed by pip, then start-up code planted where an interpreter would
run it: a `.pth` line, `sitecustomize.py`, `usercustomize.py`; the current directory gets a
`json.py` and a `pip/` package. Each writes a marker file when run. `probe`, `scan` and
`binaries` with `--python`, and `scan REQ==V` (pip download from a local find-links directory,
no network) must leave no marker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from capgap.interpreters import describe, with_pth_paths
from tests.wheel_build import build_wheel, make_venv

TABLE = 'ARCH_TILES = {"9.0": 1, "10.0": 2}\n'


def _plant(path: Path, markers: Path, what: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    code = f"open({str(markers / what)!r}, 'w').write('ran')\n"
    path.write_text(code if path.suffix == ".py" else f"import os; {code}")


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("isolation")
    python, site = make_venv(root / "venv")
    wheel = build_wheel(root, "hostile_engine", "1.0", {"hostile_engine/__init__.py": TABLE})
    pip = [sys.executable, "-m", "pip", "--isolated", "--python", python, "install", "-q"]
    subprocess.run([*pip, "--no-index", "--no-deps", "--no-cache-dir", str(wheel)], check=True)
    markers = root / "markers"
    markers.mkdir()
    _plant(site / "aaa-evil.pth", markers, "pth")
    _plant(site / "sitecustomize.py", markers, "sitecustomize")
    _plant(site / "usercustomize.py", markers, "usercustomize")
    cwd = root / "cwd"
    _plant(cwd / "json.py", markers, "cwd-json")
    _plant(cwd / "pip" / "__init__.py", markers, "cwd-pip")
    _plant(cwd / "pip" / "__main__.py", markers, "cwd-pip-main")
    _plant(cwd / "packaging" / "__init__.py", markers, "cwd-packaging")
    links = root / "links"
    links.mkdir()
    build_wheel(links, "other_engine", "2.0", {"other_engine/__init__.py": TABLE})
    # the venv itself, run normally, does run what was planted (the test plants real start-up code)
    probe = subprocess.run([python, "-c", "pass"], cwd=cwd, check=False)
    assert probe.returncode == 0 and (markers / "pth").exists() and (markers / "sitecustomize").exists()
    for marker in markers.iterdir():
        marker.unlink()
    return {"python": Path(python), "site": site, "markers": markers, "cwd": cwd, "links": links}


def _capgap(planted: dict[str, Path], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(planted["links"])}
    env.pop("PYTHONPATH", None)
    # capgap's own console script: started as users start it (not with the cwd on its path)
    exe = Path(sys.executable).parent / "capgap"
    return subprocess.run(
        [str(exe), *args],
        cwd=planted["cwd"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _ran(planted: dict[str, Path]) -> list[str]:
    return sorted(p.name for p in planted["markers"].iterdir())


def test_probe_with_python_runs_nothing_of_that_env(planted: dict[str, Path]) -> None:
    proc = _capgap(planted, "probe", "--python", str(planted["python"]), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert _ran(planted) == []
    stack = json.loads(proc.stdout)["stack"]
    assert stack["python"] == str(planted["python"].absolute())


@pytest.mark.parametrize("verb", ["scan", "binaries"])
def test_installed_dist_target_with_python_runs_nothing(planted: dict[str, Path], verb: str) -> None:
    proc = _capgap(planted, verb, "hostile-engine", "--python", str(planted["python"]), "--arch", "12.0")
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    assert _ran(planted) == []
    if verb == "scan":
        assert "ARCH_TILES" in proc.stdout


@pytest.mark.parametrize("with_python", [False, True])
def test_a_requirement_is_downloaded_by_an_isolated_pip(planted: dict[str, Path], with_python: bool) -> None:
    """`scan REQ==V` ran a `./pip/` package from the current directory."""
    extra = ["--python", str(planted["python"])] if with_python else []
    proc = _capgap(planted, "scan", "other-engine==2.0", "--arch", "12.0", *extra)
    assert proc.returncode in (0, 1), proc.stderr
    assert "ARCH_TILES" in proc.stdout
    assert _ran(planted) == []


def test_pth_paths_are_read_and_pth_code_is_not_run(tmp_path: Path) -> None:
    site, extra = tmp_path / "site", tmp_path / "extra"
    site.mkdir()
    extra.mkdir()
    marker = tmp_path / "marker"
    (site / "a.pth").write_text(f"# comment\n{extra}\nimport os; open({str(marker)!r}, 'w')\nmissing-dir\n")
    (site / "b.pth").symlink_to("/dev/zero")  # refused by the bounded reader, not read forever
    assert with_pth_paths([str(site), str(tmp_path / "absent")]) == [str(site), str(extra)]
    assert not marker.exists()


def test_describe_reads_a_venvs_site_directories(planted: dict[str, Path]) -> None:
    other = describe(str(planted["python"]))
    assert str(planted["site"]) in other.sitedirs
    assert other.version.startswith(f"{sys.version_info[0]}.{sys.version_info[1]}.")
    assert _ran(planted) == []


def test_pip_download_for_another_python_version_passes_its_tags(monkeypatch: pytest.MonkeyPatch) -> None:
    """capgap's own pip downloads for another interpreter: with that interpreter's version and
    ABI (its own pip would run with its environment's start-up code)."""
    from capgap import interpreters, targets

    other = interpreters.Interpreter("/x/bin/python", "3.99.1", "cpython", "cpython-399-x86_64-linux-gnu", ())
    monkeypatch.setattr(interpreters, "describe", lambda python: other)
    options = targets._tag_options("/x/bin/python")
    assert options[:4] == ["--python-version", "3.99", "--implementation", "cp"]
    assert [options[i + 1] for i, o in enumerate(options) if o == "--abi"] == ["cp399", "abi3", "none"]
    assert "--platform" in options
    same = interpreters.Interpreter(
        "/y", f"{sys.version_info[0]}.{sys.version_info[1]}.0", "cpython", None, ()
    )
    monkeypatch.setattr(interpreters, "describe", lambda python: same)
    assert targets._tag_options("/y") == [] and targets._tag_options(None) == []
