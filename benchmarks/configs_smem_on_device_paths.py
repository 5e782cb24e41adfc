"""On a GPU: tiles on both MMA paths, converted int8 weights and fp8, around the per-block limit.

Like `configs_smem_on_device.py`, with the dtype of each tile: bf16, fp8 (e4m3) and int8 weights
converted to bf16 in registers (`int8_w8a16`); BLOCK_M below 64 takes mma.sync even on Hopper.
For each config it prints Triton's `metadata.shared` and whether the launch ran or failed with
`OutOfResources`:

    python3 benchmarks/configs_smem_on_device_paths.py | tee benchmarks/results/configs_smem_h200_paths.txt

tests/configs/test_smem.py checks capgap's estimate against the committed results.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def k(a, b, c, r, K, sa, sb, sc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    p = tl.program_id(0)
    m = tl.arange(0, BM)
    rows = tl.load(r + m)
    n = p * BN + tl.arange(0, BN)
    kk = tl.arange(0, BK)
    ap = a + rows[:, None] * sa + kk[None, :]
    bp = b + kk[:, None] * sb + n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        x = tl.load(ap)
        y = tl.load(bp)
        if y.dtype != x.dtype:
            y = y.to(x.dtype)
        acc = tl.dot(x, y, acc=acc)
        ap += BK
        bp += BK * sb
    tl.store(c + m[:, None] * sc + n[None, :], acc.to(c.dtype.element_ty))


P = torch.cuda.get_device_properties(0)
print(P.name, P.major, P.minor, "optin", P.shared_memory_per_block_optin, "triton", triton.__version__)
T = {
    "bf16": (torch.bfloat16, torch.bfloat16),
    "fp8": (torch.float8_e4m3fn, torch.float8_e4m3fn),
    "w8a16": (torch.bfloat16, torch.int8),
}
for d, bm, bn, bk, w, s in [
    ("bf16", 16, 256, 128, 4, 4),
    ("bf16", 16, 256, 128, 4, 5),
    ("bf16", 32, 64, 256, 4, 5),
    ("bf16", 32, 64, 256, 4, 6),
    ("bf16", 16, 128, 256, 4, 4),
    ("w8a16", 256, 128, 128, 8, 2),
    ("w8a16", 256, 128, 128, 8, 3),
    ("w8a16", 32, 256, 256, 4, 3),
    ("w8a16", 32, 256, 256, 4, 4),
    ("fp8", 16, 128, 256, 4, 7),
    ("fp8", 16, 128, 256, 4, 8),
    ("fp8", 64, 256, 256, 8, 3),
]:
    ta, tb = T[d]
    K = bk * 2
    A = torch.randn(bm, K, device="cuda").to(ta)
    B = (torch.randn(K, bn * 2, device="cuda") * 3).to(tb)
    C = torch.empty(bm, bn * 2, device="cuda", dtype=torch.bfloat16)
    R = torch.arange(bm, device="cuda", dtype=torch.int32)
    try:
        h = k[(2,)](
            A,
            B,
            C,
            R,
            K,
            A.stride(0),
            B.stride(0),
            C.stride(0),
            BM=bm,
            BN=bn,
            BK=bk,
            num_warps=w,
            num_stages=s,
        )
        torch.cuda.synchronize()
        print(d, bm, bn, bk, w, s, "shared", h.metadata.shared, "ran")
    except triton.runtime.errors.OutOfResources as e:
        print(d, bm, bn, bk, w, s, "OutOfResources", e)
    except Exception as e:
        print(d, bm, bn, bk, w, s, "error", type(e).__name__, str(e)[:80])
