"""The measuring process: torchrun starts one per GPU (`python -m capgap.tune.worker`).

It only measures: for every size it checks each backend's result against NCCL on random data,
then times each backend in eager mode and captured in a CUDA graph, gathers every rank's raw
samples to rank 0, and rank 0 writes them with the environment to one JSON file. Statistics and
recommendations are computed elsewhere (recommend.py), from that file alone.

NVLink multicast stays off unless the launcher passed CAPGAP_TUNE_ALLOW_MULTICAST=1: the three
switches are forced before torch is imported, so no multicast object is ever created here.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MULTICAST_OFF = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
ALLOW_MULTICAST_ENV = "CAPGAP_TUNE_ALLOW_MULTICAST"


def force_multicast_off(environ: dict[str, str] | os._Environ[str]) -> bool:
    """Set the three multicast switches off unless explicitly allowed; True when forced off."""
    if environ.get(ALLOW_MULTICAST_ENV) == "1":
        return False
    environ.update(MULTICAST_OFF)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="capgap.tune.worker")
    parser.add_argument("--spec", required=True, help="sweep spec JSON file written by the launcher")
    parser.add_argument("--out", required=True, help="raw samples JSON file (written by rank 0)")
    args = parser.parse_args(argv)
    force_multicast_off(os.environ)

    import torch  # noqa: F401  (after the multicast switches)

    from capgap.tune.measure import Sweep
    from capgap.tune.spec import SweepSpec

    spec = SweepSpec.from_json(json.loads(Path(args.spec).read_text()))
    sweep = Sweep(spec)
    try:
        raw = sweep.run()
        if sweep.rank == 0:
            tmp = Path(args.out + ".tmp")
            tmp.write_text(json.dumps(raw))
            tmp.replace(args.out)
        elif os.environ.get("LOCAL_RANK", "0") == "0":  # another node: say what this one did
            write_node_record(args.out, sweep.rank, sweep.world)
    finally:
        sweep.close()
    return 0


def write_node_record(out: str, rank: int, world: int) -> None:
    """`OUT.node.json` on a node without rank 0: its node rank, its ranks, where rank 0 is."""
    local = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    record = {
        "node_rank": int(os.environ.get("GROUP_RANK", rank // max(local, 1))),
        "ranks": list(range(rank, rank + local)),
        "world_size": world,
        "rank0_at": f"{os.environ.get('MASTER_ADDR', '?')}:{os.environ.get('MASTER_PORT', '?')}",
    }
    Path(out + ".node.json").write_text(json.dumps(record))


def timed_repeats_cpu(
    run: Callable[[], Any], repeats: int, iters: int, barrier: Callable[[], Any]
) -> list[float]:
    """Microseconds per op for each repeat, host clock (the gloo/CPU test mode)."""
    samples = []
    for _ in range(repeats):
        barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            run()
        samples.append((time.perf_counter() - t0) * 1e6 / iters)
    return samples


def iters_for(estimate_us: float, target_ms: float, max_iters: int) -> int:
    """Enough back-to-back ops for one repeat to last about target_ms (at least one)."""
    if not math.isfinite(estimate_us) or estimate_us <= 0:
        return max_iters
    return max(1, min(max_iters, math.ceil(target_ms * 1000.0 / estimate_us)))


if __name__ == "__main__":
    sys.exit(main())
