"""Estimate the shared memory one block of an engine's Triton tile kernel needs for a tuned config.

The engines' fused-MoE and block-quantised GEMM kernels (SGLang, vLLM) are Triton loops over K:
each step loads an A tile [BLOCK_SIZE_M, BLOCK_SIZE_K] and a B tile [BLOCK_SIZE_K, BLOCK_SIZE_N]
and feeds both to `tl.dot`. Triton's software pipeliner stages those loads through shared memory
in `buffers` copies so that later loads overlap the current MMA:

    need = buffers * (BLOCK_SIZE_M * BLOCK_SIZE_K * a_bytes + BLOCK_SIZE_K * BLOCK_SIZE_N * b_bytes)
    buffers = num_stages            on wgmma/tcgen05 GPUs (9.0, 10.x) and when the arch is unknown
    buffers = max(num_stages-1, 1)  on mma.sync GPUs (8.x, 12.x)

a_bytes / b_bytes are the element sizes of the tiles as loaded (before any in-register
conversion): 2 for bf16/fp16 (no dtype in the file name), 1 for fp8/int8 (`fp8_w8a8`,
`int8_w8a8`), A 2 and B 1 for weight-only `int8_w8a16`/`int4_w4a16` (int4 weights are loaded as a
[BLOCK_K, BLOCK_N] uint8 tile, two rows per byte). An entry without `num_stages` runs with
Triton's CUDA default of 3.

Where the buffer counts come from: `benchmarks/configs_smem_vs_triton.py` compiles a kernel of
this loop shape offline with Triton and prints its `metadata.shared` beside this estimate. With
Triton 3.4 and 3.9 alike the mma.sync targets (sm_80, sm_89, sm_120) matched (num_stages - 1)
buffers exactly for bf16, fp8 and int8-weight tiles; sm_90 matched num_stages buffers for bf16,
while its wgmma path allocated less for fp8 and up to 12% more for int8 weights.
On an H200 (Triton 3.6, `benchmarks/configs_smem_on_device.py`, results committed) the estimate
equalled Triton's allocation for all 10 bf16 configs launched around the 227 KB limit, and
exactly the 3 over it failed with `out of resource: shared memory`. The same
budget shows in the engines: SGLang's low-shared-memory fp8 defaults (M=32, N=64, K=256,
4 stages; M=64, N=128, K=256, 2 stages) come to 96 KiB with num_stages buffers, just under the
99 KB a block may use on sm_89/sm_120.

Why it stays an estimate: the buffer count depends on the Triton version and MMA path; barriers,
the epilogue's layout-conversion scratch (when it does not reuse the pipeline buffers) and the
small per-step scale vectors of quantised kernels are left out. For an unknown arch the estimate
takes num_stages buffers, the upper end of what Triton allocated in these measurements except
sm_90 int8 weights.

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


def pipeline_buffers(num_stages: int, arch: ArchFacts | None) -> int:
    """How many copies of each operand tile Triton keeps (see the module docstring)."""
    if arch is None or arch.wgmma or arch.tcgen05:
        return num_stages
    return max(num_stages - 1, 1)


def estimate_bytes(
    entry: Mapping[str, Any], dtype: str | None = None, arch: ArchFacts | None = None
) -> int | None:
    """Shared memory (bytes) one config entry needs on `arch`, or None when it has no M/N/K tiles."""
    bm, bn, bk = (_int(entry, f"BLOCK_SIZE_{d}") for d in "MNK")
    if bm is None or bn is None or bk is None:
        return None
    stages = _int(entry, "num_stages") or TRITON_DEFAULT_NUM_STAGES
    (a_bytes, b_bytes), _known = operand_bytes(dtype)
    return int(pipeline_buffers(stages, arch) * (bm * bk * a_bytes + bk * bn * b_bytes))


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


def file_need(data: object, dtype: str | None, arch: ArchFacts | None = None) -> SmemNeed:
    """The need on `arch` of a parsed config file: a mapping of batch size -> config entry."""
    _, known = operand_bytes(dtype)
    best: int | None = None
    best_key: str | None = None
    count = 0
    if isinstance(data, Mapping):
        for key, entry in data.items():
            if not isinstance(entry, Mapping):
                continue
            need = estimate_bytes(entry, dtype, arch)
            if need is None:
                continue
            count += 1
            if best is None or need > best:
                best, best_key = need, str(key)
    return SmemNeed(best, best_key, count, known)
