"""One rank's sweep: backends, correctness check against NCCL, eager and CUDA-graph timing.

Imported only inside the worker process (it imports torch at the top).
"""

from __future__ import annotations

import os
import platform
import socket
import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from capgap.tune import spec as S
from capgap.tune.envinfo import environment
from capgap.tune.worker import iters_for, timed_repeats_cpu

_TORCH_DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
# Correctness tolerance: a few units in the last place of the result, per rank that adds in.
_EPS = {"bf16": 2.0**-7, "fp32": 2.0**-20}

Op = Callable[[], Any]


class Sweep:
    def __init__(self, spec: S.SweepSpec) -> None:
        self.spec = spec
        self.rank = int(os.environ.get("RANK", "0"))
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.dtype = _TORCH_DTYPES[spec.dtype]
        self.cuda = spec.device == "cuda"
        if self.cuda:
            local = int(os.environ.get("LOCAL_RANK", "0"))
            torch.cuda.set_device(local)
            self.device = torch.device("cuda", local)
            dist.init_process_group(spec.dist_backend, device_id=self.device)
        else:
            self.device = torch.device("cpu")
            dist.init_process_group(spec.dist_backend)
        self.group_name = dist.group.WORLD.group_name
        self.max_numel = max(spec.sizes) // S.DTYPES[spec.dtype]
        gen = torch.Generator(device=self.device).manual_seed(spec.seed + self.rank)
        self.data = torch.randn(self.max_numel, generator=gen, device=self.device).to(self.dtype)
        self.symm_skip = self._symm_unavailable()
        self.symm_buf: torch.Tensor | None = None
        self.multicast_ptr: int | None = None
        self.symm_error: str | None = None
        if self.symm_skip is None and any(b in S.SYMM_BACKENDS for b in spec.backends):
            self._setup_symm()

    # --- setup -----------------------------------------------------------------------------
    def _symm_unavailable(self) -> str | None:
        if not self.cuda or self.spec.dist_backend != "nccl":
            return "torch symmetric memory needs CUDA GPUs and the NCCL process group"
        if not hasattr(torch.ops, "symm_mem") or not hasattr(torch.ops.symm_mem, "two_shot_all_reduce_"):
            return f"torch {torch.__version__} has no torch.ops.symm_mem all-reduce"
        return None

    def _setup_symm(self) -> None:
        try:
            import torch.distributed._symmetric_memory as symm_mem

            if hasattr(symm_mem, "enable_symm_mem_for_group"):  # needed by older torch; deprecated no-op now
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", FutureWarning)
                    symm_mem.enable_symm_mem_for_group(self.group_name)
            self.symm_buf = symm_mem.empty(self.max_numel, dtype=self.dtype, device=self.device)
            handle = symm_mem.rendezvous(self.symm_buf, self.group_name)
            self.multicast_ptr = int(getattr(handle, "multicast_ptr", 0) or 0)
        except Exception as exc:  # recorded per cell; the NCCL measurements still run
            self.symm_error = f"symmetric memory setup failed: {type(exc).__name__}: {exc}"[:300]
            self.symm_buf = None

    def _skip_reason(self, backend: str) -> str | None:
        if backend == S.NCCL:
            return None
        if self.symm_skip:
            return self.symm_skip
        if self.symm_error:
            return self.symm_error
        if backend == S.MULTIMEM and not self.multicast_ptr:
            return "multicast is off or unsupported (multicast_ptr == 0): multimem_all_reduce_ not run"
        return None

    def _op(self, backend: str, n: int) -> Op:
        """The timed operation for `n` elements; works on the same buffers in every call."""
        g = self.group_name
        if backend == S.NCCL:
            x = self.data[:n]
            return lambda: dist.all_reduce(x)
        assert self.symm_buf is not None
        buf = self.symm_buf[:n]
        ops = torch.ops.symm_mem
        if backend == S.ONE_SHOT:
            return lambda: ops.one_shot_all_reduce(buf, "sum", g)
        if backend == S.TWO_SHOT:
            return lambda: ops.two_shot_all_reduce_(buf, "sum", g)
        if backend == S.MULTIMEM:
            return lambda: ops.multimem_all_reduce_(buf, "sum", g)
        inp, out = self.data[:n], torch.empty_like(self.data[:n])

        def engine_path() -> torch.Tensor:  # as SGLang/vLLM run it: copy in, two-shot, copy out
            buf.copy_(inp)
            ops.two_shot_all_reduce_(buf, "sum", g)
            return out.copy_(buf)

        return engine_path

    # --- correctness -----------------------------------------------------------------------
    def _check(self, backend: str, n: int, size: int) -> dict[str, Any]:
        gen = torch.Generator(device=self.device).manual_seed(self.spec.seed + 7919 * self.rank + size)
        src = torch.randn(n, generator=gen, device=self.device, dtype=torch.float32).to(self.dtype)
        ref = src.clone()
        dist.all_reduce(ref)
        if backend == S.NCCL:
            return {"ok": True, "max_abs_err": 0.0, "reference": True}
        assert self.symm_buf is not None
        buf = self.symm_buf[:n]
        buf.copy_(src)
        if backend == S.TWO_SHOT_COPY:
            self.data[:n].copy_(src)
            result = self._op(backend, n)()
        else:
            result = self._op(backend, n)()
            result = result if backend == S.ONE_SHOT else buf
        err = (result.float() - ref.float()).abs()
        eps = _EPS[self.spec.dtype] * self.world
        ok_local = bool((err <= eps * (1.0 + ref.float().abs())).all().item())
        flags = torch.tensor([0.0 if ok_local else 1.0, float(err.max().item())], device=self.device)
        dist.all_reduce(flags, op=dist.ReduceOp.MAX)
        return {"ok": flags[0].item() == 0.0, "max_abs_err": flags[1].item(), "tolerance_rel": eps}

    # --- timing ----------------------------------------------------------------------------
    def _estimate_us(self, op: Op) -> float:
        """Per-op time from a short eager burst (also the warm-up), max over ranks."""
        for _ in range(self.spec.warmup):
            op()
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            for _ in range(self.spec.warmup):
                op()
            end.record()
            end.synchronize()
            est = start.elapsed_time(end) * 1000.0 / self.spec.warmup
        else:
            est = timed_repeats_cpu(op, 1, self.spec.warmup, lambda: None)[0]
        t = torch.tensor([est], dtype=torch.float64, device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return float(t.item())

    def _time_cuda(self, op: Op, iters: int, graph: bool) -> list[float]:
        if graph:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    op()
            torch.cuda.current_stream().wait_stream(side)
            cuda_graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(cuda_graph):
                for _ in range(iters):
                    op()
            cuda_graph.replay()  # first replay uploads the graph; not timed

            def run() -> None:
                cuda_graph.replay()
        else:

            def run() -> None:
                for _ in range(iters):
                    op()

        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        samples = []
        for _ in range(self.spec.repeats):
            torch.cuda.synchronize()
            dist.barrier()
            start.record()
            run()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1000.0 / iters)
        return samples

    def _gather(self, samples: list[float]) -> list[list[float]]:
        t = torch.tensor(samples, dtype=torch.float64, device=self.device)
        parts = [torch.empty_like(t) for _ in range(self.world)]
        dist.all_gather(parts, t)
        return [p.tolist() for p in parts]

    def _cell(self, backend: str, mode: str, size: int, iters: int, op: Op) -> dict[str, Any]:
        cell: dict[str, Any] = {"backend": backend, "mode": mode, "bytes": size, "iters": iters}
        if mode == "graph" and not self.cuda:
            cell["skipped"] = "CUDA graphs need a GPU"
            return cell
        if self.cuda:
            samples = self._time_cuda(op, iters, graph=mode == "graph")
        else:
            samples = timed_repeats_cpu(op, self.spec.repeats, iters, dist.barrier)
        cell["samples_us"] = self._gather(samples)  # [rank][repeat], microseconds per op
        return cell

    def run(self) -> dict[str, Any]:
        cells: list[dict[str, Any]] = []
        checks: list[dict[str, Any]] = []
        elem = S.DTYPES[self.spec.dtype]
        for size in self.spec.sizes:
            n = size // elem
            for backend in self.spec.backends:
                reason = self._skip_reason(backend)
                if reason:
                    cells += [
                        {"backend": backend, "mode": m, "bytes": size, "skipped": reason}
                        for m in self.spec.modes
                    ]
                    continue
                try:
                    check = self._check(backend, n, size)
                    op = self._op(backend, n)
                    iters = iters_for(self._estimate_us(op), self.spec.target_ms, self.spec.max_iters)
                except RuntimeError as exc:  # e.g. a world size the kernel does not support
                    reason = f"{backend} failed: {exc}".splitlines()[0][:300]
                    cells += [
                        {"backend": backend, "mode": m, "bytes": size, "skipped": reason}
                        for m in self.spec.modes
                    ]
                    continue
                checks.append({"backend": backend, "bytes": size, **check})
                cells += [self._cell(backend, mode, size, iters, op) for mode in self.spec.modes]
        if self.cuda:
            torch.cuda.synchronize()
        return {
            "format": "capgap.tune.allreduce.raw/1",
            "spec": self.spec.to_json(),
            "environment": self._environment(),
            "checks": checks,
            "cells": cells,
        }

    def _environment(self) -> dict[str, Any]:
        env = environment(self.device if self.cuda else None)
        env.update(
            {
                "world_size": self.world,
                "dist_backend": self.spec.dist_backend,
                "hostname": socket.gethostname(),
                "python": platform.python_version(),
                "multicast_ptr": self.multicast_ptr,
                "symm_mem_error": self.symm_error,
                "symm_mem_skip": self.symm_skip,
            }
        )
        return env

    def close(self) -> None:
        if dist.is_initialized():
            dist.barrier()
            dist.destroy_process_group()
