"""Build config trees for the tests: device-named JSON files with chosen tile sizes."""

from __future__ import annotations

import json
from pathlib import Path


def entry(m: int, n: int, k: int, stages: int | None = 3, warps: int = 4) -> dict[str, int]:
    out = {"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": 1, "num_warps": warps}
    if stages is not None:
        out["num_stages"] = stages
    return out


def write_config(directory: Path, name: str, tiles: dict[str, dict[str, int]] | None = None) -> Path:
    """Write `name` in `directory` with batch-size -> config entries (a small default)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(json.dumps(tiles or {"1": entry(16, 32, 64, 2)}, indent=2))
    return path
