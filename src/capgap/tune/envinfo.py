"""Environment metadata recorded next to the raw samples (runs inside the worker, rank 0).

NVLink facts come from NVML (nvidia-ml-py, imported lazily; absent -> recorded as unknown), so
the link limit is read on the machine that measured, not on the one that plots.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

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


def nvlink_info(bus_id: str | None, index: int) -> dict[str, Any]:
    """Active NVLink count, NVLink version and per-link speed of one GPU, as NVML reports them."""
    try:
        import pynvml
    except ImportError:
        return {"error": "nvidia-ml-py (pynvml) is not installed"}
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        return {"error": f"NVML init failed: {exc}"}
    info: dict[str, Any] = {}
    try:
        try:
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id) if bus_id else None
        except pynvml.NVMLError:
            handle = None
        handle = handle or pynvml.nvmlDeviceGetHandleByIndex(index)
        info["driver"] = _text(pynvml.nvmlSystemGetDriverVersion())
        active, version = 0, None
        for link in range(getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18)):
            try:
                if pynvml.nvmlDeviceGetNvLinkState(handle, link) == pynvml.NVML_FEATURE_ENABLED:
                    active += 1
                    version = version or pynvml.nvmlDeviceGetNvLinkVersion(handle, link)
            except pynvml.NVMLError:
                continue
        info.update({"active_links": active, "version": version})
        field = getattr(pynvml, "NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON", None)
        if field is not None and active:
            try:
                value = pynvml.nvmlDeviceGetFieldValues(handle, [field])[0]
                if value.nvmlReturn == 0:
                    info["speed_mbps_per_link"] = int(value.value.uiVal)
                else:
                    info["speed_nvml_return"] = int(value.nvmlReturn)
            except Exception as exc:  # older drivers lack the field
                info["speed_error"] = str(exc)
    except Exception as exc:
        info["error"] = f"NVML query failed: {exc}"
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()
    return info


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
