"""The nvidia-smi fallback, for when NVML can't be loaded from Python but the driver's tool runs."""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from collections.abc import Callable
from itertools import combinations

from capgap.probe.gpus import Gpu, Link, Machine

QUERY = [
    "--query-gpu=index,name,compute_cap,memory.total,pci.bus_id,driver_version",
    "--format=csv,noheader,nounits",
]
# `nvidia-smi topo -m` cell -> PCIe path word (same words as gpus.TOPOLOGY_PATHS).
_TOPO_PATHS = {"PIX": "pix", "PXB": "pxb", "PHB": "phb", "NODE": "node", "SYS": "sys", "SOC": "sys"}


def _run(args: list[str]) -> str:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        raise FileNotFoundError("nvidia-smi not on PATH")
    proc = subprocess.run([exe, *args], capture_output=True, text=True, timeout=30, check=False)
    if proc.returncode != 0:
        raise OSError(f"nvidia-smi {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[:200]}")
    return proc.stdout


def probe_with_smi(runner: Callable[[list[str]], str] | None = None) -> Machine:
    run = runner or _run
    try:
        csv = run(QUERY)
    except (OSError, subprocess.SubprocessError) as exc:
        return Machine(source="none", notes=[f"nvidia-smi unavailable: {exc}"])
    machine = Machine(source="nvidia-smi")
    machine.gpus, machine.driver_version = parse_query_csv(csv)
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        machine.cuda_driver_version = parse_cuda_version(run([]))
    if len(machine.gpus) > 1:
        try:
            machine.links = parse_topo_matrix(run(["topo", "-m"]), [g.index for g in machine.gpus])
        except (OSError, subprocess.SubprocessError) as exc:
            machine.notes.append(f"nvidia-smi topo -m failed: {exc}")
    machine.notes.append("nvidia-smi fallback: no P2P, NVLink bandwidth or multicast information")
    return machine


def parse_query_csv(text: str) -> tuple[list[Gpu], str | None]:
    """Rows of `index, name, compute_cap, memory.total [MiB], pci.bus_id, driver_version`."""
    gpus: list[Gpu] = []
    driver = None
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 6 or not cells[0].isdigit():
            continue
        index, name, cc, mem, bus, driver = cells[:6]
        gpus.append(
            Gpu(
                index=int(index),
                name=name,
                compute_capability=cc if re.fullmatch(r"\d+\.\d+", cc) else "unknown",
                memory_bytes=int(float(mem)) * 1024 * 1024 if re.fullmatch(r"[\d.]+", mem) else None,
                pci_bus_id=bus,
            )
        )
    return gpus, driver


def parse_cuda_version(text: str) -> str | None:
    m = re.search(r"CUDA Version\s*:\s*([\d.]+)", text)
    return m.group(1) if m else None


def parse_topo_matrix(text: str, indices: list[int]) -> list[Link]:
    """Read the GPU block of `nvidia-smi topo -m`: `NV18` = 18 NVLinks, else a PCIe path word."""
    rows: dict[int, list[str]] = {}
    for line in text.splitlines():
        m = re.match(r"^GPU(\d+)\s+(.*)$", line)  # rows start at column 0; the header is indented
        if m:
            rows[int(m.group(1))] = m.group(2).split()
    links = []
    for a, b in combinations(indices, 2):
        cells = rows.get(a)
        cell = cells[b] if cells and b < len(cells) else ""
        nv = re.fullmatch(r"NV(\d+)", cell)
        if nv:
            links.append(Link(a=a, b=b, kind="nvlink", nvlink_count=int(nv.group(1))))
        elif cell in _TOPO_PATHS:
            links.append(Link(a=a, b=b, kind=f"pcie-{_TOPO_PATHS[cell]}", pcie_path=_TOPO_PATHS[cell]))
        else:
            links.append(Link(a=a, b=b, kind="unknown"))
    return links
