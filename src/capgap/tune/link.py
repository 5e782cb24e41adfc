"""How close the best measured bus bandwidth comes to the NVLink limit of one GPU.

The limit is active links x per-link speed in one direction (an all-reduce's bus bandwidth, as
nccl-tests defines it, is what one GPU moves each way). Link count and version come from NVML
on the machine that measured (recorded by the worker in the raw file's environment). Per-link
speed: NVML's own field when the driver reports it, else the datasheet figure for the version.
"""

from __future__ import annotations

from typing import Any

# nvml.h nvmlNvlinkVersion_t -> (name, GB/s per link per direction, from the datasheets:
# V100 6 links 300 GB/s, A100 12 links 600 GB/s, H100/H200 18 links 900 GB/s, B200 18 links 1.8 TB/s,
# each counted in both directions).
_NVML_VERSIONS = {
    2: ("NVLink 2", 25.0),
    3: ("NVLink 2.2", 25.0),
    4: ("NVLink 3", 25.0),
    5: ("NVLink 3.1", 25.0),
    6: ("NVLink 4", 25.0),
    7: ("NVLink 5", 50.0),
}


def link_limit(environment: dict[str, Any]) -> dict[str, Any]:
    """{"limit_gbps", "links", "per_link_gbps", "source"} or {"note": why there is none}."""
    nvlink = environment.get("nvlink")
    if not isinstance(nvlink, dict):
        return {"note": "no GPU link information was recorded (CPU run)"}
    if "error" in nvlink:
        return {"note": f"NVLink state unknown: {nvlink['error']}"}
    links = int(nvlink.get("active_links") or 0)
    if links == 0:
        return {"note": "no active NVLink: the GPUs talk over PCIe, whose limit NVML does not give"}
    name, per_link = _NVML_VERSIONS.get(nvlink.get("version") or 0, (None, None))
    source = f"{name} datasheet speed" if name else None
    if nvlink.get("speed_mbps_per_link"):
        per_link, source = nvlink["speed_mbps_per_link"] / 1000.0, "NVML per-link speed"
    if per_link is None:
        version = nvlink.get("version")
        return {"note": f"{links} active NVLinks of unknown version {version!r}: no speed known"}
    return {
        "limit_gbps": round(links * per_link, 1),
        "links": links,
        "per_link_gbps": per_link,
        "link": name or f"NVML version {nvlink.get('version')}",
        "source": source,
    }


def closeness(limit: dict[str, Any], best_busbw_gbps: float) -> dict[str, Any]:
    out = dict(limit)
    out["best_busbw_gbps"] = round(best_busbw_gbps, 1)
    if "limit_gbps" in limit:
        out["fraction_of_limit"] = round(best_busbw_gbps / limit["limit_gbps"], 3)
    return out
