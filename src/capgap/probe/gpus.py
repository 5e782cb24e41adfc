"""What GPUs this machine has and how each pair is joined. NVML first, nvidia-smi as fallback.

With no GPU, no driver and no NVML, `probe_machine` returns a Machine with no GPUs (source
"none") and says why in `notes`; it never raises for a missing GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

from capgap.probe.nvml_backend import (
    FI_NVLINK_GET_SPEED,
    FI_NVLINK_LINK_COUNT,
    FI_NVLINK_SPEED_MBPS_COMMON,
    LiveNvml,
    NvmlBackend,
    NvmlCallError,
    NvmlUnavailable,
)

# nvmlGpuTopologyLevel_t -> the words nvidia-smi's `topo -m` legend uses.
TOPOLOGY_PATHS = {0: "internal", 10: "pix", 20: "pxb", 30: "phb", 40: "node", 50: "sys"}
NVLINK_DEVICE_SWITCH = 2  # NVML_NVLINK_DEVICE_TYPE_SWITCH
P2P_READ, P2P_WRITE, P2P_NVLINK = 0, 1, 2  # NVML_P2P_CAPS_INDEX_*
P2P_OK = 0  # NVML_P2P_STATUS_OK
_MAX_LINKS_WITHOUT_COUNT = 18  # when the link-count field is unsupported: Hopper/Blackwell have 18


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    compute_capability: str  # "X.Y"
    memory_bytes: int | None
    pci_bus_id: str
    multicast_supported: bool | None = None  # CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED


@dataclass(frozen=True)
class Link:
    """How GPUs a and b are joined. Bandwidths are GB/s (1e9 bytes/s) per direction, as NVML reports."""

    a: int
    b: int
    kind: str  # "nvlink" or "pcie-<path>" (pix, pxb, phb, node, sys, internal) or "unknown"
    nvlink_count: int = 0
    per_link_gbps: float | None = None
    total_gbps: float | None = None
    p2p: bool | None = None
    pcie_path: str | None = None
    via_nvswitch: bool = False


@dataclass
class Machine:
    gpus: list[Gpu] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    multicast_supported: bool | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None  # "13.0", the newest CUDA the driver supports
    source: str = "none"  # "nvml" | "nvidia-smi" | "none"
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "driver": {"version": self.driver_version, "cuda": self.cuda_driver_version},
            "gpus": [asdict(g) for g in self.gpus],
            "links": [asdict(link) for link in self.links],
            "multicast_supported": self.multicast_supported,
            "notes": list(self.notes),
        }


def probe_machine(
    backend_factory: Callable[[], NvmlBackend] | None = None,
    smi_runner: Callable[[list[str]], str] | None = None,
) -> Machine:
    """Describe this machine's GPUs. The arguments replace NVML / nvidia-smi (tests, replays)."""
    notes: list[str] = []
    try:
        backend = (backend_factory or LiveNvml)()
    except NvmlUnavailable as exc:
        notes.append(f"NVML unavailable: {exc}")
    else:
        try:
            return machine_from_nvml(backend)
        finally:
            backend.close()
    from capgap.probe import smi

    machine = smi.probe_with_smi(smi_runner)
    machine.notes[:0] = notes
    return machine


def machine_from_nvml(nv: NvmlBackend) -> Machine:
    """Parse NVML's answers (live or replayed) into a Machine."""
    m = Machine(source="nvml")
    m.driver_version = _try(nv, "driver_version")
    cuda = _try(nv, "cuda_driver_version")
    if isinstance(cuda, int) and cuda > 0:
        m.cuda_driver_version = f"{cuda // 1000}.{cuda % 1000 // 10}"
    count = _try(nv, "device_count") or 0
    multicast = _try(nv, "cuda_multicast_supported") if count else None
    for i in range(count):
        cc = _try(nv, "compute_capability", i)
        bus = _try(nv, "pci_bus_id", i) or ""
        mc = multicast.get(_bus_key_lookup(multicast, bus)) if isinstance(multicast, dict) else None
        m.gpus.append(
            Gpu(
                index=i,
                name=_try(nv, "name", i) or "unknown",
                compute_capability=f"{cc[0]}.{cc[1]}" if cc else "unknown",
                memory_bytes=_try(nv, "memory_total", i),
                pci_bus_id=bus,
                multicast_supported=None if mc is None else bool(mc),
            )
        )
    m.links = _links(nv, m.gpus)
    flags = [g.multicast_supported for g in m.gpus]
    if flags and all(f is not None for f in flags):
        m.multicast_supported = all(flags)
    elif m.gpus:
        m.notes.append(
            "multicast support unknown: libcuda could not be asked, or CUDA does not see every GPU "
            "(CUDA_VISIBLE_DEVICES)"
        )
    return m


