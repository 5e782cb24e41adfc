"""On a GPU: launch tile configs around the per-block shared-memory limit; print what Triton did.

The engines' fused-MoE loop shape (gathered A rows, B tile, `tl.dot` over K) in bf16; for each
config it prints Triton's `metadata.shared` and whether the launch ran or failed with
`OutOfResources: out of resource: shared memory`. Kept compact so it fits one device command:

    python3 benchmarks/configs_smem_on_device.py | tee benchmarks/results/configs_smem_h200.txt

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
        acc = tl.dot(tl.load(ap), tl.load(bp), acc=acc)
        ap += BK
        bp += BK * sb
    tl.store(c + m[:, None] * sc + n[None, :], acc.to(c.dtype.element_ty))


P = torch.cuda.get_device_properties(0)
print(
    P.name,
    P.major,
    P.minor,
    "optin",
    P.shared_memory_per_block_optin,
    "torch",
    torch.__version__,
    "triton",
    triton.__version__,
)
for bm, bn, bk, w, s in [
    (128, 256, 64, 8, 3),
    (128, 256, 64, 8, 4),
    (128, 256, 64, 8, 5),
    (128, 128, 64, 8, 6),
    (128, 128, 64, 8, 7),
    (128, 128, 64, 8, 8),
    (64, 128, 64, 4, 4),
    (64, 128, 128, 4, 3),
    (256, 128, 64, 8, 4),
    (256, 128, 64, 8, 5),
]:
    K = bk * 4
    A = torch.randn(bm, K, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(K, bn * 2, device="cuda", dtype=torch.bfloat16)
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
        ok = torch.allclose(C.float(), (A @ B).float(), atol=1.0, rtol=0.05)
        print(bm, bn, bk, s, "shared", h.metadata.shared, "ran", ok)
    except triton.runtime.errors.OutOfResources as e:
        print(bm, bn, bk, s, "OutOfResources", e)
