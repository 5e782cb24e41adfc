"""The scan's own GPU listing: the same names and archs as `capgap probe`, from fewer questions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from capgap.probe import smi
from capgap.probe.gpus import probe_machine
from capgap.probe.nvml_backend import NvmlUnavailable, ReplayNvml
from capgap.scan import machine

PROBE_FIXTURES = Path(__file__).resolve().parents[1] / "probe" / "fixtures"
RECORDINGS = ["nvml_h200x2.json", "nvml_h200x2_hgx_2026-11-29.json", "nvml_direct_pair_handmade.json"]


class _Asked:
    """A replayed NVML that remembers which questions were asked."""

    def __init__(self, inner: ReplayNvml) -> None:
        self.inner = inner
        self.ops: set[str] = set()

    def query(self, op: str, *args: Any) -> Any:
        self.ops.add(op)
        return self.inner.query(op, *args)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("name", RECORDINGS)
def test_same_gpus_as_the_full_probe_from_three_questions(name: str) -> None:
    asked = _Asked(ReplayNvml.load(PROBE_FIXTURES / name))
    ours = machine._probed_gpus(lambda: asked)
    full = probe_machine(lambda: ReplayNvml.load(PROBE_FIXTURES / name)).gpus
    assert [(g.name, g.compute_capability) for g in ours] == [(g.name, g.compute_capability) for g in full]
    assert asked.ops == {"device_count", "name", "compute_capability"}  # no links, no libcuda


def test_h200_recording_gives_two_h200s() -> None:
    gpus = machine._probed_gpus(lambda: ReplayNvml.load(PROBE_FIXTURES / "nvml_h200x2_hgx_2026-11-29.json"))
    assert [(g.name, g.compute_capability) for g in gpus] == [("NVIDIA H200", "9.0")] * 2


def test_without_nvml_nvidia_smi_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_nvml() -> Any:
        raise NvmlUnavailable("NVML init failed: Driver Not Loaded")

    answers = {
        tuple(smi.QUERY): (PROBE_FIXTURES / "smi_h200x2_query.csv").read_text(),
        (): (PROBE_FIXTURES / "smi_h200x2_header.txt").read_text(),
        ("topo", "-m"): (PROBE_FIXTURES / "smi_h200x2_topo.txt").read_text(),
    }
    monkeypatch.setattr(smi, "_run", lambda args: answers[tuple(args)])
    gpus = machine._probed_gpus(no_nvml)
    assert [(g.name, g.compute_capability) for g in gpus] == [("NVIDIA H200", "9.0")] * 2


_CHILD = """
import sys
from capgap.scan import machine
print(machine._nvml_library_loads(), machine._probed_gpus(), "pynvml" in sys.modules)
"""


def test_a_machine_without_the_driver_lists_no_gpus_and_skips_pynvml() -> None:
    if machine._nvml_library_loads():
        pytest.skip("NVML's library loads here: this machine has a driver")
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["False", "[]", "False"]
