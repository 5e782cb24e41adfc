"""Environment metadata recorded next to the raw samples (runs inside the worker, rank 0).

NVLink facts come from NVML (nvidia-ml-py, imported lazily; absent -> recorded as unknown), so
the link limit is read on the machine that measured, not on the one that plots.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capgap.probe.gpus import Machine

_ENV_KEYS = (
    "NCCL_NVLS_ENABLE",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST",
    "NVSHMEM_DISABLE_NVLS",
    "CUDA_VISIBLE_DEVICES",
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_P2P_LEVEL",
    "NCCL_DEBUG",
)


def environment(device: Any | None) -> dict[str, Any]:
    import torch

    env: dict[str, Any] = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "env": {k: os.environ[k] for k in _ENV_KEYS if k in os.environ},
    }
    if device is None:
        return env
    props = torch.cuda.get_device_properties(device)
    env.update(
        {
            "gpu": props.name,
            "cc": f"{props.major}.{props.minor}",
            "gpu_count": torch.cuda.device_count(),
            "nccl": ".".join(map(str, torch.cuda.nccl.version())),
        }
    )
    bus_id = _pci_bus_id(props)
    env["nvlink"] = nvlink_info(bus_id, device.index or 0)
    return env


def _pci_bus_id(props: Any) -> str | None:
    if all(hasattr(props, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
        return f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
    return None


def nvlink_info(bus_id: str | None, index: int, machine: Machine | None = None) -> dict[str, Any]:
    """Active NVLink count and per-link speed of one GPU, from capgap's probe (NVML).

    Behind an NVSwitch every peer pair reports the GPU's own links (NV18 to each peer), so the
    GPU's count is the largest pair count; with direct links each pair has its own, so they add.
    """
    if machine is None:
        from capgap.probe.gpus import probe_machine

        try:
            machine = probe_machine()
        except Exception as exc:  # the probe failing must not lose the measurements
            return {"error": f"probe failed: {exc}"}
    if machine.source != "nvml":
        return {"error": f"NVML unavailable ({'; '.join(machine.notes) or machine.source})"}
    gpu = next((g for g in machine.gpus if bus_id and g.pci_bus_id.upper() == bus_id.upper()), None)
    gpu = gpu or next((g for g in machine.gpus if g.index == index), None)
    if gpu is None:
        return {"error": f"the probe does not list GPU {bus_id or index}"}
    links = [lk for lk in machine.links if lk.kind == "nvlink" and gpu.index in (lk.a, lk.b)]
    if not links:
        return {"active_links": 0, "version": None, "source": "capgap probe (NVML)"}
    switched = any(lk.via_nvswitch for lk in links)
    counts = [lk.nvlink_count for lk in links]
    info: dict[str, Any] = {
        "active_links": max(counts) if switched else sum(counts),
        "version": None,
        "via_nvswitch": switched,
        "source": "capgap probe (NVML)",
    }
    speeds = [lk.per_link_gbps for lk in links if lk.per_link_gbps]
    if speeds:
        info["speed_mbps_per_link"] = round(min(speeds) * 1000)
    return info
