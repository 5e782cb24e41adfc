"""The frozen description of one all-reduce sweep, shared by the launcher and the worker.

The launcher builds a `SweepSpec` from the command line, writes it as JSON, and the worker
(one process per GPU under torchrun) reads it back; nothing else crosses that boundary.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field

from capgap.errors import UsageError

NCCL = "nccl"  # torch.distributed.all_reduce through the process group (NCCL on GPUs, gloo on CPU)
ONE_SHOT = "one_shot"  # torch.ops.symm_mem.one_shot_all_reduce
TWO_SHOT = "two_shot"  # torch.ops.symm_mem.two_shot_all_reduce_ (in place)
TWO_SHOT_COPY = "two_shot_copy"  # what the engines run: copy into the symmetric buffer, two-shot, copy out
MULTIMEM = "multimem"  # torch.ops.symm_mem.multimem_all_reduce_: needs NVLink multicast
SYMM_BACKENDS = (ONE_SHOT, TWO_SHOT, TWO_SHOT_COPY, MULTIMEM)
ALL_BACKENDS = (NCCL, *SYMM_BACKENDS)
DEFAULT_BACKENDS = (NCCL, ONE_SHOT, TWO_SHOT, TWO_SHOT_COPY)

MODES = ("eager", "graph")
DTYPES = {"bf16": 2, "fp32": 4}  # symm_mem all-reduce supports these two (fp16 fails in torch 2.11)
DEFAULT_SIZES = "1K:256M"

_UNITS = {
    "": 1,
    "B": 1,
    "K": 1 << 10,
    "KB": 1 << 10,
    "KIB": 1 << 10,
    "M": 1 << 20,
    "MB": 1 << 20,
    "MIB": 1 << 20,
    "G": 1 << 30,
    "GB": 1 << 30,
    "GIB": 1 << 30,
}
_SIZE_RE = re.compile(r"^\s*(\d+)\s*([A-Za-z]*)\s*$")


def parse_size(text: str) -> int:
    """'4K' -> 4096, '256M' -> 268435456 (binary units; a plain number is bytes)."""
    m = _SIZE_RE.match(text)
    unit = m.group(2).upper() if m else ""
    if not m or unit not in _UNITS:
        raise UsageError(f"bad size {text!r}: expected a number with an optional K/M/G suffix, e.g. 64K")
    return int(m.group(1)) * _UNITS[unit]


def parse_sizes(text: str) -> tuple[int, ...]:
    """'1K:256M' -> every power of two from 1 KiB to 256 MiB; '4K,1M' -> exactly those sizes."""
    if ":" in text:
        lo_text, _, hi_text = text.partition(":")
        lo, hi = parse_size(lo_text), parse_size(hi_text)
        if lo <= 0 or hi < lo:
            raise UsageError(f"bad size range {text!r}: need 0 < start <= end")
        sizes, s = [], lo
        while s <= hi:
            sizes.append(s)
            s *= 2
        return tuple(sizes)
    sizes = tuple(sorted({parse_size(part) for part in text.split(",") if part.strip()}))
    if not sizes or sizes[0] <= 0:
        raise UsageError(f"bad sizes {text!r}: need at least one positive size")
    return sizes


def format_size(nbytes: int) -> str:
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return f"{nbytes}B"


@dataclass(frozen=True)
class SweepSpec:
    sizes: tuple[int, ...]
    dtype: str = "bf16"
    modes: tuple[str, ...] = MODES
    backends: tuple[str, ...] = DEFAULT_BACKENDS
    repeats: int = 20  # timed repeats per cell; the median over them is reported
    target_ms: float = 2.0  # each repeat runs enough back-to-back ops to last about this long
    max_iters: int = 200
    warmup: int = 5
    dist_backend: str = "nccl"  # gloo + cpu is the CI mode: same orchestration, no GPU
    device: str = "cuda"
    seed: int = 1234
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise UsageError(f"bad dtype {self.dtype!r}: choose one of {', '.join(DTYPES)}")
        for mode in self.modes:
            if mode not in MODES:
                raise UsageError(f"bad mode {mode!r}: choose eager, graph or both")
        for backend in self.backends:
            if backend not in ALL_BACKENDS:
                raise UsageError(f"bad backend {backend!r}: choose from {', '.join(ALL_BACKENDS)}")
        if self.device not in ("cuda", "cpu"):
            raise UsageError(f"bad device {self.device!r}: cuda or cpu")
        if self.repeats < 1 or self.max_iters < 1:
            raise UsageError("repeats and iterations must be at least 1")
        if not self.sizes or any(s % DTYPES[self.dtype] for s in self.sizes):
            raise UsageError(f"every size must be a positive multiple of the {self.dtype} element size")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> SweepSpec:
        data = dict(data)
        for key in ("sizes", "modes", "backends"):
            data[key] = tuple(data[key])
        return cls(**data)

    def dumps(self) -> str:
        return json.dumps(self.to_json())


def modes_from_option(mode: str) -> tuple[str, ...]:
    if mode == "both":
        return MODES
    if mode in MODES:
        return (mode,)
    raise UsageError(f"bad mode {mode!r}: choose eager, graph or both")
