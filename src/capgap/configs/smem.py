"""Estimate the shared memory one block of an engine's Triton tile kernel needs for a tuned config.

The engines' fused-MoE and block-quantised GEMM kernels (SGLang, vLLM) are Triton loops over K:
each step loads an A tile [BLOCK_SIZE_M, BLOCK_SIZE_K] and a B tile [BLOCK_SIZE_K, BLOCK_SIZE_N]
and feeds both to `tl.dot`. Triton's software pipeliner stages those loads through shared memory
in `buffers` copies so that later loads overlap the current MMA:

    need = buffers * (BLOCK_SIZE_M * BLOCK_SIZE_K * a_bytes + BLOCK_SIZE_K * BLOCK_SIZE_N * b_bytes)
           (+ one more B tile for converted weights on the async-MMA path)
    buffers = num_stages            async MMA: wgmma (9.0) or tcgen05 (10.x) and BLOCK_SIZE_M >= 64,
                                    or the arch is unknown (the upper end)
    buffers = max(num_stages-1, 1)  mma.sync: 8.x, 12.x, and 9.0/10.x tiles with BLOCK_SIZE_M < 64

a_bytes / b_bytes are the element sizes of the tiles as loaded (before any in-register
conversion): 2 for bf16/fp16 (no dtype in the file name), 1 for fp8/int8 (`fp8_w8a8`,
`int8_w8a8`), A 2 and B 1 for weight-only `int8_w8a16`/`int4_w4a16` (int4 weights are loaded as a
[BLOCK_K, BLOCK_N] uint8 tile, two rows per byte). An entry without `num_stages` runs with
Triton's CUDA default of 3. `k_cap` is an engine's own clamp of BLOCK_SIZE_K (vLLM's fused MoE
uses min(BLOCK_SIZE_K, block_shape) for block-quantised weights).

Where the rule comes from: `benchmarks/configs_smem_vs_triton.py` compiles a kernel of this loop
shape offline for sm_80/89/90/100/120 and prints Triton's `metadata.shared` beside the estimate;
its output with Triton 3.9 is committed in `benchmarks/results/configs_smem_triton.txt`, and the
estimate equals Triton's number in every row (to 16 bytes of barriers on sm_100) except sm_90's
fp8 wgmma tiles, where Triton allocates less (the estimate stays above). Triton 3.4 gave the same
numbers. On an H200 (Triton 3.6, `benchmarks/configs_smem_on_device.py`, results committed) the
estimate equalled Triton's allocation for all 10 bf16 configs launched around the 227 KB limit,
and exactly the 3 over it failed with `out of resource: shared memory`. The engines size their
defaults the same way: SGLang's low-shared-memory fp8 defaults (M=32, N=64, K=256, 4 stages;
M=64, N=128, K=256, 2 stages) fit the 99 KB a block may use on sm_89/sm_120.

Why it stays an estimate: the buffer count depends on the Triton version and MMA path (configs
tuned with an older Triton may need more or less today); barriers, the epilogue's layout-
conversion scratch when it does not reuse the pipeline buffers, and the small per-step scale
vectors of quantised kernels are left out.

A kernel launched with a config whose need exceeds the device's per-block limit fails with
Triton's `OutOfResources: out of resource: shared memory`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capgap.arch import ArchFacts

TRITON_DEFAULT_NUM_STAGES = 3  # triton.Config / the CUDA backend's default

# dtype tag in the config file name -> (A tile element bytes, B tile element bytes)
_OPERAND_BYTES: dict[str, tuple[float, float]] = {
    "fp8_w8a8": (1, 1),
    "fp8_w8a8_channelwise": (1, 1),
    "float8": (1, 1),
    "int8_w8a8": (1, 1),
    "int8_w8a16": (2, 1),
    "fp8_w8a16": (2, 1),
    "int4_w4a16": (2, 1),
    "bf16": (2, 2),
    "fp16": (2, 2),
    "float16": (2, 2),
    "bfloat16": (2, 2),
    "float32": (4, 4),
}
_DEFAULT_BYTES = (2.0, 2.0)  # no dtype part: the model's bf16/fp16


def operand_bytes(dtype: str | None) -> tuple[tuple[float, float], bool]:
    """Element sizes of the A and B tiles for a file name's dtype tag, and whether it is known."""
    if not dtype:
        return _DEFAULT_BYTES, True
    tag = dtype.removesuffix("_down")
    if tag in _OPERAND_BYTES:
        return _OPERAND_BYTES[tag], True
    return _DEFAULT_BYTES, False


