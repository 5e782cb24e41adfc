"""The values file `capgap tune allreduce` writes and `capgap fix --values` reads.

    {
      "format": "capgap.tune.values/1",
      "tables": {
        "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES": {"9": {"2": 16777216}}
      },
      "multimem_world_sizes": {"9": []},
      "arch": "9.0",
      "world_size": 2,
      "margin": 0.05,
      "measured": {"gpu": "NVIDIA H200", "modes": {"eager": {...}, "graph": {...}}, "link": {...}, ...}
    }

tables: engine table symbol -> arch key -> world size -> bytes. The arch key is the major
  compute capability, as SGLang keys this table (9, 10, 12); `arch` has the full "major.minor"
  for engines that key by that string (vLLM's "9.0"). Engines run symmetric memory while
  `message bytes < value`; 0 means never. Only the measured world size appears: other world
  sizes were not measured and nothing is said about them.
multimem_world_sizes: arch key -> which of the measured world sizes (just `world_size`) should
  run multimem_all_reduce_. `world_size` absent from the list means: take it out of the
  engine's multimem list (multicast was off or multimem lost); other world sizes: leave as is.
measured: how the numbers came about (per-mode thresholds, one-/two-shot switch, link limit,
  spread, GPU, torch, NCCL); for people, `fix` does not need it.
JSON object keys are strings; `load_values` returns world sizes and bytes as ints, arch keys
as the strings above.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from capgap.errors import UsageError

FORMAT = "capgap.tune.values/1"
MAX_SIZES_SYMBOL = "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES"


def arch_key(cc: str) -> str:
    """'9.0' -> '9' (the major number engines key this table by)."""
    return cc.split(".", 1)[0]


def build_values(
    *, cc: str, world_size: int, max_size: int, multimem: bool, margin: float, measured: dict[str, Any]
) -> dict[str, Any]:
    key = arch_key(cc)
    return {
        "format": FORMAT,
        "tables": {MAX_SIZES_SYMBOL: {key: {str(world_size): int(max_size)}}},
        "multimem_world_sizes": {key: [world_size] if multimem else []},
        "arch": cc,
        "world_size": world_size,
        "margin": margin,
        "measured": measured,
    }


def no_values(*, world_size: int, margin: float, reason: str, measured: dict[str, Any]) -> dict[str, Any]:
    """The values file of a run that measured nothing `fix` could apply (a CPU/gloo run, NCCL
    only): the same format, no tables, and `no_values` saying why (fix refuses it with that)."""
    return {
        "format": FORMAT,
        "tables": {},
        "multimem_world_sizes": {},
        "arch": None,
        "world_size": world_size,
        "margin": margin,
        "no_values": reason,
        "measured": measured,
    }


def load_values(path: str | Path) -> dict[str, Any]:
    """Read and check a values file; world sizes and byte counts come back as ints."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read tune values {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UsageError(f"{path} is not a capgap tune values file (format {FORMAT!r} expected)")
    try:
        tables = {
            str(symbol): {
                str(arch): {int(ws): int(nbytes) for ws, nbytes in per_ws.items()}
                for arch, per_ws in per_arch.items()
            }
            for symbol, per_arch in data["tables"].items()
        }
        multimem = {
            str(arch): sorted(int(ws) for ws in sizes) for arch, sizes in data["multimem_world_sizes"].items()
        }
        world_size = int(data["world_size"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UsageError(f"{path}: malformed tune values ({type(exc).__name__}: {exc})") from exc
    if any(n < 0 for per_arch in tables.values() for per_ws in per_arch.values() for n in per_ws.values()):
        raise UsageError(f"{path}: a table size is negative")
    return {**data, "tables": tables, "multimem_world_sizes": multimem, "world_size": world_size}
