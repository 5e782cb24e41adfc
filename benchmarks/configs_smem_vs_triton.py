"""Compare capgap's shared-memory estimate for Triton MoE/GEMM tile configs with what Triton allocates.

Compiles (offline, no GPU needed) a small pipelined tile-matmul kernel written for this check —
the same loop structure as the engines' fused-MoE kernels: per K step, load an A tile
[BLOCK_M, BLOCK_K] through gathered row pointers and a B tile [BLOCK_K, BLOCK_N], `tl.dot` into
an fp32 accumulator — for several configs and compute capabilities, and prints Triton's
`metadata.shared` beside `capgap.configs.smem.estimate_bytes`, with their ratio.

    .venv/bin/pip install triton   # any CUDA Triton wheel ships ptxas
    .venv/bin/python benchmarks/configs_smem_vs_triton.py > benchmarks/results/configs_smem_triton.txt

tests/configs/test_smem.py checks capgap's estimate against the committed results.
"""

from __future__ import annotations

import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from capgap.arch import facts_for
from capgap.configs.smem import estimate_bytes


@triton.jit
def _tile_matmul(
    a_ptr,
    b_ptr,
    c_ptr,
    rows_ptr,
    K,
    stride_am,
    stride_bk,
    stride_cm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_n = tl.program_id(0)
    offs_m = tl.arange(0, BLOCK_M)
    rows = tl.load(rows_ptr + offs_m)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        if b.dtype != a.dtype:  # weight-only quantisation: int8 weights converted in registers
            b = b.to(a.dtype)
        acc = tl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))


CONFIGS = [  # (dtype tag as in config file names, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)
    (None, 64, 64, 32, 4, 3),
    (None, 64, 128, 64, 4, 4),
    (None, 128, 128, 64, 8, 3),
    (None, 128, 256, 64, 8, 4),
    ("fp8_w8a8", 32, 64, 256, 4, 4),
    ("fp8_w8a8", 64, 128, 256, 4, 2),
    ("fp8_w8a8", 128, 256, 128, 8, 4),
    ("fp8_w8a8", 64, 128, 128, 4, 5),
    ("int8_w8a16", 16, 64, 128, 4, 3),
    ("int8_w8a16", 64, 128, 64, 4, 4),
    # tiles from engines' shipped configs: small BLOCK_M (mma.sync even on 9.0/10.0), big K
    (None, 16, 256, 128, 4, 4),
    (None, 16, 128, 256, 4, 4),
    (None, 32, 64, 256, 4, 5),
    (None, 128, 128, 256, 8, 3),
    ("int8_w8a16", 256, 128, 128, 8, 3),
    ("int8_w8a16", 32, 256, 256, 4, 3),
    ("fp8_w8a8", 16, 128, 256, 4, 5),
    ("fp8_w8a8", 64, 256, 128, 8, 4),
]
CAPS = [80, 89, 90, 100, 120]


def _ptr_types(dtype: str | None) -> tuple[str, str, str]:
    """A, B and C pointer types for a dtype tag."""
    if dtype == "fp8_w8a8":
        return "*fp8e4nv", "*fp8e4nv", "*bf16"
    if dtype == "int8_w8a16":
        return "*bf16", "*i8", "*bf16"
    return "*bf16", "*bf16", "*bf16"


def main() -> int:
    print(f"triton {triton.__version__}")
    print(
        f"{'cc':>4} {'dtype':>9} {'M':>4} {'N':>4} {'K':>4} {'st':>3} {'triton B':>9} {'estimate B':>10} "
        f"{'ratio':>6} {'upper B':>8}"
    )
    for cap in CAPS:
        for dtype, bm, bn, bk, warps, stages in CONFIGS:
            if dtype == "fp8_w8a8" and cap < 89:
                continue
            aty, bty, cty = _ptr_types(dtype)
            sig = {
                "a_ptr": aty,
                "b_ptr": bty,
                "c_ptr": cty,
                "rows_ptr": "*i32",
                "K": "i32",
                "stride_am": "i32",
                "stride_bk": "i32",
                "stride_cm": "i32",
                "BLOCK_M": "constexpr",
                "BLOCK_N": "constexpr",
                "BLOCK_K": "constexpr",
            }
            # what a real launch specialises: 16-byte aligned pointers, strides divisible by 16
            attrs = {(i,): [["tt.divisibility", 16]] for i in range(8) if i != 4}
            src = ASTSource(
                _tile_matmul, sig, constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, attrs=attrs
            )
            try:
                kernel = triton.compile(
                    src, target=GPUTarget("cuda", cap, 32), options={"num_warps": warps, "num_stages": stages}
                )
                shared = int(kernel.metadata.shared)
            except Exception as exc:  # report, keep going
                print(
                    f"{cap:>4} {dtype or '-':>9} {bm:>4} {bn:>4} {bk:>4} {stages:>3} failed: {str(exc)[:60]}"
                )
                continue
            entry = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "num_stages": stages}
            est = estimate_bytes(entry, dtype, facts_for(f"{cap // 10}.{cap % 10}"))
            upper = estimate_bytes(entry, dtype)  # arch unknown: num_stages buffers
            assert est is not None and upper is not None
            print(
                f"{cap:>4} {dtype or '-':>9} {bm:>4} {bn:>4} {bk:>4} {stages:>3} {shared:>9} {est:>10} "
                f"{shared / est:>6.2f} {upper:>8}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
