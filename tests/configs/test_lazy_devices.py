"""With --arch given, `capgap scan` probes the GPUs for their names only when the target has tuned
configs to judge; --device wins; without --arch the probe runs up front for the archs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from capgap.scan import machine
from capgap.scan.analyzers import LazyDevices
from tests.cli_runner import run_cli

from .test_analyzer import MOE, RTX, RTX_FILE, _tree


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count probes; the machine has one RTX PRO 6000 (the boundary the probe reads)."""
    calls: list[int] = []

    def fake() -> list[SimpleNamespace]:
        calls.append(1)
        return [SimpleNamespace(name=RTX, compute_capability="12.0")]

    monkeypatch.setattr(machine, "_probed_gpus", fake)
    monkeypatch.setattr(machine, "_surely_no_gpu", lambda: False)  # a driver is here
    return calls


def _plain_tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "pkg" / "settings.json").write_text("{}")  # JSON, but no device in its name
    return root


def test_arch_given_leaves_the_probe_for_later(probes: list[int]) -> None:
    archs, devices = machine.resolve_archs_and_devices(["12.0"], [])
    assert [a.cc for a in archs] == ["12.0"]
    assert isinstance(devices, LazyDevices)
    assert probes == []
    assert devices.get() == (RTX,)
    assert devices.get() == (RTX,)
    assert probes == [1]  # asked once


def test_no_probe_for_a_tree_without_tuned_configs(tmp_path: Path, probes: list[int]) -> None:
    result = run_cli(
        "scan", str(_plain_tree(tmp_path)), "--arch", "12.0", "--format", "json", "--no-binaries"
    )
    assert result.code == 0, result.err
    assert json.loads(result.out)["findings"] == []
    assert probes == []


def test_tuned_configs_get_the_probed_device(tmp_path: Path, probes: list[int]) -> None:
    result = run_cli("scan", str(_tree(tmp_path)), "--arch", "12.0", "--format", "json", "--no-binaries")
    found = [f for f in json.loads(result.out)["findings"] if f["rule"] == "config-missing-device"]
    assert [(f["path"], f["missing"]) for f in found] == [(MOE, RTX_FILE)]
    assert probes == [1]


def test_device_option_wins_and_nothing_is_probed(tmp_path: Path, probes: list[int]) -> None:
    result = run_cli(
        "scan", str(_tree(tmp_path)), "--arch", "12.0", "--device", "NVIDIA L40S", "--format", "json"
    )
    found = [f for f in json.loads(result.out)["findings"] if f["rule"] == "config-missing-device"]
    assert [(f["path"], f["missing"]) for f in found] == [("pkg/full", "NVIDIA_L40S"), (MOE, "NVIDIA_L40S")]
    assert probes == []


def test_without_arch_the_probe_runs_up_front(probes: list[int]) -> None:
    archs, devices = machine.resolve_archs_and_devices([], [])
    assert probes == [1]
    assert ([a.cc for a in archs], devices) == (["12.0"], (RTX,))


def test_no_driver_means_no_probe_and_no_look_for_configs(
    tmp_path: Path, probes: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from capgap.configs import coverage

    looked: list[Path] = []
    monkeypatch.setattr(machine, "_surely_no_gpu", lambda: True)
    monkeypatch.setattr(coverage, "collect_dirs", lambda target: looked.append(target.root) or [])
    result = run_cli("scan", str(_tree(tmp_path)), "--arch", "12.0", "--format", "json", "--no-binaries")
    assert result.code == 0, result.err
    assert json.loads(result.out)["findings"] == []
    assert (probes, looked) == ([], [])


def test_probed_names_empty_means_no_config_findings_and_no_config_files_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capgap.configs.analyzer import analyze
    from capgap.scan.analyzers import ScanOptions
    from capgap.targets import resolve_target

    devices = LazyDevices(lambda: (), lambda: False)  # a driver, but no GPU answers
    result = analyze(resolve_target(str(_tree(tmp_path))), ScanOptions(archs=(), devices=devices))
    assert (result.findings, result.files) == ([], 0)  # as with no device at all


# A real run: NVML's library does not load here, and a stand-in nvidia-smi on PATH answers what
# the 2x H200 machine's nvidia-smi printed (the probe's fallback reads it).
_SMI = """#!/bin/sh
case "$1" in
  --query-gpu=*) cat "{dir}/smi_h200x2_query.csv" ;;
  topo) cat "{dir}/smi_h200x2_topo.txt" ;;
  *) cat "{dir}/smi_h200x2_header.txt" ;;
esac
"""
_CHILD = """
import json, sys
from capgap.cli import main
code = main(["scan", sys.argv[1], "--arch", "12.0", "--format", "json", "--no-binaries"])
print(code, "capgap.probe.smi" in sys.modules, file=sys.stderr)
"""


@pytest.mark.parametrize("configs", [False, True])
def test_a_real_scan_runs_nvidia_smi_only_for_tuned_configs(tmp_path: Path, configs: bool) -> None:
    if machine._nvml_library_loads():
        pytest.skip("NVML loads here: the stand-in nvidia-smi would not be asked")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(_SMI.format(dir=Path(__file__).resolve().parents[1] / "probe" / "fixtures"))
    smi.chmod(0o755)
    tree = _tree(tmp_path / "t") if configs else _plain_tree(tmp_path / "t")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tree)], capture_output=True, text=True, env=env, check=True
    )
    assert proc.stderr.split() == ["0", str(configs)]
    found = [(f["path"], f["missing"]) for f in json.loads(proc.stdout)["findings"]]
    assert found == ([(MOE, "NVIDIA_H200")] if configs else [])
