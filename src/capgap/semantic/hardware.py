"""Hardware sense: warn when a table value contradicts the arch facts or the machine.

Warnings, never refusals: a user may know better (a board we have no facts for), but must be told
when, say, a multimem world-size entry lands on an arch without NVLink multicast.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from capgap.arch import ArchSpec
from capgap.judging import foldbound

GiB = 1 << 30

# Memory per GPU of boards users declare with --device (datasheets; HBM/GDDR capacity as sold).
DEVICE_MEMORY_GIB = {
    "rtx pro 6000": 96,  # RTX PRO 6000 Blackwell Workstation/Server Edition: 96 GB GDDR7
    "rtx 5090": 32,
    "rtx 5080": 16,
    "h100": 80,
    "h200": 141,
    "gh200": 96,
    "b200": 180,  # HGX B200
    "b300": 288,  # HGX B300
    "gb10": 128,  # DGX Spark: unified memory
    "l40s": 48,
    "a100": 80,
}
DEVICE_ARCH = {
    "rtx pro 6000": "12.0",
    "rtx 5090": "12.0",
    "rtx 5080": "12.0",
    "h100": "9.0",
    "h200": "9.0",
    "gh200": "9.0",
    "b200": "10.0",
    "b300": "10.3",
    "gb10": "12.1",
    "l40s": "8.9",
    "a100": "8.0",
}


@dataclass(frozen=True)
class Machine:
    """What we know of the hardware the values are for; None = unknown."""

    multicast: bool | None = None
    gpu_memory_bytes: int | None = None
    source: str = ""  # "probed", "declared: RTX PRO 6000", ""


def declared_machine(device: str) -> Machine:
    name = device.lower()
    for known, gib in sorted(DEVICE_MEMORY_GIB.items(), key=lambda kv: -len(kv[0])):  # gh200 before h200
        if known in name:
            from capgap.arch import facts_for

            multicast = facts_for(DEVICE_ARCH[known]).nvls_multicast
            return Machine(multicast=multicast, gpu_memory_bytes=gib * GiB, source=f"declared: {device}")
    return Machine(source=f"declared: {device} (no facts on this board)")


def probed_machine() -> Machine:
    """The probe's view of this machine, when the probe is available and sees GPUs."""
    try:
        from capgap.probe.gpus import probe_machine  # type: ignore[import-not-found]

        found = probe_machine()
    except Exception:  # no probe module, no driver, no GPU: nothing known
        return Machine()
    multicast = getattr(found, "multicast_supported", None)
    memory = None
    for gpu in getattr(found, "gpus", None) or ():
        for attr in ("memory_total_bytes", "memory_bytes", "memory_total"):
            value = getattr(gpu, attr, None)
            if isinstance(value, int) and value > 0:
                memory = value if memory is None else min(memory, value)
                break
    if multicast is None and memory is None:
        return Machine()
    return Machine(multicast=multicast, gpu_memory_bytes=memory, source="probed")


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: foldbound.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.truediv,
    ast.LShift: foldbound.lshift,
    ast.Pow: foldbound.pow_,
    ast.Mod: operator.mod,
}  # foldbound: `A = 2 ** 64; B = A ** 64; ...` must not grow to gigabytes


def module_constants(source: str | None) -> dict[str, Any]:
    """Module-level `NAME = <number expression>` assignments, folded (`MiB = 1024 * 1024`)."""
    out: dict[str, Any] = {}
    if not source:
        return out
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = fold(stmt.value, out)
            if isinstance(value, (int, float)):
                out[stmt.targets[0].id] = value
    return out


def fold(node: ast.AST, names: dict[str, Any]) -> Any:
    """Evaluate a literal expression with known names; None for anything else (never executes code)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = fold(node.operand, names)
        return -v if isinstance(v, (int, float)) else None
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = fold(node.left, names), fold(node.right, names)
        if (
            isinstance(a, (int, float))
            and isinstance(b, (int, float))
            and not (
                isinstance(node.op, (ast.Pow, ast.LShift)) and abs(b) > 64  # no 1 << 10**9 at our expense
            )
        ):
            try:
                return _BINOPS[type(node.op)](a, b)
            except (ZeroDivisionError, OverflowError, ValueError):
                return None
        return None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [fold(e, names) for e in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            key = fold(k, names) if k is not None else None
            out[key if isinstance(key, (int, float, str, bool, type(None))) else repr(key)] = fold(v, names)
        return out
    return None


def _leaves(value: Any) -> list[float]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


_MULTICAST_WORDS = ("multimem", "multicast", "nvls")
_SIZE_WORDS = ("max_size", "max_bytes", "max_sizes")


def hardware_relevant(symbol: str) -> bool:
    """Whether a table's values can contradict the machine (multimem lists, size limits)."""
    name = symbol.rsplit(".", 1)[-1].lower()
    return any(w in name for w in (*_MULTICAST_WORDS, *_SIZE_WORDS))


def check_entry(
    symbol: str,
    spec: ArchSpec,
    value_src: str,
    *,
    module_source: str | None = None,
    machine: Machine | None = None,
) -> list[str]:
    """Warnings about one table entry (`symbol`[`spec`] = value) against facts and machine."""
    try:
        value = fold(ast.parse(value_src.strip(), mode="eval").body, module_constants(module_source))
    except SyntaxError:
        return []
    machine = machine or Machine()
    name = symbol.rsplit(".", 1)[-1].lower()
    warnings: list[str] = []
    where = f"{symbol}[{spec.cc}]"
    if any(w in name for w in _MULTICAST_WORDS) and _leaves(value):
        if not spec.facts.nvls_multicast:
            warnings.append(
                f"{where} = {value_src.strip()}: cc {spec.cc} ({spec.facts.name}) has no NVLink multicast "
                f"(nvlink: {spec.facts.nvlink}), so multimem all-reduce cannot run there; an empty entry fits"
            )
        elif machine.multicast is False:
            warnings.append(
                f"{where} = {value_src.strip()}: this machine ({machine.source}) reports no multicast support"
            )
    if any(w in name for w in _SIZE_WORDS) and machine.gpu_memory_bytes:
        too_big = [v for v in _leaves(value) if v > machine.gpu_memory_bytes]
        if too_big:
            warnings.append(
                f"{where}: {int(max(too_big))} bytes is more than one GPU's memory "
                f"({machine.gpu_memory_bytes // GiB} GiB, {machine.source})"
            )
    return warnings
