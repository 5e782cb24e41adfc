"""`fix --configs` on a real pip-installed distribution (a toy engine wheel built here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from capgap.arch import parse_arch
from capgap.configs.analyzer import analyze
from capgap.configs.fixer import MANIFEST, fix_configs
from capgap.patches.store import Store
from capgap.scan.analyzers import ScanOptions
from capgap.targets import resolve_target
from tests.wheel_build import build_wheel, make_venv

from .treebuild import entry

RTX = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
RTX_FILE = "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition"
D = "toyengine/moe/configs"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    base = tmp_path_factory.mktemp("toyengine")
    small = json.dumps({"1": entry(16, 64, 64, 2)})
    big = json.dumps({"1": entry(128, 256, 64, 4)})
    files = {
        "toyengine/__init__.py": "",
        f"{D}/E=8,N=8,device_name=NVIDIA_L40S.json": small,
        f"{D}/E=8,N=8,device_name=NVIDIA_H100_80GB_HBM3.json": big,
        f"{D}/E=16,N=8,device_name=NVIDIA_H100_80GB_HBM3.json": big,
    }
    wheel = build_wheel(base / "wheels", "toyengine", "1.0", files)
    python, site = make_venv(base / "venv")
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-index", "--no-deps"]
    subprocess.run([*pip, str(wheel)], check=True)
    return python, site


def test_copies_into_an_installed_dist_are_a_dist_patch_and_seen_by_the_next_scan(
    installed: tuple[str, Path], tmp_path: Path
) -> None:
    python, site = installed
    target = resolve_target("toyengine", python)
    assert target.kind == "dist"
    opts = ScanOptions(archs=(parse_arch("12.0"),), devices=(RTX,))
    assert [f.extra["missing_count"] for f in analyze(target, opts).findings] == [2]

    store = Store(tmp_path / "store")
    copies = fix_configs(target, [RTX], store=store, python=python)
    assert [(c.shape, c.status, c.source_device) for c in copies] == [
        ("E=8,N=8", "copied", "NVIDIA_L40S"),
        ("E=16,N=8", "refused", None),  # 144 KB on sm_120
    ]
    (name,) = store.names()
    patch = store.load(name)
    assert patch.target["kind"] == "dist" and patch.target["name"] == "toyengine"
    assert {e.path: e.pristine_sha for e in patch.files} == {
        f"{D}/E=8,N=8,device_name={RTX_FILE}.json": None,
        f"{D}/{MANIFEST}": None,
    }
    assert (site / D / f"E=8,N=8,device_name={RTX_FILE}.json").is_file()

    # the copy is not in the dist's RECORD, yet the next scan sees it
    again = resolve_target("toyengine", python)
    assert [f.extra["missing_examples"] for f in analyze(again, opts).findings] == [["E=16,N=8"]]