def _int(entry: Mapping[str, Any], key: str) -> int | None:
    value = entry.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


ASYNC_MMA_MIN_M = 64  # wgmma / tcgen05 work on 64-row tiles; smaller BLOCK_SIZE_M uses mma.sync


def async_mma(arch: ArchFacts | None, block_m: int) -> bool:
    """Whether Triton feeds the tile to wgmma/tcgen05 (operands read from shared memory)."""
    return arch is None or ((arch.wgmma or arch.tcgen05) and block_m >= ASYNC_MMA_MIN_M)


def pipeline_buffers(num_stages: int, arch: ArchFacts | None, block_m: int = ASYNC_MMA_MIN_M) -> int:
    """How many copies of each operand tile Triton keeps (see the module docstring)."""
    if async_mma(arch, block_m):
        return num_stages
    return max(num_stages - 1, 1)


def estimate_bytes(
    entry: Mapping[str, Any],
    dtype: str | None = None,
    arch: ArchFacts | None = None,
    k_cap: int | None = None,
) -> int | None:
    """Shared memory (bytes) one config entry needs on `arch`, or None when it has no M/N/K tiles."""
    bm, bn, bk = (_int(entry, f"BLOCK_SIZE_{d}") for d in "MNK")
    if bm is None or bn is None or bk is None:
        return None
    if k_cap:
        bk = min(bk, k_cap)
    stages = _int(entry, "num_stages") or TRITON_DEFAULT_NUM_STAGES
    (a_bytes, b_bytes), _known = operand_bytes(dtype)
    need = pipeline_buffers(stages, arch, bm) * (bm * bk * a_bytes + bk * bn * b_bytes)
    if b_bytes < a_bytes and arch is not None and async_mma(arch, bm):
        need += bk * bn * b_bytes  # converted weights: one more B tile before the async MMA
    return int(need)


@dataclass(frozen=True)
class SmemNeed:
    """The largest need over a config file's entries (one entry per batch size M)."""

    bytes: int | None  # None: no entry has tile sizes (not a tile kernel config)
    batch: str | None  # the entry key (batch size M) that needs the most
    entries: int  # how many entries have tile sizes
    dtype_known: bool  # False: the dtype tag was not recognised, 2-byte operands assumed

    @property
    def kb(self) -> float | None:
        return None if self.bytes is None else self.bytes / 1024

    def fits(self, limit_kb: int) -> bool | None:
        """Whether every entry fits `limit_kb` KB per block; None when the need is unknown."""
        return None if self.bytes is None else self.bytes <= limit_kb * 1024


def file_need(
    data: object, dtype: str | None, arch: ArchFacts | None = None, k_cap: int | None = None
) -> SmemNeed:
    """The need on `arch` of a parsed config file: a mapping of batch size -> config entry."""
    _, known = operand_bytes(dtype)
    best: int | None = None
    best_key: str | None = None
    count = 0
    if isinstance(data, Mapping):
        for key, entry in data.items():
            if not isinstance(entry, Mapping):
                continue
            need = estimate_bytes(entry, dtype, arch, k_cap)
            if need is None:
                continue
            count += 1
            if best is None or need > best:
                best, best_key = need, str(key)
    return SmemNeed(best, best_key, count, known)
