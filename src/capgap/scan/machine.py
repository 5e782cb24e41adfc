"""Archs and device names for a scan: from the command line, else from this machine's GPUs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from capgap.arch import ArchSpec, parse_arch, try_parse_arch
from capgap.errors import UsageError
from capgap.scan.analyzers import LazyDevices


@dataclass(frozen=True)
class ProbedGpu:
    name: str
    compute_capability: str  # "X.Y", or "unknown"


def _probed_gpus(backend_factory: Callable[[], Any] | None = None) -> list[Any]:
    """This machine's GPUs (name, compute capability), or [] when there is none (no GPU, no driver).

    The same GPUs `capgap probe` lists (NVML, else nvidia-smi), without what a scan never needs:
    links, and libcuda's multicast attribute (cuInit costs up to seconds on a big host).
    `backend_factory` replaces NVML (tests, replays).
    """
    try:
        from capgap.probe.nvml_backend import LiveNvml, NvmlCallError, NvmlUnavailable
    except ImportError:
        return []
    try:
        try:
            if backend_factory is None and not _nvml_library_loads():
                raise NvmlUnavailable("NVML's library does not load")
            nv = (backend_factory or LiveNvml)()
        except NvmlUnavailable:
            from capgap.probe.smi import probe_with_smi

            return list(probe_with_smi().gpus)
        try:
            return _nvml_gpus(nv, NvmlCallError)
        finally:
            nv.close()
    except Exception:  # noqa: BLE001 - a machine without NVML/nvidia-smi has no GPUs to offer
        return []


def _nvml_library_loads() -> bool:
    """A plain dlopen of NVML's library (Linux): without it (no driver) pynvml's ~15 ms import is
    skipped. pynvml loads the same name there, so the answer is the one pynvml would give."""
    if not sys.platform.startswith("linux"):
        return True
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def _nvml_gpus(nv: Any, call_error: type[Exception]) -> list[ProbedGpu]:
    """Name and compute capability of every GPU NVML lists (as probe.gpus.machine_from_nvml reads them)."""

    def ask(op: str, *args: Any) -> Any:
        try:
            return nv.query(op, *args)
        except call_error:
            return None

    out = []
    for i in range(ask("device_count") or 0):
        cc = ask("compute_capability", i)
        out.append(ProbedGpu(ask("name", i) or "unknown", f"{cc[0]}.{cc[1]}" if cc else "unknown"))
    return out


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


def _surely_no_gpu() -> bool:
    """Neither NVML's library nor nvidia-smi is here (~1 ms to tell): `_probed_gpus` would find
    nothing, so there is no need to look for tuned configs to judge."""
    if not sys.platform.startswith("linux"):
        return False
    import shutil

    return not _nvml_library_loads() and shutil.which("nvidia-smi") is None


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
        # lambdas: the functions are looked up when asked (tests replace them)
        lazy = LazyDevices(lambda: _probed_device_names(), lambda: _surely_no_gpu())
        return tuple(dict.fromkeys(archs)), devices or lazy
    gpus = _probed_gpus()
    archs = [a for a in (_gpu_arch(g) for g in gpus) if a is not None]
    if not archs:
        raise UsageError(
            "no --arch given and no GPU found on this machine to take it from; pass e.g. --arch 12.0"
        )
    return tuple(dict.fromkeys(archs)), devices or _device_names(gpus)