def _try(nv: NvmlBackend, op: str, *args: Any) -> Any:
    try:
        return nv.query(op, *args)
    except NvmlCallError:
        return None


def normalize_bus_id(bus_id: str) -> str:
    """'00000000:18:00.0' and '0000:18:00.0' name the same device: compare domain, bus, device, fn."""
    text = bus_id.strip().lower()
    parts = text.split(":")
    if len(parts) == 3:
        domain, bus, devfn = parts
        return f"{int(domain, 16):04x}:{bus}:{devfn}"
    return text


def _bus_key_lookup(table: dict[str, Any], bus: str) -> str | None:
    want = normalize_bus_id(bus)
    return next((k for k in table if normalize_bus_id(k) == want), None)


def _nvlinks(
    nv: NvmlBackend, gpus: list[Gpu]
) -> tuple[dict[tuple[int, int], int], dict[int, int], dict[int, float]]:
    """Active NVLinks: direct GPU-GPU counts, links into an NVSwitch per GPU, per-link GB/s per GPU."""
    by_bus = {normalize_bus_id(g.pci_bus_id): g.index for g in gpus}
    direct: dict[tuple[int, int], int] = {}
    to_switch: dict[int, int] = {}
    speed: dict[int, float] = {}
    for g in gpus:
        count = _try(nv, "field_value", g.index, FI_NVLINK_LINK_COUNT, 0)
        common = _try(nv, "field_value", g.index, FI_NVLINK_SPEED_MBPS_COMMON, 0)
        link_speeds: list[float] = []
        for link in range(int(count) if count else _MAX_LINKS_WITHOUT_COUNT):
            if _try(nv, "nvlink_state", g.index, link) != 1:
                continue
            remote = _try(nv, "nvlink_remote_pci_bus_id", g.index, link)
            peer = by_bus.get(normalize_bus_id(remote)) if remote else None
            if peer is not None and peer != g.index:
                direct[(g.index, peer)] = direct.get((g.index, peer), 0) + 1
            elif _try(nv, "nvlink_remote_device_type", g.index, link) == NVLINK_DEVICE_SWITCH:
                to_switch[g.index] = to_switch.get(g.index, 0) + 1
            per = _try(nv, "field_value", g.index, FI_NVLINK_GET_SPEED, link)
            if per:
                link_speeds.append(float(per))
        if common:
            speed[g.index] = float(common) / 1000
        elif link_speeds:
            speed[g.index] = min(link_speeds) / 1000
    # Each end counts its own links; take the larger count in case one end answered less.
    pairs: dict[tuple[int, int], int] = {}
    for (a, b), n in direct.items():
        key = (min(a, b), max(a, b))
        pairs[key] = max(pairs.get(key, 0), n)
    return pairs, to_switch, speed


def _links(nv: NvmlBackend, gpus: list[Gpu]) -> list[Link]:
    direct, to_switch, speed = _nvlinks(nv, gpus)
    out: list[Link] = []
    for a, b in combinations([g.index for g in gpus], 2):
        level = _try(nv, "topology_common_ancestor", a, b)
        path = TOPOLOGY_PATHS.get(level) if level is not None else None
        count, via_switch = direct.get((a, b), 0), False
        if not count and to_switch.get(a) and to_switch.get(b):
            count, via_switch = min(to_switch[a], to_switch[b]), True
        per_link = min(speed[a], speed[b]) if a in speed and b in speed else speed.get(a) or speed.get(b)
        if count:
            kind = "nvlink"
        else:
            kind, per_link = (f"pcie-{path}" if path else "unknown"), None
        out.append(
            Link(
                a=a,
                b=b,
                kind=kind,
                nvlink_count=count,
                per_link_gbps=round(per_link, 3) if per_link else None,
                total_gbps=round(per_link * count, 3) if per_link and count else None,
                p2p=_p2p(nv, a, b),
                pcie_path=path,
                via_nvswitch=via_switch,
            )
        )
    return out


def _p2p(nv: NvmlBackend, a: int, b: int) -> bool | None:
    read = _try(nv, "p2p_status", a, b, P2P_READ)
    write = _try(nv, "p2p_status", a, b, P2P_WRITE)
    if read is None or write is None:
        return None
    return read == P2P_OK and write == P2P_OK
