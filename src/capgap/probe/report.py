"""Presentation of `probe` and `arch` results: rich tables in text mode, one object in json."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from capgap import output
from capgap.output import Format

if TYPE_CHECKING:
    from capgap.arch import ArchSpec
    from capgap.probe.gpus import Machine
    from capgap.probe.stack import Stack


def probe_json(machine: Machine, stack: Stack) -> dict[str, Any]:
    m = machine.to_json()
    return {
        "gpus": m["gpus"],
        "links": m["links"],
        "multicast_supported": m["multicast_supported"],
        "driver": m["driver"],
        "source": m["source"],
        "notes": m["notes"],
        "stack": stack.to_json(),
    }


def render_probe(machine: Machine, stack: Stack, fmt: Format) -> None:
    if fmt is Format.json:
        output.emit_json(probe_json(machine, stack))
        return
    _render_machine(machine)
    _render_stack(stack)


def _gib(n: int | None) -> str:
    return "" if n is None else f"{n / 2**30:.1f} GiB"


def _yes_no(v: bool | None) -> str:
    return "unknown" if v is None else ("yes" if v else "no")


def _render_machine(m: Machine) -> None:
    driver = f"driver {m.driver_version or '?'}, CUDA {m.cuda_driver_version or '?'} (via {m.source})"
    if not m.gpus:
        output.show(f"No NVIDIA GPU found ({m.source}).")
        for note in m.notes:
            output.info(note)
        return
    output.table(
        f"GPUs — {driver}",
        ["#", "name", "cc", "memory", "PCI bus id"],
        [[g.index, g.name, g.compute_capability, _gib(g.memory_bytes), g.pci_bus_id] for g in m.gpus],
    )
    if m.links:
        rows = []
        for link in m.links:
            via = " via NVSwitch" if link.via_nvswitch else ""
            what = f"NV{link.nvlink_count}{via}" if link.kind == "nvlink" else link.kind
            per = "" if link.per_link_gbps is None else f"{link.per_link_gbps:g}"
            total = "" if link.total_gbps is None else f"{link.total_gbps:g}"
            rows.append([f"{link.a}-{link.b}", what, per, total, link.pcie_path or "", _yes_no(link.p2p)])
        output.table(
            "Interconnect (GB/s per direction)",
            ["pair", "link", "per link", "total", "PCIe path", "P2P"],
            rows,
        )
    # The CUDA attribute only: capgap never creates a multicast object to prove it works.
    output.show(f"NVLS multicast (CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED): {_yes_no(m.multicast_supported)}")
    for note in m.notes:
        output.info(note)


def _render_stack(s: Stack) -> None:
    rows: list[list[Any]] = []
    if s.torch:
        t = s.torch
        arch = " ".join(t.arch_list) if t.arch_list else f"unknown ({t.arch_list_note})"
        rows.append(["torch", t.version, f"CUDA {t.cuda or 'none'} ({t.cuda_tag or '-'}); arch: {arch}"])
    for name, pkg in s.components().items():
        if name == "torch":
            continue
        rows.append(
            [name, pkg.version, "editable" + (f" {pkg.url}" if pkg.url else "") if pkg.editable else ""]
        )
    for name, pkg in s.nccl().items():
        rows.append([name, pkg.version, "NCCL"])
    others = [f"{n} {p.version}" for n, p in s.nvidia_wheels().items() if n not in s.nccl()]
    if others:
        rows.append(["nvidia-* wheels", str(len(others)), ", ".join(others)])
    output.show(f"Stack of {s.python} (Python {s.python_version}):")
    if rows:
        output.table(None, ["package", "version", "detail"], rows)
    else:
        output.show(
            "  none of torch, triton, flashinfer, sglang, vllm, deep_gemm or nvidia-* wheels is installed"
        )
    for w in s.warnings:
        output.warn(w)


def render_arch(spec: ArchSpec, fmt: Format) -> None:
    facts = spec.facts
    data = facts.to_json()
    data["spelling"] = {"suffix": spec.suffix, "kind": spec.kind, "target": spec.sm}
    if fmt is Format.json:
        output.emit_json(data)
        return
    features = data["features"]
    rows = [
        ["architecture", f"{facts.name} ({facts.family})"],
        ["products", ", ".join(facts.products) or "(no public product)"],
        *[[f, "yes" if on else "no"] for f, on in features.items()],
        ["shared memory", f"{facts.smem_per_sm_kb} KB per SM, {facts.smem_per_block_kb} KB per block"],
        ["NVLink", facts.nvlink],
        ["NVSwitch", "yes" if facts.nvswitch else "no"],
        ["NVLS multicast", "yes" if facts.nvls_multicast else "no"],
    ]
    if spec.suffix:
        rows.append(["target", f"{spec.sm} ({'arch-specific' if spec.suffix == 'a' else 'family'})"])
    output.table(f"cc {facts.cc} (sm_{facts.number})", ["fact", "value"], rows)
    output.table("Sources", ["fact", "source"], list(data["sources"].items()))
