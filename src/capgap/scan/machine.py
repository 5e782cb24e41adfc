"""Archs and device names for a scan: from the command line, else from this machine's GPUs."""

from __future__ import annotations

from typing import Any

from capgap.arch import ArchSpec, parse_arch, try_parse_arch
from capgap.errors import UsageError
from capgap.scan.analyzers import LazyDevices


def _probed_gpus() -> list[Any]:
    """The probe's GPUs, or [] when the probe is missing or finds none (no GPU, no driver)."""
    try:
        from capgap.probe.gpus import probe_machine  # type: ignore[import-not-found]
    except ImportError:
        return []
    try:
        return list(probe_machine().gpus or [])
    except Exception:  # noqa: BLE001 - a machine without NVML/nvidia-smi has no GPUs to offer
        return []


def _gpu_arch(gpu: Any) -> ArchSpec | None:
    for attr in ("cc", "compute_capability", "arch", "capability"):
        value = getattr(gpu, attr, None)
        if isinstance(value, (tuple, list)) and len(value) == 2:
            value = f"{value[0]}.{value[1]}"
        if value is not None:
            spec = try_parse_arch(str(value))
            if spec is not None:
                return spec
    return None


def _device_names(gpus: list[Any]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(g.name) for g in gpus if getattr(g, "name", None)))


def _probed_device_names() -> tuple[str, ...]:
    return _device_names(_probed_gpus())


def resolve_archs_and_devices(
    arch_args: list[str], device_args: list[str]
) -> tuple[tuple[ArchSpec, ...], tuple[str, ...] | LazyDevices]:
    """Archs from --arch, else from the probed GPUs; device names from --device, else the probe's.

    With --arch and no --device the probe is left to a LazyDevices: most targets have no tuned
    configs, and NVML start-up costs tens of milliseconds (more with many GPUs).
    """
    archs = [parse_arch(a) for a in arch_args]
    devices = tuple(dict.fromkeys(device_args))
    if archs:
        return tuple(dict.fromkeys(archs)), devices or LazyDevices(_probed_device_names)
    gpus = _probed_gpus()
    archs = [a for a in (_gpu_arch(g) for g in gpus) if a is not None]
    if not archs:
        raise UsageError(
            "no --arch given and no GPU found on this machine to take it from; pass e.g. --arch 12.0"
        )
    return tuple(dict.fromkeys(archs)), devices or _device_names(gpus)
