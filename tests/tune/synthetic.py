"""Build raw sweep files by hand, in the worker's format, for the CPU-side tests."""

from __future__ import annotations

from typing import Any


def make_raw(
    latency_us: dict[tuple[str, str], dict[int, float]],
    *,
    world: int = 2,
    cc: str | None = "9.0",
    wrong: set[tuple[str, int]] = frozenset(),
    repeats: int = 5,
    nvlink: dict | None = None,
    skipped: dict[tuple[str, str], str] | None = None,
) -> dict[str, Any]:
    """Every rank and repeat sees the given latency, except that rank 1 is 10% slower on repeat 0
    (so max-over-ranks and the spread are exercised with exactly known numbers)."""
    cells, checks, seen = [], [], set()
    for (backend, mode), per_size in latency_us.items():
        for size, us in per_size.items():
            ranks = [[us] * repeats for _ in range(world)]
            ranks[-1][0] = us * 1.1
            cells.append({"backend": backend, "mode": mode, "bytes": size, "iters": 10, "samples_us": ranks})
            if (backend, size) not in seen:
                seen.add((backend, size))
                checks.append(
                    {
                        "backend": backend,
                        "bytes": size,
                        "ok": (backend, size) not in wrong,
                        "max_abs_err": 1.0 if (backend, size) in wrong else 0.0,
                    }
                )
    for (backend, mode), reason in (skipped or {}).items():
        cells.append({"backend": backend, "mode": mode, "bytes": 1024, "skipped": reason})
    sizes = sorted({c["bytes"] for c in cells})
    env: dict[str, Any] = {
        "world_size": world,
        "dist_backend": "nccl",
        "torch": "2.11.0",
        "nccl": "2.28.9",
        "multicast_ptr": 0,
    }
    if cc:
        env.update({"cc": cc, "gpu": "NVIDIA H200"})
    if nvlink is not None:
        env["nvlink"] = nvlink
    modes = sorted({m for _, m in latency_us})
    return {
        "format": "capgap.tune.allreduce.raw/1",
        "spec": {"sizes": sizes, "dtype": "bf16", "modes": modes, "backends": []},
        "environment": env,
        "checks": checks,
        "cells": cells,
    }
