"""What a scan says it scanned, and what it did not (issue 15, items 10 and 11): each target as
it resolved (an installed dist names its environment, a name that is not installed is downloaded
and says so), a target with nothing capgap reads, tuned configs with no device to judge them for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from capgap.scan.machine import _surely_no_gpu
from tests.cli_runner import run_cli
from tests.wheel_build import build_wheel, make_venv

DEVICE = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
TABLE = "SIZES = {9: 1, 10: 2}\n\n\ndef get(major):\n    return SIZES[major]\n"


@pytest.fixture
def wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "toyscan", "1.3", {"toyscan/__init__.py": "", "toyscan/t.py": TABLE})
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))  # `pip download` finds it here, offline
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    return wheels


def test_a_name_that_is_not_installed_is_downloaded_and_the_header_says_so(wheels: Path) -> None:
    res = run_cli("scan", "toyscan", "-a", "12.0", "--device", DEVICE)
    assert res.code == 1, res.err  # the table lacks 12
    first = res.out.splitlines()[0]
    assert first.startswith(f"scanned toyscan 1.3 (not installed in the environment of {sys.executable}, ")
    assert "so downloaded: the wheel unpacked in " in first
    data = json.loads(run_cli("scan", "toyscan==1.3", "-a", "12.0", "--format", "json").out)
    [target] = data["targets"]
    assert (target["kind"], target["name"], target["version"]) == ("requirement", "toyscan", "1.3")
    assert target["resolved"].startswith("toyscan 1.3 (downloaded: ")  # asked for by version


def test_an_installed_dist_names_its_environment(wheels: Path, tmp_path: Path) -> None:
    python, site = make_venv(tmp_path / "venv")
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps"]
    subprocess.run([*pip, str(wheels / "toyscan-1.3-py3-none-any.whl")], check=True)
    res = run_cli("scan", "toyscan", "--python", python, "-a", "12.0", "--device", DEVICE)
    assert (
        res.out.splitlines()[0] == f"scanned toyscan 1.3 (installed in the environment of {python}, {site})"
    )


def test_a_target_with_nothing_to_read_is_said_and_skipped(tmp_path: Path) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01 not an ELF, not Python\n")
    res = run_cli("scan", str(junk), "-a", "12.0", "--device", DEVICE)
    assert res.code == 0
    assert f"skipped {junk}: nothing here that capgap reads" in res.out
    data = json.loads(run_cli("scan", str(junk), "-a", "12.0", "--device", DEVICE, "--format", "json").out)
    assert data["skipped"] == [
        {
            "path": str(junk),
            "reason": "nothing here that capgap reads (Python source, build files, "
            "compiled libraries, tuned configs)",
        }
    ]


@pytest.mark.skipif(not _surely_no_gpu(), reason="this machine has a GPU driver: devices come from it")
def test_without_device_and_gpu_the_tuned_config_check_is_said_to_be_skipped(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(TABLE)
    res = run_cli("scan", str(tmp_path), "-a", "12.0")
    assert "notice: tuned-config coverage not checked: no GPU found here" in res.err
    assert "--device NAME" in res.err
    with_device = run_cli("scan", str(tmp_path), "-a", "12.0", "--device", DEVICE, "--format", "json")
    assert json.loads(with_device.out)["notices"] == [] and "notice" not in with_device.err
