"""gate-admits-unsupported: a gate that admits the target into a path launched with a fixed
Triton tile config (literal BLOCK M/N/K, num_stages) whose estimated shared memory exceeds the
target's per-block limit, while a sibling admitted with it fits (capgap.judging.tileconfigs)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def gemm_kernel(A, B, C, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(A + tl.arange(0, BLOCK_M)[:, None] + tl.arange(0, BLOCK_K)[None, :])
        b = tl.load(B + tl.arange(0, BLOCK_K)[:, None] + tl.arange(0, BLOCK_N)[None, :])
        acc = tl.dot(a, b, acc=acc)


def _big_ok(x):
    if not x.is_cuda:
        return False
    if torch.cuda.get_device_capability(x.device)[0] < 9:
        return False
    return True


def _pick(x):
    return _big_ok(x) and x.size(0) > 64


def _tiles(m):
    if m <= 1024:
        return dict(block_m=64, block_n=256, block_k=32, num_warps=4, num_stages=4)
    return dict(block_m=64, block_n=BIG_N, block_k=64, num_warps=8, num_stages=3)


def run(x):
    if _pick(x):
        cfg = _tiles(x.size(0))
        gemm_kernel[(1,)](x, x, x, 1, BLOCK_M=cfg["block_m"], BLOCK_N=cfg["block_n"], BLOCK_K=cfg["block_k"])
"""


def test_a_pipelined_estimate_over_the_targets_limit_is_high(tmp_path: Path) -> None:
    # 2 buffers * (64*64 + 64*512) * 2 bytes = 147,456 on 12.0 (mma.sync: num_stages - 1 copies);
    # 221,184 on 9.0 (wgmma: num_stages copies), which fits 227 KB. Triton 3.6.0 gives lmdeploy's
    # compact MoE kernel, of this shape, exactly these at a real launch (147,456 compiled for sm_120)
    found = _scan(tmp_path, {"eng/moe.py": _KERNEL.replace("BIG_N", "512")})
    admits = [f for f in found if f.rule == "gate-admits-unsupported"]
    assert _brief(admits) == [("gate-admits-unsupported", "high", "eng/moe.py", 18)]
    assert "147,456 bytes" in admits[0].consequence
    assert "2 copies of the A and B tiles" in admits[0].consequence
    assert "221,184 on 9.0" in admits[0].consequence


def test_a_fixed_tile_config_whose_one_copy_overflows_is_high(tmp_path: Path) -> None:
    # one stage: (64*64 + 64*1024) * 2 = 139,264 bytes whatever Triton does; fits 9.0's 227 KB
    code = _KERNEL.replace("BIG_N", "1024").replace("num_warps=8, num_stages=3", "num_warps=8, num_stages=1")
    found = _scan(tmp_path, {"eng/moe.py": code})
    admits = [f for f in found if f.rule == "gate-admits-unsupported"]
    assert _brief(admits) == [("gate-admits-unsupported", "high", "eng/moe.py", 18)]
    assert "139,264 bytes" in admits[0].consequence


def test_a_tile_config_that_fits_the_target_is_nothing(tmp_path: Path) -> None:
    # 2 * (64*64 + 64*256) * 2 = 81,920 bytes: fits 99 KB
    found = _scan(tmp_path, {"eng/moe.py": _KERNEL.replace("BIG_N", "256")})
    assert [f for f in found if f.rule == "gate-admits-unsupported"] == []


def test_an_autotune_list_is_not_a_fixed_config(tmp_path: Path) -> None:
    code = _KERNEL.replace(
        "dict(block_m=64, block_n=BIG_N, block_k=64, num_warps=8, num_stages=3)",
        "[triton.Config({'BLOCK_M': 64, 'BLOCK_N': 512, 'BLOCK_K': 64}, num_stages=3)]",
    )
    found = _scan(tmp_path, {"eng/moe.py": code})
    assert [f for f in found if f.rule == "gate-admits-unsupported"] == []
