"""The NVML side of the probe: replayed recordings, the recorder itself, and no NVML at all."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from capgap.probe import gpus, smi
from capgap.probe.gpus import machine_from_nvml, probe_machine
from capgap.probe.nvml_backend import NvmlUnavailable, RecordingNvml, ReplayNvml
from tests.cli_runner import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
H200X2 = FIXTURES / "nvml_h200x2.json"  # the lead may replace it with a fresh recording
H200X2_HGX = FIXTURES / "nvml_h200x2_hgx_2026-11-29.json"  # a frozen copy, for exact details
DIRECT_PAIR = FIXTURES / "nvml_direct_pair_handmade.json"
REPO = Path(__file__).resolve().parents[2]


def _no_nvml() -> ReplayNvml:
    raise NvmlUnavailable("NVML init failed: NVML Shared Library Not Found")


def _no_smi(args: list[str]) -> str:
    raise FileNotFoundError("nvidia-smi not on PATH")


def test_replayed_h200x2_recording_is_two_h200s_joined_by_nvlink() -> None:
    # Holds for any recording of the 2x H200 machine, so the fixture can be re-recorded.
    machine = machine_from_nvml(ReplayNvml.load(H200X2))
    assert machine.source == "nvml"
    assert [(g.index, g.name, g.compute_capability) for g in machine.gpus] == [
        (0, "NVIDIA H200", "9.0"),
        (1, "NVIDIA H200", "9.0"),
    ]
    assert all(g.memory_bytes and g.memory_bytes > 140 * 2**30 for g in machine.gpus)
    assert len(machine.links) == 1
    link = machine.links[0]
    assert (link.a, link.b, link.kind) == (0, 1, "nvlink")
    assert link.nvlink_count > 0
    assert machine.driver_version and machine.cuda_driver_version


def test_real_h200x2_recording_details() -> None:
    # What the 2026-11-29 recording says: 18 links through NVSwitch at 26.562 GB/s each, P2P on.
    machine = machine_from_nvml(ReplayNvml.load(H200X2_HGX))
    assert [g.pci_bus_id for g in machine.gpus] == ["00000000:00:06.0", "00000000:00:07.0"]
    assert (machine.driver_version, machine.cuda_driver_version, machine.multicast_supported) == (
        "580.159.04",
        "13.0",
        True,
    )
    link = machine.links[0]
    assert (link.nvlink_count, link.via_nvswitch, link.per_link_gbps, link.p2p) == (18, True, 26.562, True)
    assert link.total_gbps == pytest.approx(18 * 26.562)
    assert link.pcie_path == "phb"


def test_direct_links_are_counted_once_not_from_both_ends() -> None:
    machine = machine_from_nvml(ReplayNvml.load(DIRECT_PAIR))
    link = machine.links[0]
    assert (link.kind, link.nvlink_count, link.via_nvswitch, link.pcie_path) == ("nvlink", 18, False, "sys")
    assert link.per_link_gbps == 26.562  # from the common-speed field this time
    assert machine.multicast_supported is True


def test_unrecorded_multicast_answer_means_unknown_not_false() -> None:
    answers = json.loads(H200X2.read_text())["answers"]
    del answers["cuda_multicast_supported[]"]
    machine = machine_from_nvml(ReplayNvml(answers))
    assert machine.multicast_supported is None
    assert {g.multicast_supported for g in machine.gpus} == {None}
    assert any("multicast support unknown" in n for n in machine.notes)


def test_pcie_only_pair_reports_the_path_kind() -> None:
    answers = json.loads(DIRECT_PAIR.read_text())["answers"]
    for key in [k for k in answers if k.startswith("nvlink_state")]:
        answers[key] = {"value": 0}
    answers["topology_common_ancestor[0, 1]"] = {"value": 20}
    answers["p2p_status[0, 1, 0]"] = {"value": 5}
    link = machine_from_nvml(ReplayNvml(answers)).links[0]
    assert (link.kind, link.nvlink_count, link.per_link_gbps, link.p2p) == ("pcie-pxb", 0, None, False)


def test_no_nvml_and_no_nvidia_smi_means_no_gpus() -> None:
    machine = probe_machine(backend_factory=_no_nvml, smi_runner=_no_smi)
    assert (machine.source, machine.gpus, machine.links, machine.multicast_supported) == (
        "none",
        [],
        [],
        None,
    )
    assert machine.notes == [
        "NVML unavailable: NVML init failed: NVML Shared Library Not Found",
        "nvidia-smi unavailable: nvidia-smi not on PATH",
    ]


def test_cli_probe_without_nvml_exits_0_with_no_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpus, "LiveNvml", _no_nvml)
    monkeypatch.setattr(smi, "_run", _no_smi)
    r = run_cli("probe", "--format", "json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert (doc["gpus"], doc["links"], doc["multicast_supported"], doc["source"]) == ([], [], None, "none")
    assert doc["stack"]["python_version"]
    text = run_cli("probe")
    assert text.code == 0
    assert "No NVIDIA GPU found" in text.out


def test_cli_probe_json_from_a_replayed_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpus, "LiveNvml", lambda: ReplayNvml.load(H200X2))
    r = run_cli("probe", "--format", "json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert [(g["index"], g["name"], g["compute_capability"]) for g in doc["gpus"]] == [
        (0, "NVIDIA H200", "9.0"),
        (1, "NVIDIA H200", "9.0"),
    ]
    assert doc["links"][0]["kind"] == "nvlink"
    assert set(doc) >= {"gpus", "links", "multicast_supported", "driver", "stack"}
    monkeypatch.setattr(gpus, "LiveNvml", lambda: ReplayNvml.load(H200X2_HGX))
    text = run_cli("probe")
    assert "NVIDIA H200" in text.out and "NV18 via NVSwitch" in text.out


def _load_recorder():
    path = REPO / "benchmarks" / "device" / "record_nvml.py"
    spec = importlib.util.spec_from_file_location("record_nvml", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_recorder_writes_a_recording_that_replays_to_the_same_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = _load_recorder()
    monkeypatch.setattr(recorder, "LiveNvml", lambda: ReplayNvml.load(H200X2))
    out = tmp_path / "rec.json"
    assert recorder.main(["record_nvml.py", str(out)]) == 0
    again = machine_from_nvml(ReplayNvml.load(out))
    assert again.to_json() == machine_from_nvml(ReplayNvml.load(H200X2)).to_json()
    assert json.loads(out.read_text())["hand_made"] is False
    assert json.loads(capsys.readouterr().out)["gpus"][0]["name"] == "NVIDIA H200"


def test_recording_keeps_errors_so_replay_sees_the_same_gaps() -> None:
    rec = RecordingNvml(ReplayNvml.load(H200X2_HGX))
    machine_from_nvml(rec)
    assert rec.answers["field_value[0, 90, 0]"] == {"error": "Exception: nvmlReturn 3"}
