"""Turn `capgap tune` values (see capgap.tune.values) into table values for `capgap fix --values`.

- `tables[SYMBOL][arch key][world size] = bytes`: the entry becomes a dict of the measured world
  sizes only (the others were not measured, so nothing is claimed for them), written with the
  module's own size constants (`64 * MiB`) and the layout of the sibling's value;
- `multimem_world_sizes[arch key]`: for a table named like `*MULTIMEM*`, the sibling's list with
  each measured world size put in or taken out; unmeasured world sizes stay as they were.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from capgap.arch import ArchSpec
from capgap.semantic.fixer import MeasuredValue, ValueLookup
from capgap.semantic.hardware import module_constants

_UNITS = (1 << 30, 1 << 20, 1 << 10)


def _per_arch(per_arch: dict[str, Any], arch: ArchSpec, values_cc: str | None) -> Any:
    """The entry for `arch`: keyed by the major number, valid when it was measured on that cc."""
    if values_cc not in (None, arch.cc) and values_cc.split(".")[0] != str(arch.major):
        return None
    return per_arch.get(str(arch.major), per_arch.get(arch.cc))


def _size_src(n: int, sibling: str, constants: dict[str, Any]) -> str:
    units = {name: v for name, v in constants.items() if isinstance(v, int) and v in _UNITS}
    used = [u for u in units if re.search(rf"\b{re.escape(u)}\b", sibling)]
    for name in sorted(used or units, key=lambda u: -units[u]):
        if n and n % units[name] == 0:
            return f"{n // units[name]} * {name}"
    return str(n)


def _dict_src(items: list[tuple[str, str]], sibling: str) -> str:
    """A dict literal laid out like the sibling's (one line, or one entry per line)."""
    lines = sibling.splitlines()
    if len(lines) < 3:
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    inner = re.match(r"\s*", lines[1]).group(0)  # type: ignore[union-attr]
    closing = re.match(r"\s*", lines[-1]).group(0)  # type: ignore[union-attr]
    body = "".join(f"{inner}{k}: {v},\n" for k, v in items)
    return "{\n" + body + closing + "}"


def _multimem(sibling: str, measured: list[int], world_size: int) -> MeasuredValue | None:
    try:
        current = ast.literal_eval(sibling)
    except (ValueError, SyntaxError):
        return None
    if not isinstance(current, (list, tuple)) or not all(isinstance(x, int) for x in current):
        return None
    kept = sorted(set(current) - {world_size})  # not measured: as the base entry had them
    sizes = sorted(set(kept) | (set(measured) & {world_size}))
    if isinstance(current, tuple):
        text = "(" + ", ".join(map(str, sizes)) + ("," if len(sizes) == 1 else "") + ")"
    else:
        text = "[" + ", ".join(map(str, sizes)) + "]"
    return MeasuredValue(text, measured=(world_size,), kept=tuple(kept))


def answers(values: dict[str, Any]) -> Callable[[str], bool]:
    """Whether the values file has something for a table of this (qualified) name."""
    names = {k.rsplit(".", 1)[-1] for k in values.get("tables") or {}}
    multimem = bool(values.get("multimem_world_sizes")) and bool(values.get("world_size"))

    def has(symbol: str) -> bool:
        name = symbol.rsplit(".", 1)[-1]
        return name in names or (multimem and "multimem" in name.lower())

    return has


def measured_lookup(values: dict[str, Any]) -> ValueLookup:
    """A `plan_fix(measured=...)` callback answering from a loaded values file."""
    tables: dict[str, dict[str, Any]] = values.get("tables") or {}
    multimem: dict[str, list[int]] = values.get("multimem_world_sizes") or {}
    values_cc = values.get("arch")
    world_size = int(values.get("world_size") or 0)

    def lookup(symbol: str, arch: ArchSpec, sibling: str, module: str) -> MeasuredValue | None:
        name = symbol.rsplit(".", 1)[-1]
        per_arch = next((v for k, v in tables.items() if k.rsplit(".", 1)[-1] == name), None)
        if per_arch is not None:
            sizes = _per_arch(per_arch, arch, values_cc)
            if not sizes:
                return None
            constants = module_constants(module)
            items = [(str(ws), _size_src(int(n), sibling, constants)) for ws, n in sorted(sizes.items())]
            return MeasuredValue(_dict_src(items, sibling), measured=tuple(sorted(int(w) for w in sizes)))
        if "multimem" in name.lower() and world_size:
            measured = _per_arch(multimem, arch, values_cc)
            if measured is None:
                return None
            return _multimem(sibling, list(measured), world_size)
        return None

    return lookup
