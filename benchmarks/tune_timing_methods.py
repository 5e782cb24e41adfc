"""Side by side: how the timing method moves all-reduce latency, for NCCL and symm-mem two-shot.

capgap's eager numbers time N ops back to back between two CUDA events (`pipelined`). Other
measurements often time one op at a time; this prints both on the same machine in one run, with
the ratio to `pipelined`, so a gap to someone else's figures can be explained rather than guessed.

    torchrun --standalone --nproc-per-node 2 benchmarks/tune_timing_methods.py [--out FILE]

Methods (each value: max over ranks, median over N):
  pipelined  N ops back to back between two CUDA events, / N          (capgap tune, eager)
  graph      the same N ops captured in one CUDA graph, replayed       (capgap tune, graph)
  per_op     barrier, sync, then one op between two CUDA events
  host       barrier, sync, then one op + synchronize on the host clock
NVLink multicast stays off (forced before torch is imported).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from capgap.tune.worker import force_multicast_off  # noqa: E402

SIZES = (1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 28)
N = 50


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    args = parser.parse_args()
    force_multicast_off(os.environ)
    import torch
    import torch.distributed as dist
    import torch.distributed._symmetric_memory as symm_mem

    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    group = dist.group.WORLD.group_name
    world = dist.get_world_size()
    buf = symm_mem.empty(max(SIZES) // 2, dtype=torch.bfloat16, device=dev)
    symm_mem.rendezvous(buf, group)
    buf.normal_()
    data = torch.randn(max(SIZES) // 2, device=dev).bfloat16()

    def max_over_ranks(values: list[float]) -> float:
        t = torch.tensor(values, dtype=torch.float64, device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return statistics.median(t.tolist())

    def methods(op) -> dict[str, float]:
        for _ in range(5):
            op()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        res = {}
        reps = []
        for _ in range(5):
            torch.cuda.synchronize()
            dist.barrier()
            start.record()
            for _ in range(N):
                op()
            end.record()
            end.synchronize()
            reps.append(start.elapsed_time(end) * 1000 / N)
        res["pipelined"] = max_over_ranks(reps)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            op()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(N):
                op()
        graph.replay()
        reps = []
        for _ in range(5):
            torch.cuda.synchronize()
            dist.barrier()
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            reps.append(start.elapsed_time(end) * 1000 / N)
        res["graph"] = max_over_ranks(reps)
        per_op, host = [], []
        for _ in range(N):
            torch.cuda.synchronize()
            dist.barrier()
            torch.cuda.synchronize()
            start.record()
            op()
            end.record()
            end.synchronize()
            per_op.append(start.elapsed_time(end) * 1000)
            torch.cuda.synchronize()
            dist.barrier()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            op()
            torch.cuda.synchronize()
            host.append((time.perf_counter() - t0) * 1e6)
        res["per_op"] = max_over_ranks(per_op)
        res["host"] = max_over_ranks(host)
        return res

    results = []
    for size in SIZES:
        n = size // 2
        x, b = data[:n], buf[:n]
        for name, op in (("nccl", lambda x=x: dist.all_reduce(x)),
                         ("two_shot", lambda b=b: torch.ops.symm_mem.two_shot_all_reduce_(b, "sum", group))):
            results.append({"backend": name, "bytes": size, **methods(op)})
    if dist.get_rank() == 0:
        print(f"world {world}, {torch.cuda.get_device_name()}, torch {torch.__version__}; us per op")
        print(f"{'backend':10} {'bytes':>10} {'pipelined':>10} {'graph':>8} {'per_op':>8} {'host':>8}"
              f"  per_op/pipelined host/pipelined")
        for r in results:
            print(f"{r['backend']:10} {r['bytes']:>10} {r['pipelined']:>10.1f} {r['graph']:>8.1f} "
                  f"{r['per_op']:>8.1f} {r['host']:>8.1f}  {r['per_op'] / r['pipelined']:>16.2f} "
                  f"{r['host'] / r['pipelined']:>15.2f}")
        if args.out:
            Path(args.out).write_text(json.dumps(results, indent=1))
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
