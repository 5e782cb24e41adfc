"""With --arch given, `capgap scan` probes the GPUs for their names only when the target has tuned
configs to judge; --device wins; without --arch the probe runs up front for the archs."""

from __future__ import annotations

import json
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


_CHILD = """
import sys
from capgap.cli import main
code = main(["scan", sys.argv[1], "--arch", "12.0", "--format", "json", "--no-binaries"])
print(code, "capgap.probe.gpus" in sys.modules, "pynvml" in sys.modules, file=sys.stderr)
"""


@pytest.mark.parametrize(("configs", "probed"), [(False, "False False"), (True, "True")])
def test_the_real_probe_is_imported_only_for_tuned_configs(
    tmp_path: Path, configs: bool, probed: str
) -> None:
    tree = _tree(tmp_path) if configs else _plain_tree(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tree)], capture_output=True, text=True, check=True
    )
    code, *loaded = proc.stderr.split()
    assert code == "0"
    assert " ".join(loaded).startswith(probed)
