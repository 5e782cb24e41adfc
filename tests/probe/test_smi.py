"""The nvidia-smi fallback, fed with what nvidia-smi printed on the 2x H200 machine (2026-11-29)."""

from __future__ import annotations

from pathlib import Path

from capgap.probe.gpus import Link, probe_machine
from capgap.probe.nvml_backend import NvmlUnavailable
from capgap.probe.smi import QUERY, parse_cuda_version, parse_query_csv, parse_topo_matrix, probe_with_smi

FIXTURES = Path(__file__).parent / "fixtures"
CSV = (FIXTURES / "smi_h200x2_query.csv").read_text()
TOPO = (FIXTURES / "smi_h200x2_topo.txt").read_text()  # tabs and the ANSI underline, as printed
HEADER = (FIXTURES / "smi_h200x2_header.txt").read_text()


def _recorded(args: list[str]) -> str:
    return {tuple(QUERY): CSV, (): HEADER, ("topo", "-m"): TOPO}[tuple(args)]


def test_query_csv_gives_each_gpu() -> None:
    gpus, driver = parse_query_csv(CSV)
    assert driver == "580.159.04"
    assert [(g.index, g.name, g.compute_capability, g.memory_bytes, g.pci_bus_id) for g in gpus] == [
        (0, "NVIDIA H200", "9.0", 143771 * 2**20, "00000000:00:06.0"),
        (1, "NVIDIA H200", "9.0", 143771 * 2**20, "00000000:00:07.0"),
    ]


def test_cuda_version_from_the_banner() -> None:
    assert parse_cuda_version(HEADER) == "13.0"
    assert parse_cuda_version("no banner") is None


def test_topo_matrix_nv18() -> None:
    assert parse_topo_matrix(TOPO, [0, 1]) == [Link(a=0, b=1, kind="nvlink", nvlink_count=18)]


def test_topo_matrix_pcie_paths() -> None:
    # Hand-written in nvidia-smi's layout: a 3-GPU PCIe box.
    text = (
        "\tGPU0\tGPU1\tGPU2\tCPU Affinity\n"
        "GPU0\t X \tPIX\tSYS\t0-15\n"
        "GPU1\tPIX\t X \tSYS\t0-15\n"
        "GPU2\tSYS\tSYS\t X \t16-31\n"
    )
    assert [(link.a, link.b, link.kind) for link in parse_topo_matrix(text, [0, 1, 2])] == [
        (0, 1, "pcie-pix"),
        (0, 2, "pcie-sys"),
        (1, 2, "pcie-sys"),
    ]


def test_probe_falls_back_to_nvidia_smi_when_nvml_fails() -> None:
    def no_nvml():
        raise NvmlUnavailable("NVML init failed: Driver Not Loaded")

    machine = probe_machine(backend_factory=no_nvml, smi_runner=_recorded)
    assert machine.source == "nvidia-smi"
    assert (machine.driver_version, machine.cuda_driver_version) == ("580.159.04", "13.0")
    assert [g.compute_capability for g in machine.gpus] == ["9.0", "9.0"]
    assert [(link.kind, link.nvlink_count, link.p2p) for link in machine.links] == [("nvlink", 18, None)]
    assert machine.multicast_supported is None
    assert machine.notes[0] == "NVML unavailable: NVML init failed: Driver Not Loaded"


def test_failing_nvidia_smi_means_no_gpus() -> None:
    def fails(args: list[str]) -> str:
        raise OSError("nvidia-smi --query-gpu exited 9: NVIDIA-SMI has failed")

    machine = probe_with_smi(fails)
    assert (machine.source, machine.gpus) == ("none", [])
    assert "NVIDIA-SMI has failed" in machine.notes[0]
